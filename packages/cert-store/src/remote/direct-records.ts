/**
 * Issued rows that a client of a remote store commits itself, on its own connection to the owner's
 * SQLite WAL file, instead of sending them over the channel (`connectStore`'s `commitIssuedRowsTo`).
 *
 * Why: in `serve --processes N` every row of a forked process used to cross node IPC to the first
 * process, which then committed every group of every process alone: ≈250–300 µs of CPU per message
 * round trip, and `--processes 2` with SQLite was slower than one process (docs/performance.md, "The
 * store over IPC" and "SQLite rows committed by each process"). A forked process commits its rows
 * the way one process does beside its store's thread (`sqlite/calling-thread-writer.ts`): each
 * event-loop turn's rows in one transaction, on the event loop, with the same connection settings.
 *
 * What still goes over the channel, to the owner's store, row by row so each gets the owner's outcome:
 * - a batch that still meets the write lock held by another connection (the other processes'
 *   writers, the owner's thread doing a revoke, a tidy or the OCSP refresh, `cfssl`) after being
 *   tried again for a few turns (`CallingThreadWriter.commit`): this connection's busy timeout is
 *   zero and it begins `IMMEDIATE`, so the event loop never waits; the owner's store waits for the
 *   lock in its thread. A failed `BEGIN IMMEDIATE` or a rolled-back transaction writes nothing, so a
 *   row is never both here and there, and never lost;
 * - a batch with a failing row (a duplicate serial): the owner fails exactly that row, as before;
 * - every batch while the writer stands aside after slow commits (a slow disk), or when its
 *   connection cannot be opened;
 * - everything that is not an issued row: reads, revoke, certadd, tidy, the change feed, OCSP.
 *
 * Checkpoints stay the owner's: commits here never run one (the connection's automatic checkpoint is
 * only a backstop, at three times the store's interval); every 3,000 rows or 450 commits made here
 * (`CallingThreadWriter.checkpointDue`) the client tells the owner (`checkpoint`, a notice, not
 * answered), whose store thread checkpoints (`sqlite/wal-checkpoint.ts`) as it does for its own
 * calling-thread writer.
 *
 * Durability is the data source's (`synchronous`, FULL by default): a record resolves once its
 * row is committed. Change wake-ups need nothing: an issued row is `good`, which the change log does
 * not record (the trigger's WHEN), so the owner's watches had nothing to be woken for either.
 */
import { issuedCertificateRow } from '../certificate-row.js';
import type { CertificateRow } from '../certificate-row.js';
import type { DbConfig } from '../db-config.js';
import type { CertificateRecord, RecordCertificateInput } from '../model.js';
import { rowToRecord } from '../record-mapping.js';
import { CallingThreadWriter, supportsCallingThreadWriter } from '../sqlite/calling-thread-writer.js';
import { parseSqliteDataSource } from '../sqlite/sqlite-database.js';
import { TurnBatcher } from '../turn-batcher.js';
import type { BatchOutcome } from '../turn-batcher.js';

/**
 * Batches handed to the owner at once. A batch committed here is never in flight for long (the
 * commit is synchronous); one sent to the owner is, while the owner waits for the lock. Four let
 * the next turns still commit here meanwhile; beyond that, rows wait and go together.
 */
const BATCHES_IN_FLIGHT = 4;

/** What {@link DirectRecords} needs of the client it serves. */
export interface DirectRecordsOwner {
  /** Record one row through the owner's store (over the channel); resolves with the owner's record. */
  record(input: RecordCertificateInput): Promise<CertificateRecord>;
  /** Tell the owner enough was committed here since the last notice: its thread should checkpoint. */
  checkpoint(): void;
}

/** One record waiting for its turn's batch: the input (for the owner) and the row written here. */
interface DirectItem {
  input: RecordCertificateInput;
  row: CertificateRow;
}

/**
 * Direct commits of issued rows to the database `config` names, or `null` when it cannot have them:
 * not SQLite, `:memory:` (one database per connection), read-only, not a WAL file (a second writer
 * would block readers), or a data source that does not parse — then everything goes over the
 * channel, as the owner reports its own error for it.
 */
export function directRecords(config: DbConfig | undefined, owner: DirectRecordsOwner, options: { now?: () => Date } = {}): DirectRecords | null {
  if (config?.driver !== 'sqlite3') return null;
  let source;
  try {
    source = parseSqliteDataSource(config.dataSource);
  } catch {
    return null;
  }
  if (!supportsCallingThreadWriter(source)) return null;
  return new DirectRecords(new CallingThreadWriter(source), owner, options);
}

/** A client's issued rows, committed here when the database lets it (see the module comment). */
export class DirectRecords {
  readonly #writer: CallingThreadWriter;
  readonly #owner: DirectRecordsOwner;
  readonly #now: () => Date;
  readonly #batcher: TurnBatcher<DirectItem, CertificateRecord>;

  constructor(writer: CallingThreadWriter, owner: DirectRecordsOwner, options: { now?: () => Date } = {}) {
    this.#writer = writer;
    this.#owner = owner;
    this.#now = options.now ?? (() => new Date());
    this.#batcher = new TurnBatcher(async (items) => await this.#write(items), undefined, BATCHES_IN_FLIGHT);
  }

  /** Record one issued row (its certificate's fields already read); resolves once it is committed, here or by the owner. */
  record(input: RecordCertificateInput): Promise<CertificateRecord> {
    let row: CertificateRow;
    try {
      row = issuedCertificateRow(input, this.#now());
    } catch (error) {
      return Promise.reject(error as Error);
    }
    return this.#batcher.add({ input, row });
  }

  async #write(items: DirectItem[]): Promise<Array<BatchOutcome<CertificateRecord>>> {
    if (await this.#writer.commit(items.map((item) => item.row))) {
      if (this.#writer.checkpointDue()) this.#owner.checkpoint();
      return items.map((item) => ({ ok: true, value: rowToRecord(item.row) }));
    }
    const outcomes = await Promise.allSettled(items.map(async (item) => await this.#owner.record(item.input)));
    return outcomes.map((outcome) => (outcome.status === 'fulfilled' ? { ok: true, value: outcome.value } : { ok: false, error: outcome.reason as Error }));
  }

  /** Resolves when every record made so far is committed or failed. */
  async drain(): Promise<void> {
    await this.#batcher.drain();
  }

  /** Close the connection (after {@link drain}); later records go to the owner. */
  close(): void {
    this.#writer.close();
  }
}
