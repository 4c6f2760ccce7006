/**
 * Certificates assembled with the DER writer, field by field as RFC 5280 4.1 lays them out: the
 * TBSCertificate of a v3 certificate, and the signed structure around a signature. What goes into
 * the fields (CFSSL's profile rules, serials, validity) is the caller's: the issuer for issued
 * certificates, HSM administration and test CAs for self-signed ones.
 */
import { derBitString, derExplicit, derInteger, derSequence, derTime } from './der-writer.js';

/** The fields of a v3 TBSCertificate, already encoded where they are DER. */
export interface TbsCertificateFields {
  /** Serial number: a positive magnitude (at most 20 octets, RFC 5280 4.1.2.2) or a bigint. */
  serial: Uint8Array | bigint;
  /** DER AlgorithmIdentifier of the signature that will be made (also written around it). */
  signatureAlgorithm: Uint8Array;
  /** DER Name of the issuer. */
  issuer: Uint8Array;
  notBefore: Date;
  notAfter: Date;
  /** DER Name of the subject (`SEQUENCE {}` for an empty subject). */
  subject: Uint8Array;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  /** Encoded Extension SEQUENCEs in the order they are written; none → no `[3]` field. */
  extensions: readonly Uint8Array[];
}

const VERSION_3 = derExplicit(0, derInteger(2));

/** DER of a v3 TBSCertificate (RFC 5280 4.1.2). */
export function encodeTbsCertificate(fields: TbsCertificateFields): Uint8Array {
  const parts = [
    VERSION_3,
    derInteger(fields.serial),
    fields.signatureAlgorithm,
    fields.issuer,
    derSequence(derTime(fields.notBefore), derTime(fields.notAfter)),
    fields.subject,
    fields.spki,
  ];
  if (fields.extensions.length > 0) parts.push(derExplicit(3, derSequence(...fields.extensions)));
  return derSequence(...parts);
}

/**
 * A signed object around its to-be-signed DER — `Certificate` (RFC 5280 4.1.1.1) or
 * `CertificationRequest` (RFC 2986 4.2): `SEQUENCE { tbs, signatureAlgorithm, BIT STRING signature }`.
 */
export function encodeSigned(tbs: Uint8Array, signatureAlgorithm: Uint8Array, signature: Uint8Array): Uint8Array {
  return derSequence(tbs, signatureAlgorithm, derBitString(signature));
}
