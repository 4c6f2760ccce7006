import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { WAL_SIZE_LIMIT_BYTES, openSqliteDatabase, parseSqliteDataSource } from './sqlite-database.js';

const require = createRequire(import.meta.url);

describe('parseSqliteDataSource', () => {
  it('reads paths, :memory: and go-sqlite3 file: URIs with their parameters', () => {
    expect(parseSqliteDataSource('certs.db')).toEqual({ filename: 'certs.db', readonly: false });
    expect(parseSqliteDataSource(':memory:')).toEqual({ filename: ':memory:', readonly: false });
    expect(parseSqliteDataSource('file:/var/lib/certs.db?mode=ro&_busy_timeout=250&cache=shared')).toEqual({
      filename: '/var/lib/certs.db',
      readonly: true,
      busyTimeoutMs: 250,
    });
    expect(parseSqliteDataSource('file:x.db?mode=memory').filename).toBe(':memory:');
    expect(parseSqliteDataSource('certs.db?_journal=DELETE&_sync=NORMAL')).toMatchObject({ journalMode: 'DELETE', synchronous: 'NORMAL' });
  });

  it('refuses parameter values that are not plain words or numbers, with 5200', () => {
    expect(() => parseSqliteDataSource('x.db?_busy_timeout=soon')).toThrowError(expect.objectContaining({ code: 5200 }));
    expect(() => parseSqliteDataSource('x.db?_journal_mode=WAL;DROP')).toThrowError(expect.objectContaining({ code: 5200 }));
  });
});

describe('openSqliteDatabase', () => {
  it('switches a new file to WAL while another connection holds its write lock, once the lock is free', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-sqlite-open-'));
    try {
      const filename = join(dir, 'certs.db');
      // A new file in SQLite's default rollback journal, as another process creating the store leaves it.
      const creator = new Database(filename);
      creator.exec('CREATE TABLE t (x INTEGER)');
      creator.close();
      // Another connection, on a thread of its own, takes the write lock and keeps it for 200 ms.
      const holder = new Worker(
        `const Database = require(${JSON.stringify(require.resolve('better-sqlite3'))});
         const { parentPort, workerData } = require('node:worker_threads');
         const db = new Database(workerData);
         db.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (1)');
         parentPort.postMessage('locked');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
         db.exec('COMMIT');
         db.close();
         parentPort.postMessage('released');`,
        { eval: true, workerData: filename },
      );
      const released = new Promise<void>((resolve) => holder.on('message', (message: string) => message === 'released' && resolve()));
      await new Promise<void>((resolve) => holder.once('message', () => resolve()));
      const db = openSqliteDatabase({ filename, readonly: false }, { busyTimeoutMs: 5000 });
      try {
        // Opened only after the other connection committed and let go of the lock (without waiting,
        // SQLite answers SQLITE_BUSY at once here), and in WAL mode.
        expect(db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(1);
        expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
        expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
      } finally {
        db.close();
      }
      await released;
      await holder.terminate();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens a file in WAL mode with the WAL size limit and statement journals in memory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'certsmith-open-sqlite-'));
    try {
      const db = openSqliteDatabase({ filename: join(dir, 'certs.db'), readonly: false });
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('journal_size_limit', { simple: true })).toBe(WAL_SIZE_LIMIT_BYTES);
      // 2 = MEMORY (TEMP_STORE): no temporary file for the statement journal of a recorded certificate.
      expect(db.pragma('temp_store', { simple: true })).toBe(2);
      expect(db.pragma('synchronous', { simple: true })).toBe(2);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
