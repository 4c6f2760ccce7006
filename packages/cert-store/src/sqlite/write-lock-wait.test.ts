import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../open-store.js';
import { testIssuer } from '../test-support/certificates.js';
import { withWriteLock } from './write-lock-wait.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-write-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const nextFile = () => join(dir, `store-${(n += 1)}.db`);

function walFile(busyTimeoutMs: number): { file: string; db: Database.Database } {
  const file = nextFile();
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  db.exec('CREATE TABLE t (v INTEGER)');
  return { file, db };
}

describe('withWriteLock', () => {
  it('fails with SQLITE_BUSY once the lock stayed taken for the timeout, and restores the busy timeout', () => {
    const { file, db } = walFile(30);
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const insert = db.transaction(() => db.prepare('INSERT INTO t VALUES (1)').run());
    let attempts = 0;
    expect(() =>
      withWriteLock(db, 30, () => {
        attempts += 1;
        return insert.immediate();
      }),
    ).toThrowError(expect.objectContaining({ code: 'SQLITE_BUSY' }));
    expect(attempts).toBeGreaterThan(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(30);
    other.exec('ROLLBACK');
    expect(withWriteLock(db, 30, () => insert.immediate()).changes).toBe(1);
    other.close();
    db.close();
  });

  it('throws any other error at once', () => {
    const { db } = walFile(1000);
    let attempts = 0;
    expect(() =>
      withWriteLock(db, 1000, () => {
        attempts += 1;
        return db.prepare('INSERT INTO missing VALUES (1)').run();
      }),
    ).toThrowError(/no such table/);
    expect(attempts).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(1000);
    db.close();
  });

  it("lets the store's thread commit a batch once another process's writer lets go of the lock", async () => {
    const file = nextFile();
    const store = await openStore({ driver: 'sqlite3', dataSource: file }, { sqlite: { recordOnCallingThread: false } });
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    const issuer = testIssuer('Write Lock CA');
    const recording = store.recordCertificate({ certificate: issuer.leaf('waited.example').der, label: 'waited' });
    let settled = false;
    void recording.finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(settled).toBe(false);
    other.exec('COMMIT');
    other.close();
    const record = await recording;
    expect(await store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ label: 'waited' });
    await store.close();
  });
});
