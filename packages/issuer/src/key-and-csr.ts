/**
 * Key and CSR generation from a CFSSL certificate request (cfssl `csr.Generator.ProcessRequest`,
 * behaviour doc 3.3–3.5, 3.9): the step newkey is made of and newcert starts with. It keeps the
 * CSR's facts (with the CSR's own subject and SAN encodings) so a newcert that signs the CSR needs
 * neither to re-parse it nor to re-encode them.
 */
import type { SignatureAlgorithm } from '@certsmith/signer-api';
import type { CertificateExtension, SubjectAttributes } from '@certsmith/x509-core';
import {
  DerEncodeError,
  DerReader,
  STANDARD_ATTRIBUTE_OIDS,
  derExtension,
  encodeSubject,
  encodeSubjectAltNames,
  isEmptySanList,
  readPublicKeyInfo,
  sansFromHosts,
  subjectAttributeList,
  subjectFromNames,
} from '@certsmith/x509-core';

import type { CertificateRequest } from './certificate-request.js';
import type { CsrFacts } from './certificate-template.js';
import type { CsrTemplate, SelfSigningKey, SignedCsr } from './csr.js';
import { createCsr, csrExtensions } from './csr.js';
import { CsrRequestError } from './errors.js';
import { delegationUsageExtension } from './extensions.js';
import type { ExtensionSpec } from './extensions.js';
import { decodeGo, goBytes } from './go-json.js';
import { generateKey, resolveKeySpec } from './key-generation.js';
import type { GeneratedKey, KeySpec } from './key-generation.js';
import type { Sums } from './sums.js';
import { computeSums } from './sums.js';

/** Result of {@link generateKeyAndCsr} (newkey, behaviour doc 3.9). */
export interface KeyAndCsrResult {
  /** Private key PEM (CFSSL format), trailing newline. */
  privateKeyPem: string;
  /** `CERTIFICATE REQUEST` PEM, trailing newline. */
  csrPem: string;
  csrDer: Uint8Array;
  sums: { certificate_request: Sums };
  /**
   * The CSR's facts as the signer needs them (with the CSR's own subject and SAN encodings), so a
   * newcert that signs this CSR needs neither to re-parse it nor to re-encode them. Plain data.
   */
  facts: CsrFacts;
}

/** Options of {@link generateKeyAndCsr}. */
export interface KeyGenerationOptions {
  /**
   * Where key pairs come from (default: {@link generateKey}, asynchronous node:crypto). A server can
   * plug in a pool of pre-generated keys; benchmarks use it to time issuance without key generation.
   * Must return a fresh key matching `spec`.
   */
  keySource?: (spec: KeySpec) => Promise<GeneratedKey>;
}

/** CFSSL `helpers.SignerAlgo` for a freshly generated key (the CSR's signature algorithm). */
function csrAlgorithm(spec: KeySpec): SignatureAlgorithm {
  switch (spec.algorithm) {
    case 'RSA':
      return spec.bits >= 4096 ? 'RSA-SHA512' : spec.bits >= 3072 ? 'RSA-SHA384' : 'RSA-SHA256';
    case 'ECDSA':
      return spec.bits === 521 ? 'ECDSA-SHA512' : spec.bits === 384 ? 'ECDSA-SHA384' : 'ECDSA-SHA256';
    case 'Ed25519':
      return 'Ed25519';
  }
}

function requestExtensions(request: CertificateRequest): ExtensionSpec[] {
  const extensions: ExtensionSpec[] = [];
  if (request.delegation_enabled) extensions.push(delegationUsageExtension());
  for (const extension of request.extensions ?? []) {
    const oid = (extension.id ?? []).join('.');
    const value = extension.value instanceof Uint8Array ? extension.value : decodeBase64Value(extension.value);
    try {
      // x509-core refuses what DER cannot carry (OID arcs, value not one DER element…): 9300 before key generation, as CFSSL's csr.Generate.
      derExtension(oid, extension.critical === true, value);
    } catch (cause) {
      if (cause instanceof DerEncodeError) throw new CsrRequestError(cause.message, { cause });
      throw cause;
    }
    // Parsers (certsmith's, Go's) refuse a request with the same extension twice.
    if (extensions.some((seen) => seen.oid === oid)) throw new CsrRequestError(`duplicate extension ${oid}`);
    extensions.push({ oid, critical: extension.critical === true, value });
  }
  return extensions;
}

function decodeBase64Value(value: unknown): Uint8Array {
  return decodeGo(value, goBytes, null, { structName: 'Extension', path: ['extensions', 'Value'] }) as Uint8Array ?? new Uint8Array();
}

/** True when re-reading the encoded subject (Go `FillFromRDNSequence`) gives back the same subject. */
function isRereadStable(subject: SubjectAttributes): boolean {
  return subject.extra.every((attribute) => !STANDARD_ATTRIBUTE_OIDS.has(attribute.oid));
}

interface GeneratedRequest {
  privateKeyPem: string;
  csrPem: string;
  csrDer: Uint8Array;
  facts: CsrFacts;
}

/** Key + CSR, keeping the facts the signer needs so newcert does not re-parse its own CSR. */
async function generateRequest(request: CertificateRequest, options: KeyGenerationOptions): Promise<GeneratedRequest> {
  // Validate everything cheap before spending time on key generation (CFSSL's error precedence is
  // kept: key request errors are reported before subject/extension errors).
  const spec = resolveKeySpec(request.key);
  const subject = subjectFromNames(request.CN, request.names, request.serialnumber);
  const subjectDer = encodeSubject(subject);
  const sans = sansFromHosts(request.hosts);
  const sanDer = isEmptySanList(sans) ? undefined : encodeSubjectAltNames(sans);
  const extras = requestExtensions(request);
  const key = await (options.keySource ?? generateKey)(spec);
  const template: CsrTemplate = { subjectDer, spki: key.spki, sans, extensions: extras, sanDer };
  let csr: SignedCsr;
  try {
    csr = await createCsr(template, key.sign !== undefined ? (key as SelfSigningKey) : key.privateKey, csrAlgorithm(spec));
  } finally {
    // The key has served: its one signature is made and its PEM is in hand.
    key.release?.();
  }
  const reader = new DerReader(key.spki);
  const publicKey = readPublicKeyInfo(key.spki, reader.expect(0x30, 'SubjectPublicKeyInfo'), reader);
  const extensions: CertificateExtension[] = csrExtensions(template).map(({ oid, critical, value }) => ({ oid, critical, value }));
  return {
    privateKeyPem: key.privateKeyPem,
    csrPem: csr.pem,
    csrDer: csr.der,
    facts: {
      subjectAttributes: subjectAttributeList(subject),
      publicKey,
      sans,
      extensions,
      // The certificate re-encodes the subject as Go re-reads it from the CSR; that is the same DER
      // unless an OID entry uses a standard attribute type (then the type moves to its standard slot).
      precomputed: { subject: isRereadStable(subject) ? { attributes: subject, der: subjectDer } : undefined, sanDer },
    },
  };
}

/**
 * newkey: generate a key and a CSR for `request` (behaviour doc 3.3–3.5, 3.9). Errors: 2400 key
 * request (`RSA key is too weak`, `RSA key size too large`, `invalid curve`, `invalid algorithm`),
 * 9300 subject/extension problems (`invalid OID part abc`). `request.ca` is not checked here: use
 * {@link decodeCertificateRequest} on raw bodies.
 */
export async function generateKeyAndCsr(request: CertificateRequest, options: KeyGenerationOptions = {}): Promise<KeyAndCsrResult> {
  const generated = await generateRequest(request, options);
  return {
    privateKeyPem: generated.privateKeyPem,
    csrPem: generated.csrPem,
    csrDer: generated.csrDer,
    sums: { certificate_request: computeSums(generated.csrDer) },
    facts: generated.facts,
  };
}
