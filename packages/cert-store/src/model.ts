/**
 * The records the store reads and writes. They mirror CFSSL's `certdb.CertificateRecord` and
 * `certdb.OCSPRecord` (lifecycle spec §1.3) column for column, with JavaScript types: text columns
 * as strings exactly as stored, timestamps as `Date` (`null` for SQL NULL and for Go's zero time,
 * which CFSSL writes for "not revoked"), JSON columns parsed.
 */
import type { Certificate } from '@certsmith/x509-core';

/** Status values CFSSL uses: `good`, `revoked`, and `unknown` (only through certadd). */
export type CertificateStatus = 'good' | 'revoked' | 'unknown';

/**
 * One row of `certificates` without its PEM: what a listing that does not show the certificate reads
 * (`Store.listCertificateSummaries`; the PEM is most of a row).
 */
export interface CertificateSummary {
  /** `serial_number` as stored: decimal (`big.Int.String()`) for rows written by CFSSL and certsmith. */
  serial: string;
  /** `authority_key_identifier` as stored: lower-case hex without colons; `''` in rows written by CFSSL 1.2.0. */
  authorityKeyId: string;
  /** `ca_label`: the issuing label, `''` when none (SQL NULL is read as `''`). */
  label: string;
  /** `status` as stored (`good`, `revoked`, `unknown`). */
  status: string;
  /** `reason`: the RFC 5280 CRLReason code (0 when NULL). */
  reason: number;
  /** `expiry`: the certificate's notAfter. */
  expiry: Date | null;
  /** `revoked_at`; `null` when not revoked (Go's zero time or NULL). */
  revokedAt: Date | null;
  /** `issued_at` (migration 002): when the row was written; `null` for older rows. */
  issuedAt: Date | null;
  /** `not_before` (migration 002): the certificate's notBefore; `null` for older rows. */
  notBefore: Date | null;
  /** `metadata` (migration 002) parsed; `null` for JSON `null`, SQL NULL or text that is not JSON. */
  metadata: unknown;
  /** `sans` (migration 002): the string entries of the stored JSON array (CFSSL records DNS SANs only); `[]` otherwise. */
  sans: string[];
  /** `common_name` (migration 002): the subject CN; `null` when NULL. */
  commonName: string | null;
}

/** One row of `certificates`. */
export interface CertificateRecord extends CertificateSummary {
  /** `pem`: the certificate as one PEM block. */
  pem: string;
}

/**
 * A row to insert as given (certadd, imports): nothing is canonicalised — CFSSL stores the serial,
 * AKI and PEM text of a certadd request unchanged (lifecycle spec §3.5).
 */
export interface CertificateRowInput {
  serial: string;
  authorityKeyId: string;
  /** Defaults to `''`. */
  label?: string;
  status: string;
  /** Defaults to 0. */
  reason?: number;
  expiry: Date;
  /** `null`/absent writes Go's zero time, as CFSSL does for a certificate that is not revoked. */
  revokedAt?: Date | null;
  pem: string;
  /** `null`/absent writes Go's zero time, as CFSSL's certadd does for an absent time. */
  issuedAt?: Date | null;
  /** `null`/absent writes Go's zero time. */
  notBefore?: Date | null;
  /** Any JSON value; absent → `{}` (CFSSL's certadd default). */
  metadata?: unknown;
  /** Any JSON value; absent → `{}` (CFSSL's certadd default, even for `sans`). */
  sans?: unknown;
  /** `null`/absent → SQL NULL (certadd). */
  commonName?: string | null;
}

/** What issuing records: the certificate it signed and the label it signed with. */
export interface RecordCertificateInput {
  /**
   * The signed certificate: one PEM `CERTIFICATE` block, DER, already parsed with
   * `@certsmith/x509-core`'s `parseCertificate` (the caller has read it already: not parsed twice),
   * or the row's fields from {@link IssuedCertificateFields} (read where the certificate was signed).
   */
  certificate: string | Uint8Array | Certificate | IssuedCertificateFields;
  /** The sign request's label (`ca_label`); `''` when absent. */
  label?: string;
  /** The request's metadata map (CFSSL: always `null`, no API path sets it). */
  metadata?: Record<string, unknown> | null;
  /**
   * The certificate's first OCSP response (status good), stored in the same transaction as the row:
   * a certificate is then never recorded without its response, and issuance costs one write, not two.
   */
  ocspResponse?: IssuedOcspResponse;
}

/**
 * What a certificate's row takes from the certificate, as plain data (it may cross threads): made by
 * `issuedCertificateFields` where the certificate already is — the worker that signed it — and given
 * to `recordCertificate` instead of the certificate, so the thread that records does not read it again.
 */
export interface IssuedCertificateFields {
  readonly kind: 'issued-certificate-fields';
  /** Decimal, as Go's `big.Int.String()`. */
  readonly serial: string;
  /** Lower-case hex of the AKI, `''` when the certificate has none. */
  readonly authorityKeyId: string;
  /** notAfter. */
  readonly expiry: Date;
  readonly notBefore: Date;
  /** The certificate as one PEM block. */
  readonly pem: string;
  /** The DNS SANs as Go's JSON (`null` when there are none). */
  readonly sansJson: string;
  /** The subject's common name, `null` when it has none. */
  readonly commonName: string | null;
}

/** An OCSP response signed for a certificate before it is recorded ({@link RecordCertificateInput.ocspResponse}). */
export interface IssuedOcspResponse {
  /** The DER OCSPResponse. */
  body: Uint8Array;
  /** When it stops being fresh (its nextUpdate). */
  expiry: Date;
}

/** Filters and paging of {@link Store.listCertificates}. Filters combine with AND. */
export interface ListCertificatesOptions {
  /** `ca_label` equals. */
  label?: string;
  /** `status` equals. */
  status?: string;
  /** The subject CN or a DNS SAN equals this (exact text). */
  name?: string;
  /** `authority_key_identifier` equals (exact text). */
  authorityKeyId?: string;
  /** Only certificates whose expiry is later than this. */
  expiresAfter?: Date;
  /** Only certificates whose expiry is at or before this. */
  expiresBefore?: Date;
  /** Page size, 1–1000; default 100. */
  limit?: number;
  /** The `nextCursor` of the previous page; the filters must be the same. */
  cursor?: string;
}

/** One page of certificates, ordered by expiry, then serial, then AKI (stable under inserts). */
export interface CertificatePage<Row extends CertificateSummary = CertificateRecord> {
  certificates: Row[];
  /** Opaque; `null` on the last page. */
  nextCursor: string | null;
}

/** A page of certificates as JSON text (`Store.listCertificatesJson`). */
export interface CertificateJsonPage {
  /** JSON text of the page's rows: an array of `CertificateRecordJson` (the inventory's form). */
  certificatesJson: string;
  /** Opaque; `null` on the last page (the same cursors as `listCertificates`). */
  nextCursor: string | null;
}

/** One row of `ocsp_responses`. */
export interface OcspResponseRecord {
  serial: string;
  authorityKeyId: string;
  /** The DER OCSPResponse. */
  body: Uint8Array;
  /** When the stored response stops being fresh (CFSSL's responder ignores it; refresh uses it). */
  expiry: Date | null;
}

/** A response to store: (serial, AKI) are the exact text of the certificate's row. */
export interface OcspResponseInput {
  serial: string;
  authorityKeyId: string;
  body: Uint8Array;
  expiry: Date;
}

/** Filters and paging of {@link Store.listOcspResponses}, ordered by serial then AKI. */
export interface ListOcspResponsesOptions {
  /** Only rows whose expiry is later than this (`ocspdump`: now). */
  expiresAfter?: Date;
  /** Only rows whose expiry is at or before this (refresh: now + margin). */
  expiresBefore?: Date;
  authorityKeyId?: string;
  /** Page size, 1–1000; default 100. */
  limit?: number;
  cursor?: string;
}

/** One page of OCSP responses. */
export interface OcspResponsePage {
  responses: OcspResponseRecord[];
  nextCursor: string | null;
}

/** Count of certificates by label and status (for metrics). */
export interface CertificateCount {
  label: string;
  status: string;
  count: number;
}

/** Count of unrevoked, unexpired certificates that expire within a window, by label (for metrics). */
export interface ExpiringCount {
  label: string;
  count: number;
}

/** Options of {@link Store.countExpiring}. */
export interface CountExpiringOptions {
  /** Window length; default 30 days. */
  withinMs?: number;
  /** Default: now. */
  now?: Date;
}

/** Options of {@link Store.tidy}. */
export interface TidyOptions {
  /** Certificates whose expiry is older than now − buffer are removed; default 72 h, never negative. */
  bufferMs?: number;
  /** Change-feed entries older than this are removed; default 24 h. */
  changeRetentionMs?: number;
  /** Default: now. */
  now?: Date;
  /** Rows deleted per transaction (short locks on a busy store); default 1000. */
  batchSize?: number;
}

/** What {@link Store.tidy} removed. */
export interface TidyResult {
  certificates: number;
  ocspResponses: number;
  changes: number;
}

/**
 * A certificate whose status, reason or revocation time changed (a revoke by any certsmith
 * instance, by `cfssl revoke` on the same database, or a certadd of a revoked certificate).
 * Recorded by database triggers, so writers that are not certsmith are seen too.
 */
export interface CertificateChange {
  /** Increasing sequence number of the change. */
  id: number;
  serial: string;
  authorityKeyId: string;
  label: string;
  status: string;
  reason: number;
  revokedAt: Date | null;
  /** When the database recorded the change. */
  changedAt: Date | null;
}

/** Options of {@link Store.watchChanges}. */
export interface WatchChangesOptions {
  /**
   * How often to look for changes. PostgreSQL: a safety net behind LISTEN/NOTIFY (default 5000 ms);
   * SQLite: the only mechanism (default 1000 ms).
   */
  pollIntervalMs?: number;
  /** Deliver changes after this id; default: the newest change when watching starts. */
  afterId?: number;
  /** Called when polling fails (the watch keeps trying). */
  onError?: (error: Error) => void;
}

/** A running {@link Store.watchChanges}. */
export interface ChangeSubscription {
  /** Stop watching; resolves when the last delivery has finished. */
  close(): Promise<void>;
}
