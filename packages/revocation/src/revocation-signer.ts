/**
 * A {@link Signer} prepared for signing CRLs and OCSP responses: its certificate parsed once, the
 * algorithm chosen once (CFSSL's choice, lifecycle spec §4/§5.1) and its AlgorithmIdentifier encoded
 * once. Creating one checks that the signer can sign raw data at all, so a signer that cannot (a
 * remote multi-root CA offers only whole sign requests) is refused at start-up with a coded error
 * rather than at the first revocation. Any signer of the contract works: a local key, the PKCS#11
 * signer, a third-party plugin.
 */
import type { SignatureAlgorithm, Signer } from '@certsmith/signer-api';
import type { Certificate } from '@certsmith/x509-core';
import { computeSubjectKeyId, isCodedError, parseCertificate, signatureAlgorithmIdentifier, toHex } from '@certsmith/x509-core';

import { RevocationSignerError } from './errors.js';
import { chooseRevocationAlgorithm } from './signature-algorithm.js';

/** A signer ready to sign revocation data. */
export interface RevocationSigner {
  /** The underlying contract signer. */
  readonly signer: Signer;
  /** The signer's certificate (the CA for CRLs; the CA or a delegated responder for OCSP). */
  readonly certificate: Certificate;
  /** Signature algorithm every signature uses. */
  readonly algorithm: SignatureAlgorithm;
  /** DER AlgorithmIdentifier of {@link algorithm}. */
  readonly algorithmIdentifier: Uint8Array;
  /**
   * The certificate's key identifier: its SKI, or RFC 5280 method 1 (SHA-1 of the key bits) when the
   * certificate has none. As lower-case hex it is the `authority_key_identifier` of the rows this CA
   * issued (CFSSL store convention).
   */
  readonly keyIdentifier: Uint8Array;
  /** {@link keyIdentifier} as lower-case hex without separators. */
  readonly keyIdentifierHex: string;
  /** Sign `tbs` with {@link algorithm}; returns the signature BIT STRING contents. */
  sign(tbs: Uint8Array): Promise<Uint8Array>;
}

/** Options of {@link createRevocationSigner}. */
export interface RevocationSignerOptions {
  /** Use this algorithm instead of CFSSL's choice; it must be one the signer offers. */
  algorithm?: SignatureAlgorithm;
  /** Name used in error messages (the signer's label). */
  label?: string;
}

/**
 * Prepare `signer` for CRL and OCSP signing.
 *
 * @throws RevocationSignerError (2000) when the signer has no `sign` (whole-request signers), offers
 *   no algorithm for its key, or does not offer `options.algorithm`; the signer's own coded error
 *   (e.g. 2500) when its certificate cannot be fetched.
 */
export async function createRevocationSigner(signer: Signer, options: RevocationSignerOptions = {}): Promise<RevocationSigner> {
  const name = options.label === undefined ? 'the signer' : `signer "${options.label}"`;
  const sign = signer.sign;
  if (typeof sign !== 'function') {
    throw new RevocationSignerError(`${name} cannot sign CRLs or OCSP responses: it signs whole certificate requests only (a remote CA); revoke on the CA that holds the key`);
  }
  let certificate: Certificate;
  try {
    certificate = parseCertificate((await signer.getCertificate()).der);
  } catch (error) {
    if (isCodedError(error)) throw error;
    throw new RevocationSignerError(`${name} did not provide its certificate: ${(error as Error).message}`, { cause: error });
  }
  let algorithm: SignatureAlgorithm | null;
  if (options.algorithm !== undefined) {
    if (!signer.algorithms.includes(options.algorithm)) {
      throw new RevocationSignerError(`${name} does not offer ${options.algorithm} (it offers ${signer.algorithms.join(', ') || 'nothing'})`);
    }
    algorithm = options.algorithm;
  } else {
    algorithm = chooseRevocationAlgorithm(certificate.publicKey, signer.algorithms);
  }
  if (algorithm === null) {
    throw new RevocationSignerError(
      `${name} cannot sign CRLs or OCSP responses: no signature algorithm for its ${certificate.publicKey.algorithm} key among ${signer.algorithms.join(', ') || 'none'}`,
    );
  }
  const keyIdentifier = certificate.subjectKeyId && certificate.subjectKeyId.length > 0 ? certificate.subjectKeyId : computeSubjectKeyId(certificate.publicKey);
  const chosen = algorithm;
  return {
    signer,
    certificate,
    algorithm: chosen,
    algorithmIdentifier: signatureAlgorithmIdentifier(chosen),
    keyIdentifier,
    keyIdentifierHex: toHex(keyIdentifier).toLowerCase(),
    sign: (tbs) => sign.call(signer, tbs, chosen),
  };
}
