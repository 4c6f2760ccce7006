/**
 * PKCS#10 certificate requests (RFC 2986) for freshly generated keys, as Go's
 * `x509.CreateCertificateRequest` makes them for CFSSL (behaviour doc 3.3–3.5): the
 * CertificationRequestInfo from x509-core's builder (subject, SubjectPublicKeyInfo, an
 * extensionRequest with the SAN extension, if any, then the extra extensions), signed by the new
 * key with CFSSL's hash.
 */
import { KeyObject } from 'node:crypto';

import type { SignatureAlgorithm } from '@certsmith/signer-api';
import { signWithKeyObject } from '@certsmith/signer-api';
import type { CertificateExtension, CertificationRequestTemplate, SanList } from '@certsmith/x509-core';
import {
  certificationRequestExtensions,
  encodeCertificationRequestInfo as encodeRequestInfo,
  encodePem,
  encodeSigned,
  encodeSubjectAltNames,
  isEmptySanList,
  signatureAlgorithmIdentifier,
} from '@certsmith/x509-core';

import type { ExtensionSpec } from './extensions.js';

/** What goes into a CSR. */
export interface CsrTemplate {
  /** Subject Name DER. */
  subjectDer: Uint8Array;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  sans: SanList;
  /** Extra extensions in order (delegation usage, request `extensions`). */
  extensions: readonly ExtensionSpec[];
  /** `encodeSubjectAltNames(sans)` when already computed (newcert reuses it for the certificate). */
  sanDer?: Uint8Array;
}

function requestTemplate(template: CsrTemplate): CertificationRequestTemplate {
  const subjectAltNames = isEmptySanList(template.sans) ? null : (template.sanDer ?? encodeSubjectAltNames(template.sans));
  return { subject: template.subjectDer, spki: template.spki, subjectAltNames, extensions: template.extensions };
}

/** The extensions Go puts in the extensionRequest (SAN unless an extra has its OID, then the extras). */
export function csrExtensions(template: CsrTemplate): CertificateExtension[] {
  return certificationRequestExtensions(requestTemplate(template));
}

/** DER of the CertificationRequestInfo. */
export function encodeCertificationRequestInfo(template: CsrTemplate): Uint8Array {
  return encodeRequestInfo(requestTemplate(template));
}

/** A signed CSR. */
export interface SignedCsr {
  der: Uint8Array;
  /** `CERTIFICATE REQUEST` PEM with trailing newline. */
  pem: string;
}

/** A key that signs for itself (one held by the native addon, see `GeneratedKey.sign`). */
export interface SelfSigningKey {
  sign(data: Uint8Array, algorithm: SignatureAlgorithm): Uint8Array | Promise<Uint8Array>;
}

/** Build and sign a CSR with the request's own key. */
export async function createCsr(template: CsrTemplate, key: KeyObject | SelfSigningKey, algorithm: SignatureAlgorithm): Promise<SignedCsr> {
  const info = encodeCertificationRequestInfo(template);
  const signature = key instanceof KeyObject ? await signWithKeyObject(key, info, algorithm) : await key.sign(info, algorithm);
  const der = encodeSigned(info, signatureAlgorithmIdentifier(algorithm), signature);
  return { der, pem: encodePem('CERTIFICATE REQUEST', der) };
}
