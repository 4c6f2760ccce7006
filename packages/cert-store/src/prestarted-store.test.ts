import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkStore, openStore } from './open-store.js';
import { prestartStore } from './prestarted-store.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-prestarted-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite store file with the current schema. */
async function migrated(name: string): Promise<{ driver: 'sqlite3'; dataSource: string }> {
  const config = { driver: 'sqlite3' as const, dataSource: join(dir, name) };
  await (await openStore(config, { migrations: 'apply', sqlite: { thread: false } })).close();
  return config;
}

describe('prestartStore', () => {
  it('hands its store to the first taker asking for the same store, with apply or check', async () => {
    const config = await migrated('same.db');
    const prestarted = prestartStore(config, { migrations: 'apply' });
    const store = await prestarted.take({ ...config }, 'apply');
    try {
      expect(store).not.toBeNull();
      await expect(store!.ping()).resolves.toBeUndefined();
      // Only once; a later close() leaves the taken store open.
      await expect(prestarted.take(config, 'apply')).resolves.toBeNull();
      await prestarted.close();
      await expect(store!.ping()).resolves.toBeUndefined();
    } finally {
      await store?.close();
    }
    const checked = prestartStore(config, { migrations: 'check' });
    const again = await checked.take(config, 'check');
    expect(again).not.toBeNull();
    await again!.close();
  });

  it('is not taken for another store, nor by a server running with migrations off', async () => {
    const config = await migrated('other.db');
    await expect(prestartStore(config, { migrations: 'apply' }).take({ driver: 'sqlite3', dataSource: join(dir, 'elsewhere.db') }, 'apply')).resolves.toBeNull();
    await expect(prestartStore(config, { migrations: 'apply' }).take(config, 'off')).resolves.toBeNull();
    const off = prestartStore(config, { migrations: 'off' });
    const store = await off.take(config, 'off');
    expect(store).not.toBeNull();
    await store!.close();
  });

  it('changes nothing in a database with pending migrations: the guess fails and the taker opens it itself', async () => {
    const config = { driver: 'sqlite3' as const, dataSource: join(dir, 'fresh.db') };
    const prestarted = prestartStore(config, { migrations: 'apply' });
    await expect(prestarted.take(config, 'apply')).resolves.toBeNull();
    expect((await checkStore(config)).applied).toEqual([]);
    const store = await openStore(config, { migrations: 'apply' });
    await store.close();
    expect((await checkStore(config)).pending).toEqual([]);
  });

  it('closes a store nobody took', async () => {
    const config = await migrated('untaken.db');
    const prestarted = prestartStore(config, { migrations: 'apply' });
    await prestarted.close();
    await expect(prestarted.take(config, 'apply')).resolves.toBeNull();
  });
});
