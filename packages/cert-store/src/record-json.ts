/**
 * A certificate row as JSON, with the names of CFSSL's `certdb.CertificateRecord` JSON tags
 * (`serial_number`, `authority_key_identifier`, `ca_label`…): what the inventory endpoints answer
 * and `certsmith certs` prints, so both read alike. Times are RFC 3339 UTC as Go writes them
 * (`2027-11-25T23:22:00Z`); "not revoked" (Go's zero time) and times a row does not have are `null`.
 */
import type { CertificateJsonPage, CertificatePage, CertificateSummary } from './model.js';

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

/** `'00'`…`'99'`. */
const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => (n < 10 ? `0${n}` : String(n)));

/**
 * A time as Go's `time.Time.MarshalJSON` writes a UTC time: the fraction only when it is not zero.
 * Built from the fields for years 0–9999: `toISOString` formats through V8's `snprintf`, ≈30 µs of
 * a 100-row inventory page's four times a row (docs/performance.md, "Inventory pages as JSON text").
 */
export function formatGoTime(date: Date): string {
  const year = date.getUTCFullYear();
  // NaN (an invalid date) fails the test too and keeps toISOString's RangeError.
  if (!(year >= 0 && year <= 9999)) return formatGoTimeByIso(date);
  const ms = date.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : ms % 100 === 0 ? `.${ms / 100}` : ms % 10 === 0 ? `.${TWO_DIGITS[ms / 10]}` : `.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}`;
  const yyyy = year >= 1000 ? String(year) : `${TWO_DIGITS[Math.floor(year / 100)]}${TWO_DIGITS[year % 100]}`;
  return (
    `${yyyy}-${TWO_DIGITS[date.getUTCMonth() + 1]}-${TWO_DIGITS[date.getUTCDate()]}` +
    `T${TWO_DIGITS[date.getUTCHours()]}:${TWO_DIGITS[date.getUTCMinutes()]}:${TWO_DIGITS[date.getUTCSeconds()]}${fraction}Z`
  );
}

/** {@link formatGoTime} cut from `toISOString`: every year it can write. */
export function formatGoTimeByIso(date: Date): string {
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

/**
 * A listing's page with its rows as the JSON text of their {@link certificateRecordJson} array, each
 * with the PEM `pemOf` gives it: made where the rows are read (the SQLite store's thread), so that
 * the server sends one string on instead of copying row objects between threads and processes and
 * serialising them again (`Store.listCertificatesJson`).
 */
export function certificateJsonPage<Row extends CertificateSummary>(page: CertificatePage<Row>, pemOf?: (row: Row) => string): CertificateJsonPage {
  return { certificatesJson: JSON.stringify(page.certificates.map((row) => certificateRecordJson(row, pemOf?.(row)))), nextCursor: page.nextCursor };
}
