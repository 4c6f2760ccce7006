/**
 * A certificate row as JSON, with the names of CFSSL's `certdb.CertificateRecord` JSON tags
 * (`serial_number`, `authority_key_identifier`, `ca_label`…): what the inventory endpoints answer
 * and `certsmith certs` prints, so both read alike. Times are RFC 3339 UTC as Go writes them
 * (`2027-11-25T23:22:00Z`); "not revoked" (Go's zero time) and times a row does not have are `null`.
 */
import type { CertificateSummary } from './model.js';

/** One stored certificate as JSON. */
export interface CertificateRecordJson {
  serial_number: string;
  authority_key_identifier: string;
  ca_label: string;
  status: string;
  reason: number;
  expiry: string | null;
  revoked_at: string | null;
  issued_at: string | null;
  not_before: string | null;
  common_name: string | null;
  sans: string[];
  metadata: unknown;
  /** Present when asked for. */
  pem?: string;
}

/** A time as Go's `time.Time.MarshalJSON` writes a UTC time: the fraction only when it is not zero. */
export function formatGoTime(date: Date): string {
  const iso = date.toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso.replace(/0+Z$/, 'Z');
}

const timeText = (date: Date | null): string | null => (date === null ? null : formatGoTime(date));

/** The JSON form of a row; with `pem` when one is given (a listing's rows come without theirs: `Store.listCertificateSummaries`). */
export function certificateRecordJson(record: CertificateSummary, pem?: string): CertificateRecordJson {
  return {
    serial_number: record.serial,
    authority_key_identifier: record.authorityKeyId,
    ca_label: record.label,
    status: record.status,
    reason: record.reason,
    expiry: timeText(record.expiry),
    revoked_at: timeText(record.revokedAt),
    issued_at: timeText(record.issuedAt),
    not_before: timeText(record.notBefore),
    common_name: record.commonName,
    sans: record.sans,
    metadata: record.metadata,
    ...(pem === undefined ? {} : { pem }),
  };
}
