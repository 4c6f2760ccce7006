/**
 * PKCS#10 CertificationRequestInfo (RFC 2986 4.1) laid out exactly as Go's
 * `x509.CreateCertificateRequest` writes it for CFSSL (behaviour doc 3.3–3.5): version 0, the
 * subject Name, the key's SubjectPublicKeyInfo, and `[0]` attributes holding one extensionRequest
 * (PKCS#9) with the SubjectAltName extension (non-critical, unless an extra extension already has
 * the SAN OID) followed by the extra extensions. The `[0]` field is present even when empty (Go
 * writes `A0 00`). Sign the result with the request's own key and wrap it with `encodeSigned`.
 *
 * The issuer builds newkey/newcert CSRs with this; HSM administration builds the CSR of a CA key
 * that lives on a token.
 */
import type { CertificateExtension } from './certificate-model.js';
import { derConstructed, derInteger, derOid, derSequence, derSetOf } from './der-writer.js';
import { derExtension } from './extensions.js';

const EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const SUBJECT_ALT_NAME = '2.5.29.17';

/** What goes into a CertificationRequestInfo. */
export interface CertificationRequestTemplate {
  /** Subject Name DER. */
  subject: Uint8Array;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  /** GeneralNames DER of the requested SANs, or null/absent for none. */
  subjectAltNames?: Uint8Array | null;
  /** Further requested extensions, in order. */
  extensions?: readonly CertificateExtension[];
}

/**
 * The extensions of the extensionRequest, in Go's order: SAN (non-critical in a CSR) unless an
 * extra extension already has the SAN OID, then the extras.
 */
export function certificationRequestExtensions(template: CertificationRequestTemplate): CertificateExtension[] {
  const extras = template.extensions ?? [];
  const out: CertificateExtension[] = [];
  const sanOverridden = extras.some((extension) => extension.oid === SUBJECT_ALT_NAME);
  if (template.subjectAltNames && !sanOverridden) out.push({ oid: SUBJECT_ALT_NAME, critical: false, value: template.subjectAltNames });
  for (const extension of extras) out.push(extension);
  return out;
}

/** DER of the CertificationRequestInfo of `template` (what the request's key signs). */
export function encodeCertificationRequestInfo(template: CertificationRequestTemplate): Uint8Array {
  const extensions = certificationRequestExtensions(template);
  const attributes: Uint8Array[] = [];
  if (extensions.length > 0) {
    const encoded = extensions.map((extension) => derExtension(extension.oid, extension.critical, extension.value));
    attributes.push(derSequence(derOid(EXTENSION_REQUEST), derSetOf([derSequence(...encoded)])));
  }
  return derSequence(derInteger(0), template.subject, template.spki, derConstructed(0xa0, attributes));
}
