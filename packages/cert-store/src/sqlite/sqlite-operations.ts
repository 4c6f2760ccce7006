/**
 * Every store operation as synchronous SQL on one better-sqlite3 connection. They run in the
 * store's SQLite thread (see docs/adr/0002-certificate-store.md: a commit with `synchronous=FULL`
 * waits for fsync, up to milliseconds, which must not stall the event loop), or inline when asked.
 *
 * Values are written as CFSSL's go-sqlite3 writes them (lifecycle spec §2.3): strings as TEXT even
 * in `blob` columns, times as go-sqlite3 text, `metadata`/`sans` as BLOBs of JSON, the OCSP body
 * as TEXT holding the raw DER. Reads accept TEXT or BLOB in every column.
 */
import type Database from 'better-sqlite3';
import { toErrorPayload } from '@certsmith/x509-core';
import type { ErrorPayload } from '@certsmith/x509-core';
import type { CertificateRow } from '../certificate-row.js';
import { decodeCursor, encodeCursor, filterFingerprint, pageSize } from '../cursor.js';
import { CertificateNotFoundError, RecordInsertError, StoreError, StoreUnavailableError } from '../errors.js';
import type {
  CertificateChange,
  CertificateCount,
  CertificateJsonPage,
  CertificatePage,
  CertificateRecord,
  CertificateSummary,
  ExpiringCount,
  ListCertificatesOptions,
  ListOcspResponsesOptions,
  OcspResponseInput,
  OcspResponsePage,
  OcspResponseRecord,
  TidyResult,
} from '../model.js';
import { toCertificateRecord, toCertificateSummary } from '../record-mapping.js';
import { certificateJsonPage } from '../record-json.js';
import type { RawCertificateRow, RawCertificateSummaryRow } from '../record-mapping.js';
import { formatSqliteTime, parseStoredTime } from '../timestamps.js';
import { checkpointWal } from './wal-checkpoint.js';
import { withWriteLock } from './write-lock-wait.js';

/** Every column of a row but the PEM, named as {@link RawCertificateSummaryRow}. */
const SUMMARY_COLUMNS = `CAST(serial_number AS TEXT) AS serial, CAST(authority_key_identifier AS TEXT) AS aki,
  CAST(ca_label AS TEXT) AS label, CAST(status AS TEXT) AS status, reason, expiry, revoked_at,
  issued_at, not_before, CAST(metadata AS TEXT) AS metadata, CAST(sans AS TEXT) AS sans, CAST(common_name AS TEXT) AS common_name`;
const CERTIFICATE_COLUMNS = `${SUMMARY_COLUMNS}, CAST(pem AS TEXT) AS pem`;

/**
 * A listed row from its values in {@link SUMMARY_COLUMNS}' order. Listings read rows as arrays
 * (`statement.raw()`): better-sqlite3 builds a row object through V8's C++ API, key by key, which
 * took most of a 100-row page's time in the store's thread (docs/performance.md, "Inventory pages
 * at 16 clients").
 */
function summaryRowOf(values: unknown[]): RawCertificateSummaryRow {
  return {
    serial: values[0] as string,
    aki: values[1] as string,
    label: values[2] as string | null,
    status: values[3] as string,
    reason: values[4] as number | null,
    expiry: values[5],
    revoked_at: values[6],
    issued_at: values[7],
    not_before: values[8],
    metadata: values[9] as string | null,
    sans: values[10] as string | null,
    common_name: values[11] as string | null,
  };
}

/** A listed row from its values in {@link CERTIFICATE_COLUMNS}' order: the PEM after the summary's. */
function certificateRowOf(values: unknown[]): RawCertificateRow {
  return { ...summaryRowOf(values), pem: values[12] as string };
}

const INSERT_CERTIFICATE = `INSERT INTO certificates (serial_number, authority_key_identifier, ca_label, status, reason, expiry,
  revoked_at, pem, issued_at, not_before, metadata, sans, common_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

/** Store or replace one OCSP response; the body as text, as CFSSL's SQLite rows hold it. */
const UPSERT_OCSP_RESPONSE = `INSERT INTO ocsp_responses (serial_number, authority_key_identifier, body, expiry) VALUES (?, ?, CAST(? AS TEXT), ?)
  ON CONFLICT (serial_number, authority_key_identifier) DO UPDATE SET body = excluded.body, expiry = excluded.expiry`;

/**
 * Run {@link UPSERT_OCSP_RESPONSE}. The body is bound as it is: better-sqlite3 binds any `Uint8Array`
 * (a view's own bytes) as a BLOB and SQLite copies it, so a `Buffer` copy of it first was one more
 * allocation per recorded certificate.
 */
function upsertOcsp(upsert: Database.Statement, serial: string, authorityKeyId: string, response: { body: Uint8Array; expiry: Date }): void {
  upsert.run(serial, authorityKeyId, response.body, formatSqliteTime(response.expiry));
}

/** SQLite result codes that mean "try again later" rather than "this request is wrong". */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|NOMEM|PROTOCOL|NOTADB|CORRUPT)/;

/** Map a better-sqlite3 error to the store's coded errors (CFSSL: 11000 with the driver's text). */
export function sqliteError(error: unknown): Error {
  if (error instanceof StoreError || error instanceof StoreUnavailableError || error instanceof CertificateNotFoundError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && UNAVAILABLE_CODES.test(code)) {
    return new StoreUnavailableError(`the certificate database is unavailable: ${message}`, { cause: error });
  }
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return new StoreError(message, { cause: error });
  return error instanceof Error ? error : new Error(message);
}

/** The outcome of one row of a batch. */
export type RowOutcome = { ok: true } | { ok: false; error: ErrorPayload };

/**
 * `metadata` of the rows issuing writes (CFSSL's request metadata is always `null`), as a BLOB. One
 * buffer for all of them: a bound BLOB is copied by SQLite (better-sqlite3 binds it `SQLITE_TRANSIENT`).
 */
const NULL_JSON_BLOB = Buffer.from('null', 'utf8');

/** A JSON column's text as the BLOB go-sqlite3 writes for a `[]byte`. */
function jsonBlob(json: string): Buffer {
  return json === 'null' ? NULL_JSON_BLOB : Buffer.from(json, 'utf8');
}

/**
 * Run {@link INSERT_CERTIFICATE} for `row`: the values as arguments of `run`, not an array spread
 * into it (once per recorded certificate).
 */
function insertRowValues(insert: Database.Statement, row: CertificateRow): Database.RunResult {
  return insert.run(
    row.serial,
    row.authorityKeyId,
    row.label,
    row.status,
    row.reason,
    formatSqliteTime(row.expiry),
    formatSqliteTime(row.revokedAt),
    row.pem,
    formatSqliteTime(row.issuedAt),
    formatSqliteTime(row.notBefore),
    jsonBlob(row.metadataJson),
    jsonBlob(row.sansJson),
    row.commonName,
  );
}

interface RawChange {
  id: number;
  serial: string;
  aki: string;
  label: string | null;
  status: string | null;
  reason: number | null;
  revoked_at: unknown;
  changed_at: unknown;
}

/** Synchronous store operations on one connection; every method throws the store's coded errors. */
export class SqliteOperations {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private busyTimeout: number | undefined;

  constructor(db: Database.Database) {
    this.db = db;
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** The connection's busy timeout (ms), as opened: how long {@link insertCertificates} waits for the write lock. */
  private busyTimeoutMs(): number {
    this.busyTimeout ??= Number(this.db.pragma('busy_timeout', { simple: true }));
    return this.busyTimeout;
  }

  private guarded<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw sqliteError(error);
    }
  }

  /**
   * Insert a batch of rows in one transaction. When the batch fails (a duplicate key), each row is
   * inserted on its own so only the offending rows fail, with the driver's text.
   */
  insertCertificates(rows: readonly CertificateRow[]): RowOutcome[] {
    const insertRow = this.rowInserter();
    const busyTimeoutMs = this.busyTimeoutMs();
    try {
      const insertAll = this.db.transaction(() => {
        for (const row of rows) insertRow(row);
      });
      withWriteLock(this.db, busyTimeoutMs, () => insertAll.immediate());
      return rows.map(() => ({ ok: true }));
    } catch (error) {
      const mapped = sqliteError(error);
      if (mapped instanceof StoreUnavailableError || rows.length === 1) return rows.map(() => ({ ok: false, error: toErrorPayload(mapped) }));
    }
    const insertOne = this.db.transaction(insertRow);
    return rows.map((row) => {
      try {
        withWriteLock(this.db, busyTimeoutMs, () => insertOne.immediate(row));
        return { ok: true };
      } catch (error) {
        return { ok: false, error: toErrorPayload(sqliteError(error)) };
      }
    });
  }

  /**
   * Insert a batch of rows in one transaction, only if this connection can take the write lock at
   * once: `committed`; `busy` — nothing written — when another connection holds it (with a zero busy
   * timeout); `failed` — nothing written — when a row or the commit fails. The caller then tries
   * again later or hands the batch to {@link insertCertificates} elsewhere, which waits for the lock
   * and reports each row's outcome (see `calling-thread-writer.ts`).
   */
  insertCertificatesAtOnce(rows: readonly CertificateRow[]): 'committed' | 'busy' | 'failed' {
    const insertRow = this.rowInserter();
    try {
      this.db
        .transaction(() => {
          for (const row of rows) insertRow(row);
        })
        .immediate();
      return 'committed';
    } catch (error) {
      // SQLITE_BUSY and its extended codes: `BEGIN IMMEDIATE` met another writer (the transaction
      // was never opened, or was rolled back whole).
      const code = (error as { code?: unknown }).code;
      return typeof code === 'string' && code.startsWith('SQLITE_BUSY') ? 'busy' : 'failed';
    }
  }

  /** A row and its first OCSP response (issuing), written together or not at all (within the caller's transaction). */
  private rowInserter(): (row: CertificateRow) => void {
    const insert = this.statement(INSERT_CERTIFICATE);
    const upsert = this.statement(UPSERT_OCSP_RESPONSE);
    return (row) => {
      if (insertRowValues(insert, row).changes !== 1) throw new RecordInsertError();
      if (row.ocspResponse !== undefined) upsertOcsp(upsert, row.serial, row.authorityKeyId, row.ocspResponse);
    };
  }

  /**
   * Copy the WAL into the database as far as no reader needs it, and let it restart, without waiting
   * for anyone (`wal-checkpoint.ts`): run here for the commits another connection made.
   */
  checkpoint(): void {
    this.guarded(() => checkpointWal(this.db));
  }

  getCertificate(serial: string, aki: string): CertificateRecord | null {
    return this.guarded(() => {
      const raw = this.statement(`SELECT ${CERTIFICATE_COLUMNS} FROM certificates WHERE serial_number = ? AND authority_key_identifier = ?`).get(
        serial,
        aki,
      ) as RawCertificateRow | undefined;
      return raw === undefined ? null : toCertificateRecord(raw);
    });
  }

  /** Rows of a serial written by CFSSL 1.2.0 (empty AKI), for certinfo's fallback. */
  certificatesWithEmptyAki(serial: string): CertificateRecord[] {
    return this.guarded(() =>
      (
        this.statement(`SELECT ${CERTIFICATE_COLUMNS} FROM certificates WHERE serial_number = ? AND authority_key_identifier = ''`).all(
          serial,
        ) as RawCertificateRow[]
      ).map(toCertificateRecord),
    );
  }

  listCertificates(options: ListCertificatesOptions): CertificatePage {
    return this.listRows(options, CERTIFICATE_COLUMNS, (values) => toCertificateRecord(certificateRowOf(values)));
  }

  /** {@link listCertificates} without the PEM column (`Store.listCertificateSummaries`). */
  listCertificateSummaries(options: ListCertificatesOptions): CertificatePage<CertificateSummary> {
    return this.listRows(options, SUMMARY_COLUMNS, (values) => toCertificateSummary(summaryRowOf(values)));
  }

  /** {@link listCertificates} as JSON text (`Store.listCertificatesJson`). */
  listCertificatesJson(options: ListCertificatesOptions, withPem: boolean): CertificateJsonPage {
    return withPem ? certificateJsonPage(this.listCertificates(options), (row) => row.pem) : certificateJsonPage(this.listCertificateSummaries(options));
  }

  /** A page of the listing's rows, read as `columns` (arrays of their values) and mapped by `toRow`. */
  private listRows<Row extends CertificateSummary>(
    options: ListCertificatesOptions,
    columns: string,
    toRow: (values: unknown[]) => Row,
  ): CertificatePage<Row> {
    const limit = pageSize(options.limit);
    const fingerprint = filterFingerprint({ ...options, limit: undefined, cursor: undefined });
    const where: string[] = [];
    const params: unknown[] = [];
    if (options.label !== undefined) (where.push('ca_label = ?'), params.push(options.label));
    if (options.status !== undefined) {
      where.push('status = ?');
      params.push(options.status);
      // Written out so SQLite can use the partial index of those rows (migration 6).
      if (options.status !== 'good') where.push(`status <> 'good'`);
    }
    if (options.authorityKeyId !== undefined) (where.push('authority_key_identifier = ?'), params.push(options.authorityKeyId));
    if (options.expiresAfter !== undefined) (where.push('expiry > ?'), params.push(formatSqliteTime(options.expiresAfter)));
    if (options.expiresBefore !== undefined) (where.push('expiry <= ?'), params.push(formatSqliteTime(options.expiresBefore)));
    if (options.name !== undefined) {
      where.push(
        '(serial_number, authority_key_identifier) IN (SELECT serial_number, authority_key_identifier FROM certsmith_certificate_names WHERE name = ?)',
      );
      params.push(options.name);
    }
    if (options.cursor !== undefined) {
      const [expiry, serial, aki] = decodeCursor(options.cursor, fingerprint, 3);
      if (expiry === null) {
        where.push('((expiry IS NULL AND (serial_number, authority_key_identifier) > (?, ?)) OR expiry IS NOT NULL)');
        params.push(serial, aki);
      } else {
        where.push('(expiry, serial_number, authority_key_identifier) > (?, ?, ?)');
        params.push(expiry, serial, aki);
      }
    }
    const sql =
      `SELECT ${columns} FROM certificates${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}` +
      ` ORDER BY expiry, serial_number, authority_key_identifier LIMIT ?`;
    return this.guarded(() => {
      // Only listings prepare this SQL, so its statement stays in raw mode.
      const rows = this.statement(sql).raw(true).all(...params, limit + 1) as unknown[][];
      const page = rows.slice(0, limit);
      const last = rows.length > limit && page.length > 0 ? summaryRowOf(page[page.length - 1]!) : undefined;
      const nextCursor = last === undefined ? null : encodeCursor([last.expiry === null ? null : String(last.expiry), last.serial, last.aki], fingerprint);
      return { certificates: page.map(toRow), nextCursor };
    });
  }

  /** CFSSL's `RevokeCertificate`: exact key, the database's CURRENT_TIMESTAMP, then the row as it is now. */
  revokeCertificate(serial: string, aki: string, reason: number): CertificateRecord {
    return this.guarded(() =>
      this.db.transaction(() => {
        const changes = this.statement(
          `UPDATE certificates SET status='revoked', revoked_at=CURRENT_TIMESTAMP, reason=? WHERE (serial_number = ? AND authority_key_identifier = ?)`,
        ).run(reason, serial, aki).changes;
        if (changes === 0) throw new CertificateNotFoundError();
        if (changes > 1) throw new StoreError(`${changes} rows are affected, should be 1 row`);
        return this.getCertificate(serial, aki)!;
      })(),
    );
  }

  tidy(cutoff: Date, changesCutoff: Date, batchSize: number): TidyResult {
    const result: TidyResult = { certificates: 0, ocspResponses: 0, changes: 0 };
    const select = this.statement(`SELECT serial_number AS s, authority_key_identifier AS a FROM certificates WHERE expiry < ? LIMIT ?`);
    const deleteOcsp = this.statement(`DELETE FROM ocsp_responses WHERE serial_number = ? AND authority_key_identifier = ?`);
    const deleteCertificate = this.statement(`DELETE FROM certificates WHERE serial_number = ? AND authority_key_identifier = ?`);
    const cutoffText = formatSqliteTime(cutoff);
    return this.guarded(() => {
      // Bounded: each round removes the rows it selected, so the loop ends when none are left.
      for (;;) {
        const removed = this.db.transaction(() => {
          const keys = select.all(cutoffText, batchSize) as Array<{ s: unknown; a: unknown }>;
          for (const { s, a } of keys) {
            result.ocspResponses += deleteOcsp.run(s, a).changes;
            result.certificates += deleteCertificate.run(s, a).changes;
          }
          return keys.length;
        })();
        if (removed < batchSize) break;
      }
      result.changes = this.statement(`DELETE FROM certsmith_certificate_changes WHERE changed_at < ?`).run(
        formatSqliteTime(changesCutoff),
      ).changes;
      return result;
    });
  }

  countCertificates(): CertificateCount[] {
    return this.guarded(() =>
      (
        this.statement(
          `SELECT CAST(ca_label AS TEXT) AS label, CAST(status AS TEXT) AS status, count(*) AS count FROM certificates GROUP BY ca_label, status`,
        ).all() as Array<{ label: string | null; status: string; count: number }>
      ).map((row) => ({ label: row.label ?? '', status: row.status, count: row.count })),
    ).reduce<CertificateCount[]>(mergeCounts, []);
  }

  countExpiring(from: Date, to: Date): ExpiringCount[] {
    return this.guarded(() =>
      (
        this.statement(
          `SELECT CAST(ca_label AS TEXT) AS label, count(*) AS count FROM certificates
           WHERE expiry > ? AND expiry <= ? AND status <> 'revoked' GROUP BY ca_label`,
        ).all(formatSqliteTime(from), formatSqliteTime(to)) as Array<{ label: string | null; count: number }>
      ).map((row) => ({ label: row.label ?? '', count: row.count })),
    );
  }

  upsertOcspResponse(response: OcspResponseInput): void {
    this.guarded(() => upsertOcsp(this.statement(UPSERT_OCSP_RESPONSE), response.serial, response.authorityKeyId, response));
  }

  getOcspResponse(serial: string, aki: string): OcspResponseRecord | null {
    return this.guarded(() => {
      const raw = this.statement(
        `SELECT CAST(serial_number AS TEXT) AS serial, CAST(authority_key_identifier AS TEXT) AS aki, CAST(body AS BLOB) AS body, expiry
         FROM ocsp_responses WHERE serial_number = ? AND authority_key_identifier = ?`,
      ).get(serial, aki) as RawOcspRow | undefined;
      return raw === undefined ? null : toOcspRecord(raw);
    });
  }

  listOcspResponses(options: ListOcspResponsesOptions): OcspResponsePage {
    const limit = pageSize(options.limit);
    const fingerprint = filterFingerprint({ ...options, limit: undefined, cursor: undefined });
    const where: string[] = [];
    const params: unknown[] = [];
    if (options.authorityKeyId !== undefined) (where.push('authority_key_identifier = ?'), params.push(options.authorityKeyId));
    if (options.expiresAfter !== undefined) (where.push('expiry > ?'), params.push(formatSqliteTime(options.expiresAfter)));
    if (options.expiresBefore !== undefined) (where.push('expiry <= ?'), params.push(formatSqliteTime(options.expiresBefore)));
    if (options.cursor !== undefined) {
      const [serial, aki] = decodeCursor(options.cursor, fingerprint, 2);
      where.push('(serial_number, authority_key_identifier) > (?, ?)');
      params.push(serial, aki);
    }
    const sql =
      `SELECT CAST(serial_number AS TEXT) AS serial, CAST(authority_key_identifier AS TEXT) AS aki, CAST(body AS BLOB) AS body, expiry FROM ocsp_responses${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}` +
      ` ORDER BY serial_number, authority_key_identifier LIMIT ?`;
    return this.guarded(() => {
      const rows = this.statement(sql).all(...params, limit + 1) as RawOcspRow[];
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        responses: page.map(toOcspRecord),
        nextCursor: rows.length > limit && last !== undefined ? encodeCursor([last.serial, last.aki], fingerprint) : null,
      };
    });
  }

  /** `issuer`'s CRL number, incremented in one statement. */
  nextCrlNumber(issuer: string, now: Date): bigint {
    return this.guarded(() => {
      const statement = this.statement(
        `INSERT INTO certsmith_crl_numbers (issuer, crl_number, updated_at) VALUES (?, 1, ?)
         ON CONFLICT (issuer) DO UPDATE SET crl_number = crl_number + 1, updated_at = excluded.updated_at RETURNING crl_number`,
      );
      const row = statement.safeIntegers(true).get(issuer, formatSqliteTime(now)) as { crl_number: bigint };
      return row.crl_number;
    });
  }

  latestChangeId(): number {
    return this.guarded(() => {
      const row = this.statement(`SELECT max(id) AS id FROM certsmith_certificate_changes`).get() as { id: number | null };
      return row.id ?? 0;
    });
  }

  changesAfter(id: number, limit: number): CertificateChange[] {
    return this.guarded(() =>
      (
        this.statement(
          `SELECT id, CAST(serial_number AS TEXT) AS serial, CAST(authority_key_identifier AS TEXT) AS aki, CAST(ca_label AS TEXT) AS label,
           CAST(status AS TEXT) AS status, reason, revoked_at, changed_at FROM certsmith_certificate_changes WHERE id > ? ORDER BY id LIMIT ?`,
        ).all(id, limit) as RawChange[]
      ).map((raw) => ({
        id: raw.id,
        serial: raw.serial,
        authorityKeyId: raw.aki,
        label: raw.label ?? '',
        status: raw.status ?? '',
        reason: raw.reason ?? 0,
        revokedAt: parseStoredTime(raw.revoked_at),
        changedAt: parseStoredTime(raw.changed_at),
      })),
    );
  }

  ping(): void {
    this.guarded(() => this.statement('SELECT 1').get());
  }
}

interface RawOcspRow {
  serial: string;
  aki: string;
  body: Uint8Array;
  expiry: unknown;
}

function toOcspRecord(raw: RawOcspRow): OcspResponseRecord {
  return { serial: raw.serial, authorityKeyId: raw.aki, body: new Uint8Array(raw.body), expiry: parseStoredTime(raw.expiry) };
}

/** `ca_label` NULL and `''` are one label; add their counts. */
function mergeCounts(merged: CertificateCount[], count: CertificateCount): CertificateCount[] {
  const same = merged.find((c) => c.label === count.label && c.status === count.status);
  if (same === undefined) merged.push(count);
  else same.count += count.count;
  return merged;
}
