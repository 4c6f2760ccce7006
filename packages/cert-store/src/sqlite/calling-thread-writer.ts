/**
 * Issued certificates' rows written on the calling thread (the event loop), beside the store's
 * thread: a second connection to the same WAL database that commits each turn's batch itself.
 *
 * Why: with the store's thread, every batch costs a message each way, and the commit waits for a
 * third thread to get a core while the event loop and the signing worker take both of a 2-core
 * machine's — ≈0.3–0.4 ms a commit of ≈6 rows spent in the run queue, against ≈0.4 ms of work.
 * Committing here instead cost the event loop ≈40 µs more per certificate than posting the batch
 * and made newcert ≈8 % faster with ≈13 % less CPU (docs/performance.md, "Store-on speed pass 2").
 *
 * What stays off the event loop:
 * - waiting for a lock: this connection's busy timeout is zero and it begins `IMMEDIATE`; when
 *   another writer holds the database (a revoke or the OCSP refresh in the store's thread, another
 *   process of `serve --processes N` committing its own rows, `certsmith revoke`, `cfssl`), the
 *   batch is tried again in the next turn and then every millisecond — another writer's commit of
 *   issued rows holds the lock for ≈0.5 ms — for at most {@link BUSY_RETRY_MS} ({@link BUSY_RETRY_ATTEMPTS} attempts), then goes
 *   to the store's thread (or, in a forked process, to the owner: `remote/direct-records.ts`),
 *   which waits for the lock as before. A batch with any failing row (a duplicate) goes there at
 *   once, so each row gets the exact outcome;
 * - checkpoints: this connection's automatic checkpoint is only a backstop; the store asks its
 *   thread to checkpoint (`wal-checkpoint.ts`: without waiting for a lock, mostly concurrent with these commits) every
 *   {@link CHECKPOINT_EVERY_ROWS} rows or {@link CHECKPOINT_EVERY_COMMITS} commits written here
 *   ({@link CallingThreadWriter.checkpointDue}).
 *
 * - the disk's sync: with FULL durability it runs on libuv's pool after the commit (`wal-sync.ts`);
 * - long commits: a commit here writes its frames without waiting for the disk, yet can still be
 *   slow (a checkpoint in the thread competing for the disk, a flood's large batches). When commits take longer than {@link SLOW_COMMIT_MS} (the median
 *   of the last {@link COMMITS_JUDGED}: a slow disk, or batches of hundreds of rows under a flood),
 *   the writer stands aside for
 *   {@link SLOW_DISK_PAUSE_MS} and every batch goes to the thread, as before this writer existed.
 *
 * Durability is the data source's (`synchronous`, FULL by default): a row is committed, and with
 * FULL or EXTRA on disk, before its certificate is returned, as with the thread — but this
 * connection commits with NORMAL and the disk's sync runs off the event loop, one for every commit
 * made while the previous one ran (`wal-sync.ts`). Only WAL databases on a file get a writer: in a
 * rollback journal a second connection would block readers, and `:memory:` is per connection.
 */
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type Database from 'better-sqlite3';
import type { CertificateRow } from '../certificate-row.js';
import { WAL_AUTOCHECKPOINT_PAGES, openSqliteDatabase } from './sqlite-database.js';
import type { SqliteSource } from './sqlite-database.js';
import { SqliteOperations } from './sqlite-operations.js';
import { WalSync } from './wal-sync.js';

/**
 * Rows written here between two checkpoints asked of the store's thread: at ≈3 WAL frames per
 * issued row (docs/performance.md), about the 10,000 frames the thread's own connection checkpoints at.
 */
export const CHECKPOINT_EVERY_ROWS = 3_000;
/**
 * Commits here between two checkpoints asked of the store's thread at most. A commit writes ≈20 WAL
 * frames however few rows it holds (each index's leaf it touches), so one-row commits — light load,
 * or requests that finish one per turn — grow the WAL ≈7 times faster per row than the ≈7-row
 * commits of a busy server: by rows alone, the WAL reached this connection's backstop and a
 * checkpoint ran on the event loop (a 78 ms round, docs/performance.md). 450 commits ≈ 10,000 frames.
 */
export const CHECKPOINT_EVERY_COMMITS = 450;

/** Median time of the last {@link COMMITS_JUDGED} commits (ms) above which the writer leaves commits to the thread. */
export const SLOW_COMMIT_MS = 4;
/**
 * Commits judged together. The median, not the mean: one long commit (a checkpoint's `fsync` in
 * the thread delays this one's) says nothing about the disk, a slow disk makes every commit slow.
 */
export const COMMITS_JUDGED = 32;
/** How long the writer stands aside after its commits were slow. */
export const SLOW_DISK_PAUSE_MS = 30_000;

/**
 * Attempts at most (the first included) to commit here a batch that met another writer's lock.
 * Trying costs a few µs, while handing the batch on costs a wake-up of the store's thread or an IPC
 * round trip (≈250–300 µs of CPU, docs/performance.md); the time limit {@link BUSY_RETRY_MS} usually
 * ends the retries first.
 */
export const BUSY_RETRY_ATTEMPTS = 8;
/** How long (ms) a batch that met another writer's lock is tried here at most before it is handed on. */
export const BUSY_RETRY_MS = 5;

/** What one attempt to commit a batch here did; nothing is written unless `committed`. */
export type CallingThreadWrite = 'committed' | 'busy' | 'refused';

/** True when `source` can have a calling-thread writer (see the module comment). */
export function supportsCallingThreadWriter(source: SqliteSource): boolean {
  // parseSqliteDataSource names every in-memory source `:memory:`.
  return !source.readonly && source.filename !== ':memory:' && (source.journalMode ?? 'WAL').toUpperCase() === 'WAL';
}

/** The calling thread's connection for issued rows (opened on first use). */
export class CallingThreadWriter {
  private readonly source: SqliteSource;
  private db: Database.Database | null = null;
  /** Syncs the WAL after commits when the data source asks for FULL (or EXTRA) durability; `null`: SQLite's own `synchronous` does. */
  private walSync: WalSync | null = null;
  private operations: SqliteOperations | null = null;
  /** The connection could not be opened: every batch goes to the thread. */
  private broken = false;
  private closed = false;
  /** The last commits' times here (ms), judged every {@link COMMITS_JUDGED}. */
  private readonly commitMs: number[] = [];
  /** `performance.now()` until which batches go to the thread (slow commits). */
  private pausedUntil = 0;
  private readonly clock: () => number;
  private rowsSinceCheckpoint = 0;
  private commitsSinceCheckpoint = 0;

  constructor(source: SqliteSource, options: { clock?: () => number } = {}) {
    this.source = source;
    this.clock = options.clock ?? (() => performance.now());
  }

  /**
   * Commit `rows` in one transaction here, trying again on later turns while another writer holds
   * the lock; `false` — nothing written — when the lock stayed taken ({@link BUSY_RETRY_MS},
   * {@link BUSY_RETRY_ATTEMPTS}), a row fails, the writer stands aside (slow commits) or the connection
   * cannot be opened: hand them to a writer that waits for the lock.
   */
  async commit(rows: readonly CertificateRow[]): Promise<boolean> {
    if (!(await this.commitHere(rows))) return false;
    // Committed; the certificates wait until the WAL file is on disk (wal-sync.ts), as with FULL.
    await this.walSync?.afterCommit();
    return true;
  }

  /** {@link commit} without the wait for the disk. */
  private async commitHere(rows: readonly CertificateRow[]): Promise<boolean> {
    let outcome = this.write(rows);
    if (outcome !== 'busy') return outcome === 'committed';
    const started = this.clock();
    // Bounded: BUSY_RETRY_ATTEMPTS attempts.
    for (let attempt = 2; attempt <= BUSY_RETRY_ATTEMPTS; attempt += 1) {
      // The first retry in the next turn (under load, a turn often outlasts the other commit), the
      // next ones a millisecond apart: an idle event loop turns in microseconds, and trying again
      // that fast would spin for as long as the other writer holds the lock.
      await new Promise<void>((resolve) => (attempt === 2 ? setImmediate(resolve) : setTimeout(resolve, 1)));
      outcome = this.write(rows);
      if (outcome !== 'busy') return outcome === 'committed';
      if (this.clock() - started >= BUSY_RETRY_MS) return false;
    }
    return false;
  }

  /** One attempt to commit `rows` here, at once (see {@link commit}). */
  write(rows: readonly CertificateRow[]): CallingThreadWrite {
    if (this.clock() < this.pausedUntil) return 'refused';
    const operations = this.open();
    if (operations === null) return 'refused';
    const started = this.clock();
    const outcome = operations.insertCertificatesAtOnce(rows);
    if (outcome !== 'committed') return outcome === 'busy' ? 'busy' : 'refused';
    this.rowsSinceCheckpoint += rows.length;
    this.commitsSinceCheckpoint += 1;
    this.commitMs.push(this.clock() - started);
    if (this.commitMs.length === COMMITS_JUDGED) {
      const sorted = this.commitMs.sort((a, b) => a - b);
      if (sorted[COMMITS_JUDGED / 2]! > SLOW_COMMIT_MS) this.pausedUntil = this.clock() + SLOW_DISK_PAUSE_MS;
      this.commitMs.length = 0;
    }
    return 'committed';
  }

  /**
   * Whether the WAL this connection wrote since the last `true` calls for a checkpoint by the store's
   * thread ({@link CHECKPOINT_EVERY_ROWS}, {@link CHECKPOINT_EVERY_COMMITS}); counting starts again.
   */
  checkpointDue(): boolean {
    if (this.rowsSinceCheckpoint < CHECKPOINT_EVERY_ROWS && this.commitsSinceCheckpoint < CHECKPOINT_EVERY_COMMITS) return false;
    this.rowsSinceCheckpoint = 0;
    this.commitsSinceCheckpoint = 0;
    return true;
  }

  private open(): SqliteOperations | null {
    if (this.operations !== null || this.broken || this.closed) return this.operations;
    try {
      const db = openSqliteDatabase(this.source);
      try {
        db.pragma('busy_timeout = 0');
        // A backstop only: the store's thread checkpoints for this connection (see the module comment).
        db.pragma(`wal_autocheckpoint = ${3 * WAL_AUTOCHECKPOINT_PAGES}`);
        // FULL (2) or EXTRA (3): the commit's sync moves off the event loop (wal-sync.ts); NORMAL or OFF, chosen in the data source, stay.
        if ((db.pragma('synchronous', { simple: true }) as number) >= 2) {
          db.pragma('synchronous = NORMAL');
          // Resolved now, as SQLite resolves the database's path when it opens it: a later chdir moves neither.
          this.walSync = new WalSync(`${resolve(this.source.filename)}-wal`);
        }
      } catch (error) {
        db.close();
        throw error;
      }
      this.db = db;
      this.operations = new SqliteOperations(db);
    } catch {
      this.broken = true;
    }
    return this.operations;
  }

  /** Close the connection; later writes go to the thread. */
  close(): void {
    this.closed = true;
    this.operations = null;
    this.db?.close();
    this.db = null;
    void this.walSync?.close();
  }
}
