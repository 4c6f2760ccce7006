import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreErrorCode, StoreUnavailableError } from '../errors.js';
import { WalSync } from './wal-sync.js';
import type { SyncableFile } from './wal-sync.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-wal-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A WAL file whose syncs end when the test says, counting opens, syncs and closes. */
function heldFile() {
  const syncs: Array<{ finish: (error?: Error) => void }> = [];
  const counts = { opens: 0, closes: 0 };
  const file: SyncableFile = {
    datasync: () => new Promise<void>((resolve, reject) => syncs.push({ finish: (error) => (error === undefined ? resolve() : reject(error)) })),
    close: async () => void (counts.closes += 1),
  };
  const openFile = async () => {
    counts.opens += 1;
    return file;
  };
  return { syncs, counts, openFile };
}

/** Lets the promise callbacks queued so far run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('WalSync', () => {
  it('syncs the real WAL file and resolves', async () => {
    const wal = join(dir, 'real.db-wal');
    writeFileSync(wal, 'frames');
    const sync = new WalSync(wal);
    await expect(sync.afterCommit()).resolves.toBeUndefined();
    await sync.close();
  });

  it('makes commits that end during a sync wait for the next one, which they all share', async () => {
    const { syncs, openFile } = heldFile();
    const sync = new WalSync('held.db-wal', { openFile });
    const done: string[] = [];
    const first = sync.afterCommit().then(() => done.push('first'));
    await settle();
    expect(syncs).toHaveLength(1);
    // Their frames may have been written after the running sync began: it does not cover them.
    const second = sync.afterCommit().then(() => done.push('second'));
    const third = sync.afterCommit().then(() => done.push('third'));
    await settle();
    expect(syncs).toHaveLength(1);
    syncs[0]!.finish();
    await first;
    await settle();
    expect(done).toEqual(['first']);
    expect(syncs).toHaveLength(2);
    syncs[1]!.finish();
    await Promise.all([second, third]);
    expect(done).toEqual(['first', 'second', 'third']);
    await sync.close();
  });

  it('fails the commits of a failed sync with a 503 of the store, and syncs again for the next', async () => {
    const { syncs, openFile } = heldFile();
    const sync = new WalSync('failing.db-wal', { openFile });
    const failed = sync.afterCommit();
    await settle();
    syncs[0]!.finish(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const error = await failed.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe(StoreErrorCode.Unavailable);
    const next = sync.afterCommit();
    await settle();
    expect(syncs).toHaveLength(2);
    syncs[1]!.finish();
    await expect(next).resolves.toBeUndefined();
    await sync.close();
  });

  it('opens the file again when it could not be opened', async () => {
    let opens = 0;
    const sync = new WalSync(join(dir, 'missing.db-wal'), {
      openFile: async () => {
        opens += 1;
        if (opens === 1) throw Object.assign(new Error('ENOENT: no such file or directory'), { code: 'ENOENT' });
        return { datasync: async () => undefined, close: async () => undefined };
      },
    });
    await expect(sync.afterCommit()).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(sync.afterCommit()).resolves.toBeUndefined();
    expect(opens).toBe(2);
    await sync.close();
  });

  it('closes the file only after the syncs asked for, and refuses later ones', async () => {
    const { syncs, counts, openFile } = heldFile();
    const sync = new WalSync('closing.db-wal', { openFile });
    const pending = sync.afterCommit();
    await settle();
    const closing = sync.close();
    await settle();
    expect(counts.closes).toBe(0);
    syncs[0]!.finish();
    await pending;
    await closing;
    expect(counts).toEqual({ opens: 1, closes: 1 });
    await expect(sync.afterCommit()).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});
