/**
 * The certificate store: every issued certificate, its revocation state and its OCSP responses, in
 * CFSSL's certdb tables. One implementation per driver (SQLite, PostgreSQL); everything above the
 * store (issuing, certadd/certinfo, inventory, revocation, metrics, tidy) goes through this
 * interface and never through SQL.
 */
import type { StoreDriver } from './db-config.js';
import type {
  CertificateChange,
  CertificateCount,
  CertificateJsonPage,
  CertificatePage,
  CertificateRecord,
  CertificateRowInput,
  CertificateSummary,
  ChangeSubscription,
  CountExpiringOptions,
  ExpiringCount,
  ListCertificatesOptions,
  ListOcspResponsesOptions,
  OcspResponseInput,
  OcspResponsePage,
  OcspResponseRecord,
  RecordCertificateInput,
  TidyOptions,
  TidyResult,
  WatchChangesOptions,
} from './model.js';

/**
 * Every call may reject with `StoreUnavailableError` (503: database unreachable, retry later) or
 * `StoreError` (11000: any other database error, with the driver's text).
 */
export interface Store {
  /** `sqlite3` or `postgres`. */
  readonly driver: StoreDriver;

  /**
   * Record a certificate issuing just signed, with CFSSL's values (lifecycle spec §2.1): decimal
   * serial, lower-hex AKI, status `good`, Go's zero `revoked_at`, DNS SANs as JSON, CN, validity,
   * issue time, canonical PEM. Calls of one event-loop turn share one transaction; the promise
   * resolves once the row is committed, so a certificate is handed out only with its row.
   * @throws StoreError 11000 with the driver's text for a duplicate (serial, AKI).
   */
  recordCertificate(input: RecordCertificateInput): Promise<CertificateRecord>;

  /**
   * Insert a row with its values as given (certadd): serial, AKI and PEM text are not
   * canonicalised, as CFSSL stores them.
   * @throws StoreError 11000 for a duplicate key; RecordInsertError 11100 if no row was written.
   */
  insertCertificate(row: CertificateRowInput): Promise<void>;

  /** The row with exactly this serial and AKI text (CFSSL `GetCertificate`), or `null`. */
  getCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null>;

  /**
   * certinfo's lookup: the AKI is lower-cased and colons are removed before the exact match
   * (lifecycle spec §3.6). A row written by CFSSL 1.2.0 (empty AKI) is found too when its PEM's
   * AKI is the one asked for.
   */
  findCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null>;

  /** A page of certificates, filtered, in expiry order; see {@link ListCertificatesOptions}. */
  listCertificates(options?: ListCertificatesOptions): Promise<CertificatePage>;

  /**
   * {@link listCertificates} without each row's PEM: the same rows in the same order, and the same
   * cursors (a page's `nextCursor` continues either listing). For listings that do not show the
   * certificate — the inventory's pages, CRLs, OCSP refreshes, `certs list` — since the PEM is most
   * of a row: reading, copying and sending it made a 100-row page ≈40 % dearer (docs/performance.md,
   * "Inventory pages without their PEMs").
   */
  listCertificateSummaries(options?: ListCertificatesOptions): Promise<CertificatePage<CertificateSummary>>;

  /**
   * A page of {@link listCertificates} as the JSON text of its rows in the inventory's form
   * (`certificateRecordJson`, each with its PEM only when `withPem`), made where the rows are read
   * (the SQLite store's thread): what `GET /api/v1/certsmith/certificates` answers. A server then
   * passes one string on instead of copying row objects between threads and processes and
   * serialising them again (docs/performance.md, "Inventory pages as JSON text"). Same rows, order
   * and cursors as the other listings.
   */
  listCertificatesJson(options?: ListCertificatesOptions, withPem?: boolean): Promise<CertificateJsonPage>;

  /**
   * Mark the row with exactly this serial and AKI text revoked: status `revoked`, the reason, and
   * the database's current time as `revoked_at` (CFSSL `RevokeCertificate`; revoking again
   * succeeds and overwrites both). Returns the updated row.
   * @throws CertificateNotFoundError 11200 when no row has that exact key.
   */
  revokeCertificate(serial: string, authorityKeyId: string, reason: number): Promise<CertificateRecord>;

  /**
   * Remove certificates that expired more than a buffer ago (default 72 h), with their OCSP
   * responses, and old change-feed entries. A revoked certificate is never removed before its
   * expiry (the buffer cannot be negative), so CRLs keep listing it while it could be used.
   */
  tidy(options?: TidyOptions): Promise<TidyResult>;

  /** Certificates by label and status (metrics). */
  countCertificates(): Promise<CertificateCount[]>;

  /** Unrevoked, unexpired certificates expiring within a window (default 30 days), by label (metrics). */
  countExpiring(options?: CountExpiringOptions): Promise<ExpiringCount[]>;

  /** Store or replace the OCSP response of (serial, AKI) in one statement. */
  upsertOcspResponse(response: OcspResponseInput): Promise<void>;

  /** The stored response for exactly this serial and AKI text (no expiry filter, as CFSSL), or `null`. */
  getOcspResponse(serial: string, authorityKeyId: string): Promise<OcspResponseRecord | null>;

  /** A page of stored responses (e.g. the unexpired ones for `ocspdump`, the stale ones for refresh). */
  listOcspResponses(options?: ListOcspResponsesOptions): Promise<OcspResponsePage>;

  /**
   * The next CRL number of an issuer (key it by the issuer's SKI hex): 1 the first time, then one
   * more on every call, atomically in the database, so every instance sharing it agrees.
   */
  nextCrlNumber(issuer: string): Promise<bigint>;

  /**
   * Learn about status changes (revocations) made by any writer of the database, within the poll
   * interval (PostgreSQL: at once through LISTEN/NOTIFY). `onChange` is called in change order.
   */
  watchChanges(onChange: (change: CertificateChange) => void | Promise<void>, options?: WatchChangesOptions): ChangeSubscription;

  /** Resolves when the database answers a trivial query; rejects with StoreUnavailableError otherwise. */
  ping(): Promise<void>;

  /** Wait for pending records, stop watches, close connections. */
  close(): Promise<void>;
}
