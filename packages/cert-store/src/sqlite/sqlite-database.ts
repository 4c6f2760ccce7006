/**
 * Opening a SQLite certdb from a CFSSL `data_source` (go-sqlite3 DSN syntax: a path, `:memory:`,
 * or `file:` URI, with go-sqlite3's `?_busy_timeout=…&mode=ro` parameters) with the settings the
 * store relies on: WAL journal (readers never wait for the writer), `synchronous=FULL` (a commit
 * survives power loss before a certificate is handed out), a busy timeout, foreign keys off as
 * go-sqlite3 leaves them (CFSSL 1.2.0's orphan OCSP rows stay readable).
 */
import Database from 'better-sqlite3';
import { DbConfigError } from '../errors.js';
import type { SchemaConnection } from '../migrations/schema-connection.js';
import { sqliteError } from './sqlite-operations.js';
import { withWriteLock } from './write-lock-wait.js';

/**
 * WAL frames between automatic checkpoints (SQLite's default is 1,000). Serials are random, so each
 * row dirties leaves all over the primary-key, name and OCSP indexes, and a commit rewrites each as a
 * whole frame; a checkpoint then copies every page changed since the last one, on the commit that
 * crosses the threshold. Ten times the interval lets one checkpoint copy a hot page once for many of
 * its versions (measured in docs/performance.md, "Certificate store"). Durability is unchanged (each
 * commit still syncs the WAL); the WAL file grows to ≈40 MB between checkpoints, and each checkpoint
 * is longer.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * Bytes a WAL file keeps after the WAL restarts (`journal_size_limit`; SQLite's default keeps it
 * whole). A WAL grows by a frame per page a commit writes and is reused, not shrunk, from its start
 * once a checkpoint copied all of it (`wal-checkpoint.ts`); a file grown past this (a burst that
 * outran the checkpoints, the writers' 30,000-frame backstop of ≈124 MB) is cut back to it then.
 * Above the ≈41 MB of {@link WAL_AUTOCHECKPOINT_PAGES} frames, so a WAL of the usual size is
 * reused without being cut and grown again (docs/performance.md, "SQLite: cross-process page reads
 * and WAL size").
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Where SQLite keeps temporary data, statement journals included (`temp_store`; 2 = memory). An
 * INSERT into `certificates` fires triggers inside the caller's transaction, so SQLite keeps a
 * statement journal (the pages the statement changes, to undo just it) for every recorded
 * certificate. In the default mode that journal is a 64 KiB malloc'd chunk that spills into a new
 * temporary file (`open`, `unlink`, `pwrite`s, `close`) when one INSERT changes more than 16 pages —
 * ≈1 commit in 5 on a fresh database, more as the indexes deepen — and freeing the chunk makes glibc
 * consolidate its free lists. In memory the journal is 1 KiB chunks, never a file. Nothing durable
 * changes: a statement journal only undoes a failed statement inside a transaction that is still
 * open; the WAL and `synchronous` keep commits safe. Every statement this store runs in a
 * transaction changes one row, so the journal stays a few pages (docs/performance.md,
 * "Store-on allocation pass").
 */
export const TEMP_STORE = 'MEMORY';

/** A parsed SQLite data source. */
export interface SqliteSource {
  /** File path, or `:memory:`. */
  filename: string;
  readonly: boolean;
  /** `_busy_timeout`/`_timeout` in ms, when given. */
  busyTimeoutMs?: number;
  /** `_journal_mode`/`_journal`, when given (default WAL). */
  journalMode?: string;
  /** `_synchronous`/`_sync`, when given (default FULL). */
  synchronous?: string;
}

/** Parse a go-sqlite3 DSN. Relative paths are relative to the working directory, as in CFSSL. */
export function parseSqliteDataSource(dataSource: string): SqliteSource {
  let rest = dataSource;
  if (rest.startsWith('file:')) rest = rest.slice('file:'.length);
  const question = rest.indexOf('?');
  const params = new URLSearchParams(question === -1 ? '' : rest.slice(question + 1));
  let filename = question === -1 ? rest : rest.slice(0, question);
  if (dataSource.startsWith('file:') && filename.startsWith('//')) filename = filename.slice(2);
  const mode = params.get('mode');
  if (mode === 'memory' || filename === ':memory:' || filename === '') filename = ':memory:';
  const source: SqliteSource = { filename, readonly: mode === 'ro' };
  const busy = params.get('_busy_timeout') ?? params.get('_timeout');
  if (busy !== null) {
    const ms = Number(busy);
    if (!Number.isInteger(ms) || ms < 0) throw new DbConfigError(`invalid _busy_timeout in data_source: ${busy}`);
    source.busyTimeoutMs = ms;
  }
  const journal = params.get('_journal_mode') ?? params.get('_journal');
  if (journal !== null) source.journalMode = checkPragmaWord('_journal_mode', journal);
  const sync = params.get('_synchronous') ?? params.get('_sync');
  if (sync !== null) source.synchronous = checkPragmaWord('_synchronous', sync);
  return source;
}

function checkPragmaWord(name: string, value: string): string {
  if (!/^[A-Za-z0-9]+$/.test(value)) throw new DbConfigError(`invalid ${name} in data_source: ${value}`);
  return value;
}

/** Options of {@link openSqliteDatabase}. */
export interface OpenSqliteOptions {
  /** How long a write waits for another process's lock; default 5000 ms (data_source `_busy_timeout` wins). */
  busyTimeoutMs?: number;
}

/** Open the file (created when missing, as go-sqlite3 does) with the store's settings. */
export function openSqliteDatabase(source: SqliteSource, options: OpenSqliteOptions = {}): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(source.filename, { readonly: source.readonly, fileMustExist: source.readonly });
  } catch (error) {
    throw sqliteError(error);
  }
  try {
    const busyTimeoutMs = source.busyTimeoutMs ?? options.busyTimeoutMs ?? 5000;
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (!source.readonly && source.filename !== ':memory:') {
      // Switching a new file to WAL reads it, then needs its write lock: when another process opens
      // the same new file at that moment (two instances, or `serve --processes` and `db migrate`),
      // SQLite answers SQLITE_BUSY at once instead of calling the busy handler (it would deadlock),
      // so the switch is tried again until the busy timeout, as a write would wait.
      withWriteLock(db, busyTimeoutMs, () => db.pragma(`journal_mode = ${source.journalMode ?? 'WAL'}`));
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      db.pragma(`temp_store = ${TEMP_STORE}`);
    }
    db.pragma(`synchronous = ${source.synchronous ?? 'FULL'}`);
    db.pragma('foreign_keys = OFF');
  } catch (error) {
    db.close();
    throw sqliteError(error);
  }
  return db;
}

/** Migrations and schema checks on an open connection (synchronous underneath). */
export function sqliteSchemaConnection(db: Database.Database): SchemaConnection {
  return {
    driver: 'sqlite3',
    async exec(sql) {
      db.exec(sql);
    },
    async query<Row>(sql: string, params: readonly unknown[] = []) {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Row[];
      statement.run(...params);
      return [] as Row[];
    },
    async exclusive<T>(work: () => Promise<T>): Promise<T> {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work();
        db.exec('COMMIT');
        return result;
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw error;
      }
    },
    async close() {
      db.close();
    },
  };
}
