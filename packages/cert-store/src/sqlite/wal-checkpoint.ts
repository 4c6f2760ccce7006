/**
 * The store thread's checkpoint of what calling-thread writers committed (`calling-thread-writer.ts`,
 * `remote/direct-records.ts`): copy the WAL into the database without waiting for anyone, and let
 * the next commit write the WAL from its beginning again.
 *
 * Why: SQLite writes the WAL from its start again only after a checkpoint that copied every frame
 * while no reader still needed one. Under sustained load the writers append frames while a
 * `PASSIVE` checkpoint copies, so it never copies the last ones, and the WAL file grew to the
 * writers' 30,000-frame backstop (≈124 MB) within seconds and stayed there, the backstop checkpoint
 * running on an event loop (docs/performance.md, "SQLite: cross-process page reads and WAL size").
 * After the `PASSIVE` pass (the long copy, concurrent with the writers' commits), a `RESTART` pass
 * takes the write lock only if it is free at once, copies the few frames committed meanwhile and
 * gives up at once when a reader still reads old frames: a writer meets that lock for the length of
 * a short copy and retries as it does for another writer's commit. `journal_size_limit`
 * (`sqlite-database.ts`) then truncates a file that grew past it when the WAL restarts.
 */
import type Database from 'better-sqlite3';

/** What {@link checkpointWal} did (SQLite's `wal_checkpoint` result of its last pass). */
export interface WalCheckpoint {
  /** Every frame was copied and no reader needs the WAL: the next commit writes it from its start. */
  restarted: boolean;
  /** Frames in the WAL, and frames of them copied into the database. */
  walFrames: number;
  copiedFrames: number;
}

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

/** Checkpoint `db`'s WAL (see the module comment); never waits for a lock. */
export function checkpointWal(db: Database.Database): WalCheckpoint {
  db.pragma('wal_checkpoint(PASSIVE)');
  const busyTimeoutMs = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    // A busy lock or reader is reported in the row (`busy = 1`), not thrown.
    const [row] = db.pragma('wal_checkpoint(RESTART)') as CheckpointRow[];
    if (row === undefined) return { restarted: false, walFrames: 0, copiedFrames: 0 };
    return { restarted: row.busy === 0 && row.log === row.checkpointed, walFrames: row.log, copiedFrames: row.checkpointed };
  } finally {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  }
}
