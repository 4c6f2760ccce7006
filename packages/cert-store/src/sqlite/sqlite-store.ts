/** The SQLite implementation of {@link Store}: certificates are parsed here, SQL runs in the executor. */
import { rebuildStoreError } from '../errors.js';
import { startChangeWatch } from '../change-watch.js';
import { ChangeWakeups } from '../change-wakeups.js';
import { givenCertificateRow, issuedCertificateRow } from '../certificate-row.js';
import type { CertificateRow } from '../certificate-row.js';
import { checkExpiryWindow } from '../cursor.js';
import { checkReason, expiringWindow, findWithFallback, tidyWindow } from '../store-helpers.js';
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
import { rowToRecord } from '../record-mapping.js';
import type { Store } from '../store.js';
import { TurnBatcher } from '../turn-batcher.js';
import type { BatchOutcome } from '../turn-batcher.js';
import type { CallingThreadWriter } from './calling-thread-writer.js';
import type { SqliteExecutor } from './sqlite-executor.js';

/** Default poll interval of the SQLite change feed (no push mechanism in SQLite). */
const SQLITE_POLL_MS = 1000;
/**
 * Batches handed to the executor before its answer comes back: the one being committed and the next,
 * which then waits in the thread's queue instead of in this thread (see the constructor).
 */
const SQLITE_BATCHES_IN_FLIGHT = 2;

export class SqliteStore implements Store {
  readonly driver = 'sqlite3' as const;
  private readonly executor: SqliteExecutor;
  private readonly batcher: TurnBatcher<CertificateRow, CertificateRecord>;
  private readonly watches = new Set<ChangeSubscription>();
  /** This store's own status changes wake its watches at once; the poll is for other writers. */
  private readonly wakeups = new ChangeWakeups();
  private readonly now: () => Date;
  /** Commits issued rows on this thread when it can (`calling-thread-writer.ts`); `null`: the executor does. */
  private readonly writer: CallingThreadWriter | null;
  private checkpointing: Promise<void> | null = null;

  constructor(executor: SqliteExecutor, options: { now?: () => Date; maxBatch?: number; writer?: CallingThreadWriter | null } = {}) {
    this.executor = executor;
    this.writer = options.writer ?? null;
    this.now = options.now ?? (() => new Date());
    // While one batch commits, the next is already in the SQLite thread's queue, so the thread starts
    // it as soon as the commit ends instead of idling until the commit's answer has reached this
    // thread and a new batch has come back (≈0.4 ms a batch under load). SQLite has one writer, so
    // more in flight would only queue more, smaller batches there (docs/performance.md, "Certificate store").
    this.batcher = new TurnBatcher(async (rows) => await this.writeRows(rows), options.maxBatch, SQLITE_BATCHES_IN_FLIGHT);
  }

  private async writeRows(rows: CertificateRow[]): Promise<Array<BatchOutcome<CertificateRecord>>> {
    if (this.writer !== null && (await this.writer.commit(rows))) {
      if (this.writer.checkpointDue()) this.checkpoint();
      return rows.map((row) => ({ ok: true, value: rowToRecord(row) }));
    }
    const outcomes = await this.executor.call('insertCertificates', rows);
    return outcomes.map((outcome, i) =>
      outcome.ok ? { ok: true, value: rowToRecord(rows[i]!) } : { ok: false, error: rebuildStoreError(outcome.error) },
    );
  }

  /**
   * Another connection that leaves checkpoints to this store (a process of `serve --processes N`,
   * `remote/direct-records.ts`) wrote enough to this store's WAL file to checkpoint it: the thread
   * does, as for this store's own calling-thread writer.
   */
  checkpointForOthers(): void {
    this.checkpoint();
  }

  /** Ask the thread to checkpoint (`wal-checkpoint.ts`) what calling-thread writers committed; one at a time. */
  private checkpoint(): void {
    if (this.checkpointing !== null) return;
    // A checkpoint that fails (the store closing, a reader holding the WAL) is retried when the next one is due.
    this.checkpointing = this.executor
      .call('checkpoint')
      .catch(() => undefined)
      .finally(() => {
        this.checkpointing = null;
      });
  }

  async recordCertificate(input: RecordCertificateInput): Promise<CertificateRecord> {
    return await this.batcher.add(issuedCertificateRow(input, this.now()));
  }

  async insertCertificate(row: CertificateRowInput): Promise<void> {
    const given = givenCertificateRow(row);
    const [outcome] = await this.executor.call('insertCertificates', [given]);
    if (outcome !== undefined && !outcome.ok) throw rebuildStoreError(outcome.error);
    // Only a row inserted with another status than `good` is in the change log (the trigger's WHEN).
    if (given.status !== 'good') this.wakeups.wake();
  }

  async getCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null> {
    return await this.executor.call('getCertificate', serial, authorityKeyId);
  }

  async findCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null> {
    return await findWithFallback(
      serial,
      authorityKeyId,
      (s, a) => this.executor.call('getCertificate', s, a),
      (s) => this.executor.call('certificatesWithEmptyAki', s),
    );
  }

  async listCertificates(options: ListCertificatesOptions = {}): Promise<CertificatePage> {
    checkExpiryWindow(options);
    return await this.executor.call('listCertificates', options);
  }

  async listCertificateSummaries(options: ListCertificatesOptions = {}): Promise<CertificatePage<CertificateSummary>> {
    checkExpiryWindow(options);
    return await this.executor.call('listCertificateSummaries', options);
  }

  async listCertificatesJson(options: ListCertificatesOptions = {}, withPem = false): Promise<CertificateJsonPage> {
    checkExpiryWindow(options);
    return await this.executor.call('listCertificatesJson', options, withPem);
  }

  async revokeCertificate(serial: string, authorityKeyId: string, reason: number): Promise<CertificateRecord> {
    checkReason(reason);
    const record = await this.executor.call('revokeCertificate', serial, authorityKeyId, reason);
    this.wakeups.wake();
    return record;
  }

  async tidy(options: TidyOptions = {}): Promise<TidyResult> {
    const window = tidyWindow(options, this.now());
    return await this.executor.call('tidy', window.cutoff, window.changesCutoff, window.batchSize);
  }

  async countCertificates(): Promise<CertificateCount[]> {
    return await this.executor.call('countCertificates');
  }

  async countExpiring(options: CountExpiringOptions = {}): Promise<ExpiringCount[]> {
    const { from, to } = expiringWindow(options, this.now());
    return await this.executor.call('countExpiring', from, to);
  }

  async upsertOcspResponse(response: OcspResponseInput): Promise<void> {
    await this.executor.call('upsertOcspResponse', response);
  }

  async getOcspResponse(serial: string, authorityKeyId: string): Promise<OcspResponseRecord | null> {
    return await this.executor.call('getOcspResponse', serial, authorityKeyId);
  }

  async listOcspResponses(options: ListOcspResponsesOptions = {}): Promise<OcspResponsePage> {
    checkExpiryWindow(options);
    return await this.executor.call('listOcspResponses', options);
  }

  async nextCrlNumber(issuer: string): Promise<bigint> {
    return await this.executor.call('nextCrlNumber', issuer, this.now());
  }

  watchChanges(onChange: (change: CertificateChange) => void | Promise<void>, options: WatchChangesOptions = {}): ChangeSubscription {
    const watch = startChangeWatch(
      {
        latestChangeId: () => this.executor.call('latestChangeId'),
        changesAfter: (id, limit) => this.executor.call('changesAfter', id, limit),
      },
      onChange,
      { ...options, pollIntervalMs: options.pollIntervalMs ?? SQLITE_POLL_MS, subscribeWakeups: (wake) => this.wakeups.subscribe(wake) },
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
    await this.executor.call('ping');
  }

  async close(): Promise<void> {
    await Promise.all([...this.watches].map((watch) => watch.close()));
    this.watches.clear();
    await this.batcher.drain();
    await this.checkpointing;
    this.writer?.close();
    await this.executor.close();
  }
}
