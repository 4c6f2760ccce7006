import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openStore } from '@certsmith/cert-store';
import { afterAll, describe, expect, it } from 'vitest';
import { guessTrustFiles, prestartServeStore, readServeFlags } from './serve-prestart.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-serve-prestart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('readServeFlags', () => {
  it('reads the long flags in both dash styles, with or without =', () => {
    const flags = readServeFlags(['--data-dir', '/d', '-ca-bundle=/r.pem', '-int-bundle', 'i.pem', '--metadata=m.json', '--no-store', '--allow-private-networks', '--port', '0']);
    expect(Object.fromEntries(flags)).toEqual({
      'data-dir': '/d',
      'ca-bundle': '/r.pem',
      'int-bundle': 'i.pem',
      metadata: 'm.json',
      'no-store': '',
      'allow-private-networks': '',
      port: '0',
    });
  });
});

describe('guessTrustFiles', () => {
  it('gives the trust files as absolute paths, none without trust flags or with bundle disabled', () => {
    expect(guessTrustFiles(readServeFlags(['--ca-bundle', 'roots.pem', '--metadata', '/m.json']))).toEqual({ caBundleFile: resolve('roots.pem'), metadataFile: '/m.json' });
    expect(guessTrustFiles(readServeFlags(['--port', '0']))).toBeUndefined();
    expect(guessTrustFiles(readServeFlags(['--ca-bundle', 'r.pem', '--disable', 'sign,bundle']))).toBeUndefined();
  });
});

describe('prestartServeStore', () => {
  it('opens the default store of --data-dir when it exists, and guesses nothing when the flags name another store', async () => {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    await expect(prestartServeStore(readServeFlags(['--data-dir', dataDir]))).resolves.toBeUndefined();
    const config = { driver: 'sqlite3' as const, dataSource: join(dataDir, 'certs.db') };
    await (await openStore(config, { migrations: 'apply', sqlite: { thread: false } })).close();
    const prestarted = await prestartServeStore(readServeFlags(['--data-dir', dataDir]));
    expect(prestarted).toBeDefined();
    const store = await prestarted!.take(config, 'apply');
    expect(store).not.toBeNull();
    await store!.close();
    await expect(prestartServeStore(readServeFlags(['--data-dir', dataDir, '--db-config', 'db.json']))).resolves.toBeUndefined();
    await expect(prestartServeStore(readServeFlags(['--data-dir', dataDir, '--no-store']))).resolves.toBeUndefined();
    // Default data directory from the environment, as the server resolves it.
    const fromEnv = await prestartServeStore(readServeFlags([]), { XDG_DATA_HOME: dir, HOME: dir });
    expect(fromEnv).toBeUndefined();
  });
});
