import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from './sqlite-database.js';
import { checkpointWal } from './wal-checkpoint.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-wal-checkpoint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A WAL file whose writer never checkpoints itself, and a second connection that checkpoints for it. */
function writerAndCheckpointer(): { file: string; writer: Database.Database; checkpointer: Database.Database } {
  const file = join(dir, `store-${(n += 1)}.db`);
  const writer = openSqliteDatabase({ filename: file, readonly: false });
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('CREATE TABLE t (v BLOB)');
  const checkpointer = openSqliteDatabase({ filename: file, readonly: false }, { busyTimeoutMs: 60_000 });
  return { file, writer, checkpointer };
}

function writeRows(db: Database.Database, count: number): void {
  const insert = db.prepare('INSERT INTO t VALUES (randomblob(3000))');
  for (let i = 0; i < count; i += 1) insert.run();
}

describe('checkpointWal', () => {
  it('copies every frame so that the next commits write the WAL from its start instead of growing it', () => {
    const { file, writer, checkpointer } = writerAndCheckpointer();
    writeRows(writer, 50);
    const grown = statSync(`${file}-wal`).size;
    const result = checkpointWal(checkpointer);
    expect(result).toMatchObject({ restarted: true });
    expect(result.copiedFrames).toBe(result.walFrames);
    expect(result.walFrames).toBeGreaterThan(50);
    writeRows(writer, 50);
    expect(statSync(`${file}-wal`).size).toBe(grown);
    // Without a checkpoint between them, the same commits grow the file.
    writeRows(writer, 50);
    expect(statSync(`${file}-wal`).size).toBeGreaterThan(grown);
    expect(writer.prepare('SELECT count(*) AS rows FROM t').get()).toEqual({ rows: 150 });
    writer.close();
    checkpointer.close();
  });

  // Waiting for the reader would outlast the test's timeout (the connection's busy timeout is 60 s).
  it('gives up at once while a reader still reads old frames, and restores the busy timeout', () => {
    const { writer, checkpointer } = writerAndCheckpointer();
    writeRows(writer, 5);
    const reader = new Database(writer.name);
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM t').get();
    writeRows(writer, 5);
    expect(checkpointWal(checkpointer).restarted).toBe(false);
    expect(checkpointer.pragma('busy_timeout', { simple: true })).toBe(60_000);
    reader.exec('COMMIT');
    expect(checkpointWal(checkpointer).restarted).toBe(true);
    reader.close();
    writer.close();
    checkpointer.close();
  });
});
