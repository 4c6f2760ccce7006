/**
 * PKCS#10 certificate requests (RFC 2986) built with the DER writer exactly as Go's
 * `x509.CreateCertificateRequest` lays them out for CFSSL (behaviour doc 3.3–3.5): version 0,
 * subject, the key's SubjectPublicKeyInfo, and an extensionRequest attribute holding the SAN
 * extension (if any) followed by the extra extensions; signed by the new key with CFSSL's hash.
 */
import { KeyObject } from 'node:crypto';

import type { SignatureAlgorithm } from '@certsmith/signer-api';
import { signWithKeyObject } from '@certsmith/signer-api';
import { derBitString, derConstructed, derInteger, derOid, derSequence, derSetOf, encodePem } from '@certsmith/x509-core';

import type { ExtensionSpec } from './extensions.js';
import { ExtensionOid, encodeExtension, subjectAltNameExtension } from './extensions.js';
import type { SanList } from './hosts.js';
import { encodeSubjectAltNames, isEmptySanList } from './hosts.js';
import { algorithmIdentifier } from './signature-algorithms.js';

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

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

/**
 * The extensions Go puts in the extensionRequest: SAN (non-critical in a CSR) unless an extra
 * extension already has the SAN OID, then the extras.
 */
export function csrExtensions(template: CsrTemplate): ExtensionSpec[] {
  const out: ExtensionSpec[] = [];
  const overridden = template.extensions.some((extension) => extension.oid === ExtensionOid.subjectAltName);
  if (!isEmptySanList(template.sans) && !overridden) {
    out.push(subjectAltNameExtension(template.sanDer ?? encodeSubjectAltNames(template.sans), false));
  }
  out.push(...template.extensions);
  return out;
}

/** DER of the CertificationRequestInfo. */
export function encodeCertificationRequestInfo(template: CsrTemplate): Uint8Array {
  const extensions = csrExtensions(template);
  const attributes: Uint8Array[] = [];
  if (extensions.length > 0) {
    attributes.push(derSequence(derOid(EXTENSION_REQUEST), derSetOf([derSequence(...extensions.map(encodeExtension))])));
  }
  // `[0] IMPLICIT SET OF Attribute` is present even when empty (RFC 2986 4.1, Go writes A0 00).
  return derSequence(derInteger(0), template.subjectDer, template.spki, derConstructed(0xa0, attributes));
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
  const der = derSequence(info, algorithmIdentifier(algorithm), derBitString(signature));
  return { der, pem: encodePem('CERTIFICATE REQUEST', der) };
}
