/**
 * Waiting for SQLite's write lock in short, even steps instead of SQLite's own busy handler.
 *
 * Why: the busy handler behind `busy_timeout` sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms
 * between attempts. That suited one writer and an occasional `sqlite3` shell; with `serve --processes N`
 * several connections commit issued rows into one WAL file, each holding the lock ≈0.5 ms at a
 * time, and a batch handed to the store's thread after meeting the lock (`calling-thread-writer.ts`)
 * kept missing it and slept 5–100 ms between tries: a 78–107 ms worst round where the lock was free
 * most of the time (docs/performance.md, "SQLite rows committed by each process"). Here the thread
 * tries every {@link WRITE_LOCK_POLL_MS} until the same timeout. It blocks only the thread it runs
 * on: the store's SQLite thread (or a CLI command's own thread, which waited in the busy handler
 * before).
 */
import type Database from 'better-sqlite3';

/** Between two attempts at the write lock (ms): about one other writer's commit. */
export const WRITE_LOCK_POLL_MS = 0.5;

/** Atomics.wait needs a shared cell; nothing ever notifies it, so each wait lasts its timeout. */
const SLEEP_CELL = new Int32Array(new SharedArrayBuffer(4));

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Run `transaction` — which must begin `IMMEDIATE`, so that a busy lock fails it before it has
 * done anything — until it gets the write lock or `timeoutMs` has passed; then its last error
 * (`SQLITE_BUSY`) is thrown. The connection's own busy timeout is off meanwhile and restored after.
 */
export function withWriteLock<T>(db: Database.Database, timeoutMs: number, transaction: () => T): T {
  if (timeoutMs <= 0) return transaction();
  db.pragma('busy_timeout = 0');
  try {
    const deadline = performance.now() + timeoutMs;
    // Bounded by the deadline.
    for (;;) {
      try {
        return transaction();
      } catch (error) {
        if (!isBusy(error) || performance.now() >= deadline) throw error;
        Atomics.wait(SLEEP_CELL, 0, 0, WRITE_LOCK_POLL_MS);
      }
    }
  } finally {
    db.pragma(`busy_timeout = ${timeoutMs}`);
  }
}
