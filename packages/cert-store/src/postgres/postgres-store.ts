/**
 * The PostgreSQL implementation of {@link Store}, on a node-postgres pool (which replaces broken
 * connections by itself, so the store recovers when the server comes back). Values are written as
 * lib/pq writes CFSSL's: text in `bytea` columns as the raw UTF-8 bytes (never a `\x…` string),
 * `timestamptz` in UTC with Go's zero time for "not revoked", `jsonb` for `metadata`/`sans`
 * (lifecycle spec §2.3).
 */
import pg from 'pg';
import type { PoolClient, QueryResultRow } from 'pg';
import { givenCertificateRow, issuedCertificateRow } from '../certificate-row.js';
import type { CertificateRow } from '../certificate-row.js';
import { startChangeWatch } from '../change-watch.js';
import { ChangeWakeups, combineWakeups } from '../change-wakeups.js';
import { checkExpiryWindow, decodeCursor, encodeCursor, filterFingerprint, pageSize } from '../cursor.js';
import { CertificateNotFoundError, RecordInsertError, StoreClosedError, StoreError } from '../errors.js';
import { CHANGES_CHANNEL } from '../migrations/migrations.js';
import type { SchemaConnection } from '../migrations/schema-connection.js';
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
} from '../model.js';
import { rowToRecord, toCertificateRecord, toCertificateSummary } from '../record-mapping.js';
import { certificateJsonPage } from '../record-json.js';
import type { RawCertificateRow, RawCertificateSummaryRow } from '../record-mapping.js';
import { checkReason, expiringWindow, findWithFallback, tidyWindow } from '../store-helpers.js';
import type { Store } from '../store.js';
import { formatPostgresTime, parseStoredTime } from '../timestamps.js';
import { TurnBatcher } from '../turn-batcher.js';
import type { BatchOutcome } from '../turn-batcher.js';
import { postgresError } from './postgres-errors.js';

/** Record batches written at once (a quarter of the default pool, leaving connections for reads). */
const POSTGRES_BATCHES_IN_FLIGHT = 3;

const TIMESTAMPTZ_OID = 1184;
const TIMESTAMP_OID = 1114;

/**
 * Timestamps stay text (the session is UTC): the store parses them itself, and list cursors keep
 * the exact stored value (microseconds) so keyset pages neither skip nor repeat rows.
 */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ_OID || oid === TIMESTAMP_OID ? (value: string) => value : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/** Advisory lock key of migrations (the bytes of "certsmit"). */
const MIGRATION_LOCK_KEY = '7162256626880964980';

/** Pool and timeout settings. */
export interface PostgresStoreOptions {
  /** Connections in the pool; default 10. */
  maxConnections?: number;
  /** How long to wait for a connection before answering "unavailable"; default 5000 ms. */
  connectionTimeoutMs?: number;
  /** A query that takes longer fails as unavailable; default 10000 ms. */
  queryTimeoutMs?: number;
  /** Told about errors of idle connections and of the LISTEN connection (they are retried). */
  onBackgroundError?: (error: Error) => void;
  now?: () => Date;
  maxBatch?: number;
}

/** Settings added to every connection: UTC session, a recognisable application name. */
export function sessionConfig(base: pg.ClientConfig, options: PostgresStoreOptions = {}): pg.ClientConfig {
  return {
    application_name: 'certsmith',
    ...base,
    options: '-c TimeZone=UTC',
    types,
    connectionTimeoutMillis: base.connectionTimeoutMillis ?? options.connectionTimeoutMs ?? 5000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
  };
}

/** Every column of a row but the PEM, named as {@link PgCertificateSummaryRow}. */
const SUMMARY_COLUMNS = `serial_number AS serial, authority_key_identifier AS aki, ca_label AS label, status, reason, expiry,
  revoked_at, issued_at, not_before, metadata::text AS metadata, sans::text AS sans, common_name`;
const CERTIFICATE_COLUMNS = `${SUMMARY_COLUMNS}, pem`;

interface PgCertificateSummaryRow {
  serial: Buffer;
  aki: Buffer;
  label: Buffer | null;
  status: Buffer;
  reason: number | null;
  expiry: string | null;
  revoked_at: string | null;
  issued_at: string | null;
  not_before: string | null;
  metadata: string | null;
  sans: string | null;
  common_name: string | null;
}

interface PgCertificateRow extends PgCertificateSummaryRow {
  pem: Buffer;
}

/** bytea parameter holding a string's UTF-8 bytes, as lib/pq sends Go strings. */
function bytes(text: string): Buffer {
  return Buffer.from(text, 'utf8');
}

function text(value: Buffer | null): string | null {
  return value === null ? null : value.toString('utf8');
}

function rawSummaryRow(row: PgCertificateSummaryRow): RawCertificateSummaryRow {
  return {
    serial: text(row.serial)!,
    aki: text(row.aki)!,
    label: text(row.label),
    status: text(row.status)!,
    reason: row.reason,
    expiry: row.expiry,
    revoked_at: row.revoked_at,
    issued_at: row.issued_at,
    not_before: row.not_before,
    metadata: row.metadata,
    sans: row.sans,
    common_name: row.common_name,
  };
}

function rawRow(row: PgCertificateRow): RawCertificateRow {
  return { ...rawSummaryRow(row), pem: text(row.pem)! };
}

function rowValues(row: CertificateRow): unknown[] {
  return [
    bytes(row.serial),
    bytes(row.authorityKeyId),
    bytes(row.label),
    bytes(row.status),
    row.reason,
    formatPostgresTime(row.expiry),
    formatPostgresTime(row.revokedAt),
    bytes(row.pem),
    formatPostgresTime(row.issuedAt),
    formatPostgresTime(row.notBefore),
    row.metadataJson,
    row.sansJson,
    row.commonName,
  ];
}

function insertStatement(count: number): string {
  const tuples: string[] = [];
  for (let r = 0; r < count; r += 1) {
    const base = r * 13;
    tuples.push(`(${Array.from({ length: 13 }, (_, i) => `$${base + i + 1}`).join(', ')})`);
  }
  return `INSERT INTO certificates (serial_number, authority_key_identifier, ca_label, status, reason, expiry, revoked_at, pem,
    issued_at, not_before, metadata, sans, common_name) VALUES ${tuples.join(', ')}`;
}

/**
 * The one statement that writes `rows` and, for the rows that carry one, their first OCSP
 * response (issuing): a data-modifying WITH is one statement, so the certificates and their
 * responses commit together or not at all, in one round trip. Its single result row holds the
 * number of certificates written.
 */
function recordQuery(rows: readonly CertificateRow[]): { text: string; values: unknown[] } {
  const values = rows.flatMap(rowValues);
  const responses = rows.filter((row) => row.ocspResponse !== undefined);
  const tuples: string[] = [];
  for (const row of responses) {
    const base = values.length;
    tuples.push(`($${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}::timestamptz)`);
    values.push(bytes(row.serial), bytes(row.authorityKeyId), Buffer.from(row.ocspResponse!.body), formatPostgresTime(row.ocspResponse!.expiry));
  }
  const text =
    `WITH inserted AS (${insertStatement(rows.length)} RETURNING 1), ` +
    `responses AS (INSERT INTO ocsp_responses (serial_number, authority_key_identifier, body, expiry) VALUES ${tuples.join(', ')} ` +
    'ON CONFLICT (serial_number, authority_key_identifier) DO UPDATE SET body = excluded.body, expiry = excluded.expiry) ' +
    'SELECT count(*)::int AS written FROM inserted';
  return { text, values };
}

interface PgOcspRow {
  serial: Buffer;
  aki: Buffer;
  body: Buffer;
  expiry: string | null;
}

function toOcspRecord(row: PgOcspRow): OcspResponseRecord {
  return { serial: text(row.serial)!, authorityKeyId: text(row.aki)!, body: new Uint8Array(row.body), expiry: parseStoredTime(row.expiry) };
}

/** A schema connection on one client: `exclusive` is a transaction holding the migration advisory lock. */
export function postgresSchemaConnection(client: pg.Client): SchemaConnection {
  return {
    driver: 'postgres',
    async exec(sql) {
      await client.query(sql);
    },
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      return (await client.query(sql, [...params])).rows as Row[];
    },
    async exclusive<T>(work: () => Promise<T>): Promise<T> {
      await client.query('BEGIN');
      try {
        await client.query(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`);
        const result = await work();
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    },
    async close() {
      await client.end();
    },
  };
}

/** One LISTEN connection shared by a store's watches; reconnects with backoff when it breaks. */
class ChangeListener {
  private client: pg.Client | null = null;
  private readonly wakers = new Set<() => void>();
  private closed = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private backoffMs = 250;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly onError: (error: Error) => void,
  ) {}

  subscribe(wake: () => void): () => void {
    this.wakers.add(wake);
    if (this.client === null && this.retryTimer === null) void this.connect();
    return () => this.wakers.delete(wake);
  }

  private async connect(): Promise<void> {
    this.retryTimer = null;
    if (this.closed) return;
    const client = new pg.Client(this.config);
    client.on('notification', () => {
      for (const wake of this.wakers) wake();
    });
    client.on('error', (error) => this.broken(client, error));
    client.on('end', () => this.broken(client, null));
    this.client = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      this.backoffMs = 250;
      // Changes made while the connection was down are picked up by polling at once.
      for (const wake of this.wakers) wake();
    } catch (error) {
      this.broken(client, error as Error);
    }
  }

  private broken(client: pg.Client, error: Error | null): void {
    if (this.client !== client) return;
    this.client = null;
    client.removeAllListeners('end');
    void client.end().catch(() => undefined);
    if (this.closed) return;
    if (error !== null) this.onError(postgresError(error));
    this.retryTimer = setTimeout(() => void this.connect(), this.backoffMs);
    this.retryTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, 5000);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = null;
    if (client !== null) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
    }
  }
}

export class PostgresStore implements Store {
  readonly driver = 'postgres' as const;
  private readonly pool: pg.Pool;
  private readonly batcher: TurnBatcher<CertificateRow, CertificateRecord>;
  private readonly listener: ChangeListener;
  private readonly watches = new Set<ChangeSubscription>();
  /**
   * This store's own status changes wake its watches when the commit returns, without waiting for
   * the NOTIFY to come back through the LISTEN connection (a second round trip, and none at all
   * while that connection is reconnecting).
   */
  private readonly wakeups = new ChangeWakeups();
  private readonly now: () => Date;
  private closed = false;

  constructor(config: pg.ClientConfig, options: PostgresStoreOptions = {}) {
    const session = sessionConfig(config, options);
    const onError = options.onBackgroundError ?? (() => undefined);
    this.pool = new pg.Pool({ ...session, max: options.maxConnections ?? 10, idleTimeoutMillis: 30_000 });
    // An idle connection that breaks (server restart) is dropped by the pool; without a listener the process would crash.
    this.pool.on('error', (error) => onError(postgresError(error)));
    this.listener = new ChangeListener(session, onError);
    this.now = options.now ?? (() => new Date());
    // Several batches at once, each on its own pooled connection (PostgreSQL commits them in
    // parallel); beyond that, rows wait and join the next batch.
    this.batcher = new TurnBatcher(async (rows) => await this.writeRows(rows), options.maxBatch, POSTGRES_BATCHES_IN_FLIGHT);
  }

  private async query<Row extends QueryResultRow>(sql: string, params: unknown[] = []): Promise<pg.QueryResult<Row>> {
    if (this.closed) throw new StoreClosedError();
    try {
      return await this.pool.query<Row>(sql, params);
    } catch (error) {
      throw postgresError(error);
    }
  }

  private async transaction<T>(work: (client: PoolClient) => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreClosedError();
    let client: PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw postgresError(error);
    }
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      throw postgresError(error);
    } finally {
      client.release(broken);
    }
  }

  /** One multi-row INSERT (atomic); on a duplicate key the rows are inserted one by one so only the duplicates fail. */
  private async writeRows(rows: CertificateRow[]): Promise<Array<BatchOutcome<CertificateRecord>>> {
    try {
      await this.recordRows(rows);
      return rows.map((row) => ({ ok: true, value: rowToRecord(row) }));
    } catch (error) {
      if (!(error instanceof StoreError) || rows.length === 1) throw error;
    }
    // One by one, in call order, so the first of two identical records wins (as two CFSSL inserts would).
    const outcomes: Array<BatchOutcome<CertificateRecord>> = [];
    for (const row of rows) {
      try {
        await this.insertRow(row);
        outcomes.push({ ok: true, value: rowToRecord(row) });
      } catch (error) {
        outcomes.push({ ok: false, error: error as Error });
      }
    }
    return outcomes;
  }

  private async insertRow(row: CertificateRow): Promise<void> {
    await this.recordRows([row]);
  }

  /** Write rows (and their responses) in one statement; fewer rows written than given → 11100. */
  private async recordRows(rows: readonly CertificateRow[]): Promise<void> {
    if (rows.every((row) => row.ocspResponse === undefined)) {
      const result = await this.query(insertStatement(rows.length), rows.flatMap(rowValues));
      if (result.rowCount !== rows.length) throw new RecordInsertError();
      return;
    }
    const { text, values } = recordQuery(rows);
    const result = await this.query<{ written: number }>(text, values);
    if (result.rows[0]?.written !== rows.length) throw new RecordInsertError();
  }

  async recordCertificate(input: RecordCertificateInput): Promise<CertificateRecord> {
    return await this.batcher.add(issuedCertificateRow(input, this.now()));
  }

  async insertCertificate(row: CertificateRowInput): Promise<void> {
    const given = givenCertificateRow(row);
    await this.insertRow(given);
    // Only a row inserted with another status than `good` is in the change log (the trigger).
    if (given.status !== 'good') this.wakeups.wake();
  }

  async getCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null> {
    const { rows } = await this.query<PgCertificateRow>(
      `SELECT ${CERTIFICATE_COLUMNS} FROM certificates WHERE (serial_number = $1 AND authority_key_identifier = $2)`,
      [bytes(serial), bytes(authorityKeyId)],
    );
    return rows[0] === undefined ? null : toCertificateRecord(rawRow(rows[0]));
  }

  async findCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null> {
    return await findWithFallback(
      serial,
      authorityKeyId,
      (s, a) => this.getCertificate(s, a),
      async (s) =>
        (
          await this.query<PgCertificateRow>(
            `SELECT ${CERTIFICATE_COLUMNS} FROM certificates WHERE serial_number = $1 AND authority_key_identifier = ''::bytea`,
            [bytes(s)],
          )
        ).rows.map((row) => toCertificateRecord(rawRow(row))),
    );
  }

  async listCertificates(options: ListCertificatesOptions = {}): Promise<CertificatePage> {
    return await this.listRows(options, CERTIFICATE_COLUMNS, (row: PgCertificateRow) => toCertificateRecord(rawRow(row)));
  }

  async listCertificateSummaries(options: ListCertificatesOptions = {}): Promise<CertificatePage<CertificateSummary>> {
    return await this.listRows(options, SUMMARY_COLUMNS, (row: PgCertificateSummaryRow) => toCertificateSummary(rawSummaryRow(row)));
  }

  async listCertificatesJson(options: ListCertificatesOptions = {}, withPem = false): Promise<CertificateJsonPage> {
    return withPem ? certificateJsonPage(await this.listCertificates(options), (row) => row.pem) : certificateJsonPage(await this.listCertificateSummaries(options));
  }

  /** A page of the listing's rows, read as `columns` and mapped by `toRow`. */
  private async listRows<Raw extends PgCertificateSummaryRow, Row extends CertificateSummary>(
    options: ListCertificatesOptions,
    columns: string,
    toRow: (raw: Raw) => Row,
  ): Promise<CertificatePage<Row>> {
    checkExpiryWindow(options);
    const limit = pageSize(options.limit);
    const fingerprint = filterFingerprint({ ...options, limit: undefined, cursor: undefined });
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (options.label !== undefined) where.push(`ca_label = ${param(bytes(options.label))}`);
    if (options.status !== undefined) {
      where.push(`status = ${param(bytes(options.status))}`);
      // Written out so the planner can use the partial index of those rows (migration 6).
      if (options.status !== 'good') where.push(`status <> 'good'::bytea`);
    }
    if (options.authorityKeyId !== undefined) where.push(`authority_key_identifier = ${param(bytes(options.authorityKeyId))}`);
    if (options.expiresAfter !== undefined) where.push(`expiry > ${param(options.expiresAfter.toISOString())}::timestamptz`);
    if (options.expiresBefore !== undefined) where.push(`expiry <= ${param(options.expiresBefore.toISOString())}::timestamptz`);
    if (options.name !== undefined) {
      where.push(`(common_name = ${param(options.name)} OR sans @> ${param(JSON.stringify([options.name]))}::jsonb)`);
    }
    if (options.cursor !== undefined) {
      const [expiry, serial, aki] = decodeCursor(options.cursor, fingerprint, 3);
      if (expiry === null) {
        where.push(`((expiry IS NULL AND (serial_number, authority_key_identifier) > (${param(bytes(serial!))}, ${param(bytes(aki!))})) OR expiry IS NOT NULL)`);
      } else {
        where.push(`(expiry, serial_number, authority_key_identifier) > (${param(expiry)}::timestamptz, ${param(bytes(serial!))}, ${param(bytes(aki!))})`);
      }
    }
    const sql =
      `SELECT ${columns} FROM certificates${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}` +
      ` ORDER BY expiry ASC NULLS FIRST, serial_number, authority_key_identifier LIMIT ${param(limit + 1)}`;
    const { rows } = await this.query<Raw>(sql, params);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const nextCursor =
      rows.length > limit && last !== undefined ? encodeCursor([last.expiry, text(last.serial), text(last.aki)], fingerprint) : null;
    return { certificates: page.map(toRow), nextCursor };
  }

  async revokeCertificate(serial: string, authorityKeyId: string, reason: number): Promise<CertificateRecord> {
    checkReason(reason);
    const result = await this.query<PgCertificateRow>(
      `UPDATE certificates SET status='revoked', revoked_at=CURRENT_TIMESTAMP, reason=$1
       WHERE (serial_number = $2 AND authority_key_identifier = $3) RETURNING ${CERTIFICATE_COLUMNS}`,
      [reason, bytes(serial), bytes(authorityKeyId)],
    );
    if (result.rowCount === 0 || result.rows[0] === undefined) throw new CertificateNotFoundError();
    if ((result.rowCount ?? 0) > 1) throw new StoreError(`${result.rowCount} rows are affected, should be 1 row`);
    this.wakeups.wake();
    return toCertificateRecord(rawRow(result.rows[0]));
  }

  async tidy(options: TidyOptions = {}): Promise<TidyResult> {
    const window = tidyWindow(options, this.now());
    const result: TidyResult = { certificates: 0, ocspResponses: 0, changes: 0 };
    // Bounded: each round deletes the rows it selected; it ends when a round finds fewer than a batch.
    for (;;) {
      const round = await this.transaction(async (client) => {
        const { rows } = await client.query<{ certificates: string; ocsp: string }>(
          `WITH doomed AS (
             SELECT serial_number, authority_key_identifier FROM certificates WHERE expiry < $1::timestamptz LIMIT $2 FOR UPDATE SKIP LOCKED),
           ocsp AS (
             DELETE FROM ocsp_responses r USING doomed d
             WHERE r.serial_number = d.serial_number AND r.authority_key_identifier = d.authority_key_identifier RETURNING 1),
           removed AS (
             DELETE FROM certificates c USING doomed d
             WHERE c.serial_number = d.serial_number AND c.authority_key_identifier = d.authority_key_identifier RETURNING 1)
           SELECT (SELECT count(*) FROM removed) AS certificates, (SELECT count(*) FROM ocsp) AS ocsp`,
          [window.cutoff.toISOString(), window.batchSize],
        );
        return { certificates: Number(rows[0]!.certificates), ocsp: Number(rows[0]!.ocsp) };
      });
      result.certificates += round.certificates;
      result.ocspResponses += round.ocsp;
      if (round.certificates < window.batchSize) break;
    }
    const changes = await this.query(`DELETE FROM certsmith_certificate_changes WHERE changed_at < $1::timestamptz`, [
      window.changesCutoff.toISOString(),
    ]);
    result.changes = changes.rowCount ?? 0;
    return result;
  }

  async countCertificates(): Promise<CertificateCount[]> {
    const { rows } = await this.query<{ label: Buffer | null; status: Buffer; count: string }>(
      `SELECT ca_label AS label, status, count(*) AS count FROM certificates GROUP BY ca_label, status`,
    );
    const counts: CertificateCount[] = [];
    for (const row of rows) {
      const label = text(row.label) ?? '';
      const status = text(row.status)!;
      const same = counts.find((c) => c.label === label && c.status === status);
      if (same === undefined) counts.push({ label, status, count: Number(row.count) });
      else same.count += Number(row.count);
    }
    return counts;
  }

  async countExpiring(options: CountExpiringOptions = {}): Promise<ExpiringCount[]> {
    const { from, to } = expiringWindow(options, this.now());
    const { rows } = await this.query<{ label: Buffer | null; count: string }>(
      `SELECT ca_label AS label, count(*) AS count FROM certificates
       WHERE expiry > $1::timestamptz AND expiry <= $2::timestamptz AND status <> 'revoked'::bytea GROUP BY ca_label`,
      [from.toISOString(), to.toISOString()],
    );
    const counts = new Map<string, number>();
    for (const row of rows) {
      const label = text(row.label) ?? '';
      counts.set(label, (counts.get(label) ?? 0) + Number(row.count));
    }
    return [...counts].map(([label, count]) => ({ label, count }));
  }

  async upsertOcspResponse(response: OcspResponseInput): Promise<void> {
    await this.query(
      `INSERT INTO ocsp_responses (serial_number, authority_key_identifier, body, expiry) VALUES ($1, $2, $3, $4::timestamptz)
       ON CONFLICT (serial_number, authority_key_identifier) DO UPDATE SET body = excluded.body, expiry = excluded.expiry`,
      [bytes(response.serial), bytes(response.authorityKeyId), Buffer.from(response.body), formatPostgresTime(response.expiry)],
    );
  }

  async getOcspResponse(serial: string, authorityKeyId: string): Promise<OcspResponseRecord | null> {
    const { rows } = await this.query<PgOcspRow>(
      `SELECT serial_number AS serial, authority_key_identifier AS aki, body, expiry FROM ocsp_responses
       WHERE (serial_number = $1 AND authority_key_identifier = $2)`,
      [bytes(serial), bytes(authorityKeyId)],
    );
    return rows[0] === undefined ? null : toOcspRecord(rows[0]);
  }

  async listOcspResponses(options: ListOcspResponsesOptions = {}): Promise<OcspResponsePage> {
    checkExpiryWindow(options);
    const limit = pageSize(options.limit);
    const fingerprint = filterFingerprint({ ...options, limit: undefined, cursor: undefined });
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (options.authorityKeyId !== undefined) where.push(`authority_key_identifier = ${param(bytes(options.authorityKeyId))}`);
    if (options.expiresAfter !== undefined) where.push(`expiry > ${param(options.expiresAfter.toISOString())}::timestamptz`);
    if (options.expiresBefore !== undefined) where.push(`expiry <= ${param(options.expiresBefore.toISOString())}::timestamptz`);
    if (options.cursor !== undefined) {
      const [serial, aki] = decodeCursor(options.cursor, fingerprint, 2);
      where.push(`(serial_number, authority_key_identifier) > (${param(bytes(serial!))}, ${param(bytes(aki!))})`);
    }
    const { rows } = await this.query<PgOcspRow>(
      `SELECT serial_number AS serial, authority_key_identifier AS aki, body, expiry FROM ocsp_responses` +
        `${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY serial_number, authority_key_identifier LIMIT ${param(limit + 1)}`,
      params,
    );
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      responses: page.map(toOcspRecord),
      nextCursor: rows.length > limit && last !== undefined ? encodeCursor([text(last.serial), text(last.aki)], fingerprint) : null,
    };
  }

  async nextCrlNumber(issuer: string): Promise<bigint> {
    const { rows } = await this.query<{ crl_number: string }>(
      `INSERT INTO certsmith_crl_numbers (issuer, crl_number, updated_at) VALUES ($1, 1, now())
       ON CONFLICT (issuer) DO UPDATE SET crl_number = certsmith_crl_numbers.crl_number + 1, updated_at = now() RETURNING crl_number`,
      [issuer],
    );
    return BigInt(rows[0]!.crl_number);
  }

  private async latestChangeId(): Promise<number> {
    const { rows } = await this.query<{ id: string | null }>(`SELECT max(id) AS id FROM certsmith_certificate_changes`);
    return rows[0]?.id === null || rows[0] === undefined ? 0 : Number(rows[0].id);
  }

  private async changesAfter(id: number, limit: number): Promise<CertificateChange[]> {
    const { rows } = await this.query<{
      id: string;
      serial: Buffer;
      aki: Buffer;
      label: Buffer | null;
      status: Buffer | null;
      reason: number | null;
      revoked_at: string | null;
      changed_at: string | null;
    }>(
      `SELECT id, serial_number AS serial, authority_key_identifier AS aki, ca_label AS label, status, reason, revoked_at, changed_at
       FROM certsmith_certificate_changes WHERE id > $1 ORDER BY id LIMIT $2`,
      [id, limit],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      serial: text(row.serial)!,
      authorityKeyId: text(row.aki)!,
      label: text(row.label) ?? '',
      status: text(row.status) ?? '',
      reason: row.reason ?? 0,
      revokedAt: parseStoredTime(row.revoked_at),
      changedAt: parseStoredTime(row.changed_at),
    }));
  }

  watchChanges(onChange: (change: CertificateChange) => void | Promise<void>, options: WatchChangesOptions = {}): ChangeSubscription {
    const watch = startChangeWatch(
      { latestChangeId: () => this.latestChangeId(), changesAfter: (id, limit) => this.changesAfter(id, limit) },
      onChange,
      {
        ...options,
        pollIntervalMs: options.pollIntervalMs ?? 5000,
        subscribeWakeups: combineWakeups(
          (wake) => this.listener.subscribe(wake),
          (wake) => this.wakeups.subscribe(wake),
        ),
      },
    );
    this.watches.add(watch);
    return {
      close: async () => {
        this.watches.delete(watch);
        await watch.close();
      },
    };
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.watches].map((watch) => watch.close()));
    this.watches.clear();
    await this.batcher.drain();
    this.closed = true;
    await this.listener.close();
    await this.pool.end();
  }
}
