/**
 * CFSSL's certinfo JSON (`certinfo/certinfo.go:Certificate`, `Name`, `ParseCertificate`) from a parsed
 * certificate: the certinfo view of the same facts `certificate-facts.ts` gives the bundle JSON.
 * Field names, order and omissions follow Go's struct tags (`omitempty` on the name fields, `sans`
 * and `serial_number`; `authority_key_id`, `subject_key_id`, `sigalg` and the times always present).
 */
import type { Certificate, DistinguishedName } from './certificate-model.js';
import { formatExpiry, signatureString } from './certificate-facts.js';
import { certificateToPem } from './pem.js';

/** A name as certinfo prints it (`certinfo.Name`). Repeated attributes are joined with `,`. */
export interface CertinfoName {
  common_name?: string;
  serial_number?: string;
  country?: string;
  organization?: string;
  organizational_unit?: string;
  locality?: string;
  province?: string;
  street_address?: string;
  postal_code?: string;
  /** Every attribute value of the name in DER order (Go `pkix.Name.Names`). */
  names?: string[];
}

/** The `result` of `POST /api/v1/cfssl/certinfo`. */
export interface CertinfoResult {
  subject: CertinfoName;
  issuer: CertinfoName;
  /** Serial number in decimal (Go `big.Int.String`, negative serials keep their sign). */
  serial_number?: string;
  /** DNS names, then IP addresses (CFSSL lists no e-mail or URI SANs here). */
  sans?: string[];
  /** RFC 3339, UTC (Go `time.Time` JSON). */
  not_before: string;
  not_after: string;
  /** CFSSL's signature algorithm name (`helpers.SignatureString`), e.g. `ECDSAWithSHA256`. */
  sigalg: string;
  /** Upper-case hex bytes separated by `:`, `""` when absent. */
  authority_key_id: string;
  subject_key_id: string;
  /** The certificate re-encoded as PEM, with a trailing newline. */
  pem: string;
}

/** Attribute OIDs Go's `pkix.Name` has fields for, in certinfo's key order. */
const NAME_FIELDS: ReadonlyArray<readonly [oid: string, key: Exclude<keyof CertinfoName, 'names'>, multi: boolean]> = [
  ['2.5.4.3', 'common_name', false],
  ['2.5.4.5', 'serial_number', false],
  ['2.5.4.6', 'country', true],
  ['2.5.4.10', 'organization', true],
  ['2.5.4.11', 'organizational_unit', true],
  ['2.5.4.7', 'locality', true],
  ['2.5.4.8', 'province', true],
  ['2.5.4.9', 'street_address', true],
  ['2.5.4.17', 'postal_code', true],
];

/** certinfo's view of a distinguished name (`certinfo.ParseName` over Go's `FillFromRDNSequence`). */
export function toCertinfoName(name: DistinguishedName): CertinfoName {
  const attributes = name.rdns.flat();
  const result: CertinfoName = {};
  for (const [oid, key, multi] of NAME_FIELDS) {
    const values = attributes.filter((attribute) => attribute.oid === oid).map((attribute) => attribute.value);
    // Go keeps the last CommonName/SerialNumber and appends the multi-valued ones; empty is omitted.
    const value = multi ? values.join(',') : (values.at(-1) ?? '');
    if (value !== '') result[key] = value;
  }
  if (attributes.length > 0) result.names = attributes.map((attribute) => attribute.value);
  return result;
}

/** Build the certinfo result for `certificate`. */
export function toCertinfoResult(certificate: Certificate): CertinfoResult {
  // CFSSL: `cert.DNSNames` followed by `cert.IPAddresses`; e-mail and URI SANs are not listed.
  const sans = certificate.subjectAltNames;
  const allSans = [...sans.dns, ...sans.ip];
  const result: CertinfoResult = {
    subject: toCertinfoName(certificate.subject),
    issuer: toCertinfoName(certificate.issuer),
    serial_number: serialToDecimal(certificate.serialNumberHex),
    not_before: formatExpiry(certificate.notBefore),
    not_after: formatExpiry(certificate.notAfter),
    sigalg: signatureString(certificate),
    authority_key_id: formatKeyId(certificate.authorityKeyId),
    subject_key_id: formatKeyId(certificate.subjectKeyId),
    pem: certificateToPem(certificate.der),
  };
  // Insert `sans` after `serial_number` to keep CFSSL's key order; omitted when empty (omitempty).
  if (allSans.length === 0) return result;
  const { subject, issuer, serial_number, ...rest } = result;
  return { subject, issuer, serial_number, sans: allSans, ...rest };
}

/** CFSSL `formatKeyID`: `%02X` per byte joined with `:`; `""` for a missing identifier. */
export function formatKeyId(id: Uint8Array | null): string {
  if (id === null) return '';
  return Array.from(id, (byte) => byte.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

/** Decimal text of a DER INTEGER given as the hex of its content bytes (two's complement). */
export function serialToDecimal(hex: string): string {
  if (hex === '') return '0';
  let value = BigInt(`0x${hex}`);
  // The top bit of the first content byte is the sign (X.690 8.3.3).
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) value -= 1n << BigInt(hex.length * 4);
  return value.toString(10);
}
