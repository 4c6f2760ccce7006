/**
 * The calling-thread writer's durability, off the event loop: its connection commits with
 * `synchronous=NORMAL` (SQLite writes the commit's frames to the WAL file without syncing it), and
 * the batch's requests wait for an `fdatasync` of the WAL file made on libuv's thread pool. Commits
 * that end while a sync is running share the next one (group sync), so one sync makes many turns'
 * rows durable while the event loop goes on signing.
 *
 * Why: with `synchronous=FULL` every commit synced the WAL on the event loop, which then did nothing
 * until the disk answered (on a VM, a virtio notification per sync); on the 2-core Intel Xeon test
 * VM that cost newcert with the store ≈10 % of its throughput (docs/performance.md, "SQLite: the
 * commit's sync off the event loop, again").
 *
 * Why the guarantee is FULL's: FULL syncs the WAL file once per commit, after writing the commit's
 * frames; here the same file is synced after the commit, before any of its certificates is handed
 * out, so a certificate that reaches a client has its row on disk, as before (FULL does not pad the
 * last frame either under SQLite's default powersafe-overwrite assumption). What SQLite syncs
 * itself in NORMAL stays: the WAL header when the WAL restarts, and the WAL and the database around
 * every checkpoint — so frames a checkpoint copied, and a WAL restarted over them, are durable
 * whatever this module does. The file is the one SQLite uses as long as the writer's connection is
 * open (SQLite deletes a WAL file only when its last connection closes). A failed sync fails the
 * batch's requests with a 503: the rows are committed, their certificates are not handed out.
 */
import { open } from 'node:fs/promises';
import { StoreUnavailableError } from '../errors.js';

/** The WAL file, as {@link WalSync} uses it. */
export interface SyncableFile {
  datasync(): Promise<void>;
  close(): Promise<void>;
}

/** Options of {@link WalSync}. */
export interface WalSyncOptions {
  /** Opens the WAL file for syncing; default: `fs.promises.open(path, 'r')` (fdatasync needs no write access). */
  openFile?: (path: string) => Promise<SyncableFile>;
}

/** Group `fdatasync`s of one WAL file (see the module comment). */
export class WalSync {
  readonly #walPath: string;
  readonly #openFile: (path: string) => Promise<SyncableFile>;
  #handle: Promise<SyncableFile> | null = null;
  /** The sync running now. */
  #running: Promise<void> | null = null;
  /** The sync that starts when {@link #running} ends, shared by every commit made meanwhile. */
  #next: Promise<void> | null = null;
  #closed = false;

  /** @param walPath the database file's path with `-wal` appended, as SQLite names it. */
  constructor(walPath: string, options: WalSyncOptions = {}) {
    this.#walPath = walPath;
    this.#openFile = options.openFile ?? (async (path) => await open(path, 'r'));
  }

  /**
   * Resolves once everything written to the WAL file before this call is on disk; rejects with a
   * {@link StoreUnavailableError} when the sync fails. A sync already running may have begun before
   * the caller's frames were written, so the caller waits for the one after it.
   */
  afterCommit(): Promise<void> {
    if (this.#running === null) return this.#start();
    this.#next ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#next = null;
        return this.#start();
      });
    return this.#next;
  }

  /** Close the file once the syncs asked for so far have ended; later calls of {@link afterCommit} fail. */
  async close(): Promise<void> {
    // The last sync asked for is #next, or #running when nothing is queued behind it.
    await (this.#next ?? this.#running ?? Promise.resolve()).catch(() => undefined);
    this.#closed = true;
    const handle = this.#handle;
    this.#handle = null;
    if (handle !== null) await (await handle.catch(() => null))?.close();
  }

  #start(): Promise<void> {
    const running = this.#sync().finally(() => {
      if (this.#running === running) this.#running = null;
    });
    this.#running = running;
    return running;
  }

  async #sync(): Promise<void> {
    if (this.#closed) throw new StoreUnavailableError('the certificate store is closing');
    try {
      // Opened on first use: SQLite creates the WAL file with the connection's first transaction.
      this.#handle ??= this.#openFile(this.#walPath);
      await (await this.#handle).datasync();
    } catch (error) {
      // A file that could not be opened is tried again by the next sync.
      if (this.#handle !== null && (await this.#handle.then(() => false, () => true))) this.#handle = null;
      throw new StoreUnavailableError(`the SQLite WAL file could not be synced: ${(error as Error).message}`, { cause: error });
    }
  }
}
