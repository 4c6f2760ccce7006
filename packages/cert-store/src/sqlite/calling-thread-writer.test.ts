import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { StoreUnavailableError } from '../errors.js';
import { issuedCertificateFields, issuedCertificateRow } from '../certificate-row.js';
import type { IssuedCertificateFields } from '../model.js';
import { testIssuer } from '../test-support/certificates.js';
import { BUSY_RETRY_ATTEMPTS, CHECKPOINT_EVERY_COMMITS, CHECKPOINT_EVERY_ROWS, COMMITS_JUDGED, CallingThreadWriter, SLOW_COMMIT_MS, SLOW_DISK_PAUSE_MS, supportsCallingThreadWriter } from './calling-thread-writer.js';
import { parseSqliteDataSource } from './sqlite-database.js';
import { openInlineExecutor } from './sqlite-executor.js';
import type { SqliteExecutor } from './sqlite-executor.js';
import { SqliteStore } from './sqlite-store.js';
import { WalSync } from './wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-calling-thread-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const issuer = testIssuer('Calling Thread CA');

/**
 * A store whose "thread" is an executor on this thread that counts what it is asked and can hold
 * `insertCertificates` until released; issued rows go through a calling-thread writer on the same file.
 */
async function harness(options: { clock?: () => number; dataSourceQuery?: string } = {}) {
  const file = join(dir, `store-${(n += 1)}.db`);
  const source = parseSqliteDataSource(`${file}${options.dataSourceQuery ?? ''}`);
  const inner = await openInlineExecutor({ source, migrations: 'apply' });
  const calls: string[] = [];
  let hold: Promise<void> = Promise.resolve();
  const executor: SqliteExecutor = {
    async call(method, ...args) {
      calls.push(method);
      if (method === 'insertCertificates') await hold;
      return await inner.call(method, ...args);
    },
    close: () => inner.close(),
  };
  const writer = new CallingThreadWriter(source, options);
  const store = new SqliteStore(executor, { writer });
  return {
    file,
    writer,
    store,
    calls,
    holdThreadInserts(until: Promise<void>) {
      hold = until;
    },
  };
}

/** Row fields for a made-up certificate (cheap: thousands of rows), serials in issuing order. */
function fields(index: number): IssuedCertificateFields {
  const template = issuedCertificateFields(issuer.leaf('template.example').der);
  return { ...template, serial: `${1_000_000_000 + index}` };
}

describe('SqliteStore with a calling-thread writer', () => {
  it('commits issued rows on the calling thread, never posting them to the thread', async () => {
    const h = await harness();
    const leaves = ['a.example', 'b.example', 'c.example'].map((name) => issuer.leaf(name));
    const records = await Promise.all(leaves.map((leaf) => h.store.recordCertificate({ certificate: leaf.der, label: 'web', ocspResponse: { body: Uint8Array.of(0x30, 0), expiry: new Date('2030-01-01T00:00:00Z') } })));
    expect(h.calls).not.toContain('insertCertificates');
    for (const record of records) {
      expect(await h.store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ label: 'web', status: 'good' });
      expect((await h.store.getOcspResponse(record.serial, record.authorityKeyId))?.body).toEqual(Uint8Array.of(0x30, 0));
    }
    await h.store.close();
  });

  it(`hands the batch to the thread when another connection holds the write lock for ${BUSY_RETRY_ATTEMPTS} attempts, and the thread waits for it`, async () => {
    // A stopped clock: the attempts, not the time, end the retries.
    const h = await harness({ clock: () => 0 });
    await h.store.recordCertificate({ certificate: issuer.leaf('warm.example').der });
    const attempts = vi.spyOn(h.writer, 'write');
    const other = new Database(h.file);
    other.exec('BEGIN IMMEDIATE');
    let release!: () => void;
    h.holdThreadInserts(new Promise<void>((resolve) => (release = resolve)));
    const leaf = issuer.leaf('locked.example');
    const recording = h.store.recordCertificate({ certificate: leaf.der, label: 'locked' });
    // Bounded: 1,000 ms at most; the retries take ≈BUSY_RETRY_ATTEMPTS ms.
    for (let waited = 0; waited < 1000 && !h.calls.includes('insertCertificates'); waited += 1) await new Promise((resolve) => setTimeout(resolve, 1));
    expect(h.calls).toContain('insertCertificates');
    expect(attempts).toHaveBeenCalledTimes(BUSY_RETRY_ATTEMPTS);
    other.exec('COMMIT');
    other.close();
    release();
    const record = await recording;
    expect(await h.store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ label: 'locked' });
    await h.store.close();
  });

  it('commits here a batch whose lock is released within a few turns, without the thread', async () => {
    const h = await harness({ clock: () => 0 });
    await h.store.recordCertificate({ certificate: issuer.leaf('warm2.example').der });
    const other = new Database(h.file);
    other.exec('BEGIN IMMEDIATE');
    const recording = h.store.recordCertificate({ certificate: issuer.leaf('briefly.example').der, label: 'briefly' });
    for (let turn = 0; turn < 3; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve));
    other.exec('COMMIT');
    other.close();
    const record = await recording;
    expect(h.calls).not.toContain('insertCertificates');
    expect(await h.store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ label: 'briefly' });
    await h.store.close();
  });

  it('sends a batch with a duplicate to the thread, which fails only that row (11000) and keeps the first', async () => {
    const h = await harness();
    const leaf = issuer.leaf('twice.example');
    const first = await h.store.recordCertificate({ certificate: leaf.der, label: 'first' });
    const other = issuer.leaf('other.example');
    const [again, fine] = await Promise.allSettled([h.store.recordCertificate({ certificate: leaf.der, label: 'second' }), h.store.recordCertificate({ certificate: other.der })]);
    expect(again).toMatchObject({ status: 'rejected', reason: { code: 11000 } });
    expect(fine.status).toBe('fulfilled');
    expect(h.calls.filter((call) => call === 'insertCertificates')).toHaveLength(1);
    expect(await h.store.getCertificate(first.serial, first.authorityKeyId)).toMatchObject({ label: 'first' });
    await h.store.close();
  });

  it(`asks the thread for a checkpoint every ${CHECKPOINT_EVERY_ROWS} rows written here`, async () => {
    // A stopped clock: batches of 500 rows are not taken for a slow disk.
    const h = await harness({ clock: () => 0 });
    for (let batch = 0; batch < (2 * CHECKPOINT_EVERY_ROWS) / 500 + 1; batch++) {
      await Promise.all(Array.from({ length: 500 }, (_, i) => h.store.recordCertificate({ certificate: fields(batch * 500 + i) })));
    }
    expect(h.calls.filter((call) => call === 'checkpoint')).toHaveLength(2);
    expect(h.calls).not.toContain('insertCertificates');
    const counted = await h.store.countCertificates();
    expect(counted.reduce((sum, entry) => sum + entry.count, 0)).toBe(2 * CHECKPOINT_EVERY_ROWS + 500);
    await h.store.close();
  });

  it(`asks the thread for a checkpoint every ${CHECKPOINT_EVERY_COMMITS} commits of one row`, async () => {
    const h = await harness({ clock: () => 0 });
    for (let i = 0; i < CHECKPOINT_EVERY_COMMITS + 10; i += 1) await h.store.recordCertificate({ certificate: fields(i) });
    expect(h.calls.filter((call) => call === 'checkpoint')).toHaveLength(1);
    expect(h.calls).not.toContain('insertCertificates');
    await h.store.close();
  });
});

describe('CallingThreadWriter durability', () => {
  afterEach(() => vi.restoreAllMocks());
  const turns = async (count: number) => {
    for (let turn = 0; turn < count; turn += 1) await new Promise<void>((resolve) => setImmediate(resolve));
  };

  it('answers a record only once the WAL file is synced after its commit (FULL, the default)', async () => {
    let synced!: () => void;
    const syncs = vi.spyOn(WalSync.prototype, 'afterCommit').mockImplementation(() => new Promise<void>((resolve) => (synced = resolve)));
    const h = await harness();
    let answered = false;
    const recording = h.store.recordCertificate({ certificate: issuer.leaf('synced.example').der }).then((record) => {
      answered = true;
      return record;
    });
    await turns(5);
    expect(syncs).toHaveBeenCalledTimes(1);
    // Committed (another connection reads it), not yet answered.
    const other = new Database(h.file, { readonly: true });
    expect((other.prepare('SELECT count(*) AS n FROM certificates').get() as { n: number }).n).toBe(1);
    other.close();
    expect(answered).toBe(false);
    synced();
    const record = await recording;
    expect(await h.store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ status: 'good' });
    expect(h.calls).not.toContain('insertCertificates');
    await h.store.close();
  });

  it('fails the records of a commit whose sync failed with the store\'s 503, never answering them', async () => {
    vi.spyOn(WalSync.prototype, 'afterCommit').mockRejectedValueOnce(new StoreUnavailableError('the SQLite WAL file could not be synced: EIO'));
    const h = await harness();
    await expect(h.store.recordCertificate({ certificate: issuer.leaf('unsynced.example').der })).rejects.toBeInstanceOf(StoreUnavailableError);
    // The next commit syncs again.
    vi.mocked(WalSync.prototype.afterCommit).mockRestore();
    const record = await h.store.recordCertificate({ certificate: issuer.leaf('after.example').der });
    expect(await h.store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ status: 'good' });
    await h.store.close();
  });

  it('syncs the WAL file beside the database, found from a relative data source as SQLite finds it', async () => {
    // The first commit (in the database's directory) opens the connection but not yet the WAL file.
    const syncs = vi.spyOn(WalSync.prototype, 'afterCommit').mockResolvedValueOnce(undefined);
    const cwd = process.cwd();
    process.chdir(dir);
    let writer: CallingThreadWriter;
    try {
      const file = `relative-${(n += 1)}.db`;
      await (await openInlineExecutor({ source: parseSqliteDataSource(file), migrations: 'apply' })).close();
      writer = new CallingThreadWriter(parseSqliteDataSource(file));
      expect(await writer.commit([issuedCertificateRow({ certificate: fields(1) }, new Date())])).toBe(true);
    } finally {
      process.chdir(cwd);
    }
    // From another working directory, the next commit opens and syncs the database's WAL file.
    expect(await writer.commit([issuedCertificateRow({ certificate: fields(2) }, new Date())])).toBe(true);
    expect(syncs).toHaveBeenCalledTimes(2);
    writer.close();
  });

  it('leaves durability to SQLite when the data source chose NORMAL', async () => {
    const syncs = vi.spyOn(WalSync.prototype, 'afterCommit');
    const h = await harness({ dataSourceQuery: '?_sync=NORMAL' });
    const record = await h.store.recordCertificate({ certificate: issuer.leaf('normal.example').der });
    expect(await h.store.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ status: 'good' });
    expect(syncs).not.toHaveBeenCalled();
    expect(h.calls).not.toContain('insertCertificates');
    await h.store.close();
  });
});

describe('CallingThreadWriter on a slow disk', () => {
  /**
   * A clock in which each commit here takes the next of `durations` ms (then 0): a write reads it
   * three times (pause check, start, end), the end read moves it on.
   */
  function commitClock(durations: number[]) {
    const clock = { now: 0, reads: 0 };
    return Object.assign(() => (clock.now += clock.reads++ % 3 === 2 ? (durations.shift() ?? 0) : 0), { advance: (ms: number) => void (clock.now += ms) });
  }
  const record = async (h: Awaited<ReturnType<typeof harness>>, from: number, count: number) => {
    for (let i = from; i < from + count; i++) await h.store.recordCertificate({ certificate: fields(i) });
  };
  const inserts = (h: Awaited<ReturnType<typeof harness>>) => h.calls.filter((call) => call === 'insertCertificates').length;

  it(`leaves commits to the thread for a while once the median of ${COMMITS_JUDGED} takes over ${SLOW_COMMIT_MS} ms`, async () => {
    const clock = commitClock(Array.from({ length: COMMITS_JUDGED }, () => 2 * SLOW_COMMIT_MS));
    const h = await harness({ clock });
    await record(h, 0, COMMITS_JUDGED);
    expect(inserts(h)).toBe(0);
    await record(h, 100, 1);
    expect(inserts(h)).toBe(1);
    clock.advance(SLOW_DISK_PAUSE_MS);
    await record(h, 200, 1);
    expect(inserts(h)).toBe(1);
    await h.store.close();
  });

  it('keeps committing here through a few long commits', async () => {
    const durations = Array.from({ length: COMMITS_JUDGED }, (_, i) => (i % 4 === 0 ? 40 : 0.3));
    const h = await harness({ clock: commitClock(durations) });
    await record(h, 0, COMMITS_JUDGED + 1);
    expect(inserts(h)).toBe(0);
    await h.store.close();
  });
});

describe('supportsCallingThreadWriter', () => {
  it('is true for a WAL file and false for memory, read-only or rollback-journal sources', () => {
    expect(supportsCallingThreadWriter(parseSqliteDataSource('/var/lib/certsmith/certs.db'))).toBe(true);
    expect(supportsCallingThreadWriter(parseSqliteDataSource(':memory:'))).toBe(false);
    expect(supportsCallingThreadWriter(parseSqliteDataSource('file:certs.db?mode=ro'))).toBe(false);
    expect(supportsCallingThreadWriter(parseSqliteDataSource('certs.db?_journal_mode=DELETE'))).toBe(false);
    expect(supportsCallingThreadWriter(parseSqliteDataSource('certs.db?_journal_mode=wal'))).toBe(true);
  });
});
