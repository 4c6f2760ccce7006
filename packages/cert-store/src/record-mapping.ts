/** Turning stored rows into {@link CertificateRecord}s, the same way for both drivers. */
import type { CertificateRow } from './certificate-row.js';
import type { CertificateRecord, CertificateSummary } from './model.js';
import { parseStoredTime } from './timestamps.js';

/** A `certificates` row without its PEM as a driver reads it: text columns decoded, JSON columns as their text. */
export interface RawCertificateSummaryRow {
  serial: string;
  aki: string;
  label: string | null;
  status: string;
  reason: number | null;
  expiry: unknown;
  revoked_at: unknown;
  issued_at: unknown;
  not_before: unknown;
  metadata: string | null;
  sans: string | null;
  common_name: string | null;
}

/** A whole `certificates` row as a driver reads it. */
export interface RawCertificateRow extends RawCertificateSummaryRow {
  pem: string;
}

/** Parse stored JSON text; `null` for NULL and for text that is not JSON (rows written by other tools). */
export function parseStoredJson(text: string | null): unknown {
  if (text === null) return null;
  // The `metadata` of every issued row (no JSON.parse for it).
  if (text === 'null') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function sansOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

export function toCertificateSummary(raw: RawCertificateSummaryRow): CertificateSummary {
  return {
    serial: raw.serial,
    authorityKeyId: raw.aki,
    label: raw.label ?? '',
    status: raw.status,
    reason: raw.reason === null ? 0 : Number(raw.reason),
    expiry: parseStoredTime(raw.expiry),
    revokedAt: parseStoredTime(raw.revoked_at),
    issuedAt: parseStoredTime(raw.issued_at),
    notBefore: parseStoredTime(raw.not_before),
    metadata: parseStoredJson(raw.metadata),
    sans: sansOf(parseStoredJson(raw.sans)),
    commonName: raw.common_name,
  };
}

export function toCertificateRecord(raw: RawCertificateRow): CertificateRecord {
  return { ...toCertificateSummary(raw), pem: raw.pem };
}

/** The record of a row just written (no read-back needed). */
export function rowToRecord(row: CertificateRow): CertificateRecord {
  return {
    serial: row.serial,
    authorityKeyId: row.authorityKeyId,
    label: row.label,
    status: row.status,
    reason: row.reason,
    expiry: row.expiry,
    revokedAt: row.revokedAt,
    pem: row.pem,
    issuedAt: row.issuedAt,
    notBefore: row.notBefore,
    metadata: parseStoredJson(row.metadataJson),
    sans: sansOf(parseStoredJson(row.sansJson)),
    commonName: row.commonName,
  };
}
