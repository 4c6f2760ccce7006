/**
 * Per-signer values derived from the CA certificate once and reused for every certificate (the
 * issuer Name DER, the AuthorityKeyIdentifier extension, the signature algorithm and its
 * AlgorithmIdentifier, the CA's path-length limits). Re-deriving them per request would parse the
 * CA certificate each time; caching keeps issuance to encoding plus one signature.
 */
import type { SignatureAlgorithm, Signer, SignerCertificate } from '@certsmith/signer-api';
import { SignerUnavailableError } from '@certsmith/signer-api';
import type { Certificate } from '@certsmith/x509-core';
import { parseCertificate, signatureAlgorithmIdentifier } from '@certsmith/x509-core';

import type { ExtensionSpec } from './extensions.js';
import { authorityKeyIdExtension, encodeExtension } from './extensions.js';
import { chooseSignatureAlgorithm } from './signature-algorithms.js';

/** What the issuer knows about a signer's CA. */
export interface IssuerContext {
  readonly signer: Signer;
  readonly certificate: SignerCertificate;
  readonly caCertificate: Certificate;
  /** DER of the CA subject: the issuer Name of every certificate it signs. */
  readonly issuerNameDer: Uint8Array;
  /** Encoded AuthorityKeyIdentifier extension (the CA's SKI), `null` when the CA has no SKI. */
  readonly authorityKeyIdDer: Uint8Array | null;
  /** Signature algorithm chosen as CFSSL does from the CA key; `null` for `signRequest`-only signers. */
  readonly algorithm: SignatureAlgorithm | null;
  /** DER AlgorithmIdentifier of {@link IssuerContext.algorithm}. */
  readonly algorithmIdentifier: Uint8Array | null;
  /** Go's `MaxPathLen` of the CA: -1 unlimited, ≥0 the limit (0 only counts with {@link caMaxPathLenZero}). */
  readonly caMaxPathLen: number;
  readonly caMaxPathLenZero: boolean;
}

const contexts = new WeakMap<Signer, Promise<IssuerContext>>();

async function buildContext(signer: Signer): Promise<IssuerContext> {
  let certificate: SignerCertificate;
  try {
    certificate = await signer.getCertificate();
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== undefined) throw cause;
    throw new SignerUnavailableError(undefined, { cause });
  }
  const caCertificate = parseCertificate(certificate.der);
  const ski = caCertificate.subjectKeyId;
  const aki: ExtensionSpec | null = ski && ski.length > 0 ? authorityKeyIdExtension(ski) : null;
  const algorithm = typeof signer.sign === 'function' ? chooseSignatureAlgorithm(caCertificate.publicKey, signer.algorithms) : null;
  const constraints = caCertificate.basicConstraints;
  return {
    signer,
    certificate,
    caCertificate,
    issuerNameDer: caCertificate.subject.der,
    authorityKeyIdDer: aki ? encodeExtension(aki) : null,
    algorithm,
    algorithmIdentifier: algorithm ? signatureAlgorithmIdentifier(algorithm) : null,
    caMaxPathLen: constraints === null ? 0 : (constraints.pathLenConstraint ?? -1),
    caMaxPathLenZero: constraints !== null && constraints.pathLenConstraint === 0,
  };
}

/**
 * The cached {@link IssuerContext} of a signer (built on first use). A failure is not cached, so
 * a remote signer that was down is retried on the next request.
 */
export function getIssuerContext(signer: Signer): Promise<IssuerContext> {
  let context = contexts.get(signer);
  if (!context) {
    context = buildContext(signer);
    contexts.set(signer, context);
    context.catch(() => {
      if (contexts.get(signer) === context) contexts.delete(signer);
    });
  }
  return context;
}

/** Forget a signer's cached context (after the CA certificate was rotated). */
export function clearIssuerContext(signer: Signer): void {
  contexts.delete(signer);
}
