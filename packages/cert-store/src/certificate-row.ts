/**
 * The values CFSSL's local signer writes for a certificate it issued (`signer/local/local.go:Sign`,
 * lifecycle spec §2.1), computed from the certificate with `@certsmith/x509-core`.
 */
import { certificateToPem, commonName, decodePemBlock, parseCertificate, toHex, CertificateDecodeError } from '@certsmith/x509-core';
import type { Certificate, CertificateStoreFields } from '@certsmith/x509-core';
import { goJsonMarshal } from './go-json.js';
import type { CertificateRowInput, IssuedCertificateFields, IssuedOcspResponse, RecordCertificateInput } from './model.js';

/** A `certificates` row ready to write; JSON columns as their text, times as `Date` (`null` = Go's zero time). */
export interface CertificateRow {
  serial: string;
  authorityKeyId: string;
  label: string;
  status: string;
  reason: number;
  expiry: Date;
  revokedAt: Date | null;
  pem: string;
  issuedAt: Date | null;
  notBefore: Date | null;
  metadataJson: string;
  sansJson: string;
  commonName: string | null;
  /** The certificate's first OCSP response, written in the row's transaction (issuing only). */
  ocspResponse?: IssuedOcspResponse;
}

/**
 * A serial number as Go's `big.Int.String()` prints the certificate's serial: decimal, no leading
 * zeros, `-` for the (invalid but parseable) negative ones.
 */
export function serialToDecimal(serialNumberHex: string): string {
  if (serialNumberHex === '') return '0';
  const unsigned = BigInt(`0x${serialNumberHex}`);
  const negative = Number.parseInt(serialNumberHex.slice(0, 2), 16) >= 0x80;
  return (negative ? unsigned - (1n << BigInt(serialNumberHex.length * 4)) : unsigned).toString();
}

/** CFSSL's AKI text: lower-case hex of the keyIdentifier, no separators; `''` when the certificate has none. */
export function authorityKeyIdHex(certificate: Certificate): string {
  return certificate.authorityKeyId === null ? '' : toHex(certificate.authorityKeyId);
}

/** certinfo's normalisation of an AKI given by a client (lifecycle spec §3.6): lower case, colons removed. */
export function normaliseAuthorityKeyId(text: string): string {
  return text.toLowerCase().replaceAll(':', '');
}

/** Parse the one certificate of a PEM block or DER; a certificate already parsed is taken as it is. */
export function parseRecordedCertificate(certificate: string | Uint8Array | Certificate): Certificate {
  if (certificate instanceof Uint8Array) return parseCertificate(certificate);
  if (typeof certificate !== 'string') return certificate;
  const match = decodePemBlock(certificate);
  if (match === null) throw new CertificateDecodeError();
  return parseCertificate(match.block.bytes);
}

/** Characters JSON.stringify and Go's HTML-safe escaping both leave alone: a host name made of them is written as it is. */
const PLAIN_NAME = /^[A-Za-z0-9.*_-]*$/;

/**
 * The `sans` column: Go's JSON of the DNS names, `null` when there are none (Go marshals a nil
 * slice as null; lifecycle spec §2.1). Host names — every certificate has some — are written
 * directly instead of through `goJsonMarshal` (the same text; docs/performance.md, "Recording at
 * issuance: the hook's own work").
 */
export function dnsNamesJson(dns: readonly string[]): string {
  if (dns.length === 0) return 'null';
  for (const name of dns) if (!PLAIN_NAME.test(name)) return goJsonMarshal(dns);
  return `["${dns.join('","')}"]`;
}

/** True for row fields read where the certificate was signed ({@link issuedCertificateFields}), as opposed to a certificate. */
export function isIssuedCertificateFields(certificate: RecordCertificateInput['certificate']): certificate is IssuedCertificateFields {
  return typeof certificate === 'object' && !(certificate instanceof Uint8Array) && (certificate as Partial<IssuedCertificateFields>).kind === 'issued-certificate-fields';
}

/** The values of a certificate's row that come from the certificate (see {@link IssuedCertificateFields}). */
export function issuedCertificateFields(certificate: string | Uint8Array | Certificate): IssuedCertificateFields {
  const parsed = parseRecordedCertificate(certificate);
  const dns = parsed.subjectAltNames.dns;
  return {
    kind: 'issued-certificate-fields',
    serial: serialToDecimal(parsed.serialNumberHex),
    authorityKeyId: authorityKeyIdHex(parsed),
    expiry: parsed.notAfter,
    notBefore: parsed.notBefore,
    pem: certificateToPem(parsed.der),
    sansJson: dnsNamesJson(dns),
    commonName: commonName(parsed.subject),
  };
}

/**
 * {@link issuedCertificateFields} of a certificate this process has just signed, for the hook that
 * records it: the same values, from what `readCertificateStoreFields` read of its DER (five fields,
 * not the whole certificate: docs/performance.md, "Recording at issuance: the hook's own work") and
 * the PEM the issuer already encoded. Unlike {@link issuedCertificateFields} nothing checks the
 * contents the reader skips, which the issuer wrote itself.
 *
 * @param read `readCertificateStoreFields(der)`
 * @param pem the certificate's PEM as `certificateToPem(der)` writes it
 */
export function signedCertificateFields(read: CertificateStoreFields, pem: string): IssuedCertificateFields {
  const dns = read.subjectAltNames.dns;
  return {
    kind: 'issued-certificate-fields',
    serial: serialToDecimal(toHex(read.serialNumber)),
    authorityKeyId: read.authorityKeyId === null ? '' : toHex(read.authorityKeyId),
    expiry: read.notAfter,
    notBefore: read.notBefore,
    pem,
    sansJson: dnsNamesJson(dns),
    commonName: read.commonName,
  };
}

/** The row the local signer writes for a certificate it issued (status `good`, reason 0, not revoked). */
export function issuedCertificateRow(input: RecordCertificateInput, now: Date): CertificateRow {
  const fields = isIssuedCertificateFields(input.certificate) ? input.certificate : issuedCertificateFields(input.certificate);
  return {
    serial: fields.serial,
    authorityKeyId: fields.authorityKeyId,
    label: input.label ?? '',
    status: 'good',
    reason: 0,
    expiry: fields.expiry,
    revokedAt: null,
    pem: fields.pem,
    issuedAt: now,
    notBefore: fields.notBefore,
    // CFSSL's issuance always writes `null` (no API path sets metadata): no JSON writer for it.
    metadataJson: input.metadata === undefined || input.metadata === null ? 'null' : goJsonMarshal(input.metadata),
    sansJson: fields.sansJson,
    commonName: fields.commonName,
    ...(input.ocspResponse === undefined ? {} : { ocspResponse: input.ocspResponse }),
  };
}

/** A certadd row as given: nothing canonicalised; absent JSON columns → `{}`, absent label → `''` (lifecycle spec §3.5). */
export function givenCertificateRow(input: CertificateRowInput): CertificateRow {
  return {
    serial: input.serial,
    authorityKeyId: input.authorityKeyId,
    label: input.label ?? '',
    status: input.status,
    reason: input.reason ?? 0,
    expiry: input.expiry,
    revokedAt: input.revokedAt ?? null,
    pem: input.pem,
    issuedAt: input.issuedAt ?? null,
    notBefore: input.notBefore ?? null,
    metadataJson: input.metadata === undefined ? '{}' : goJsonMarshal(input.metadata),
    sansJson: input.sans === undefined ? '{}' : goJsonMarshal(input.sans),
    commonName: input.commonName ?? null,
  };
}
