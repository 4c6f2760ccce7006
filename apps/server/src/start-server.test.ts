import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, defineOperation } from '@certsmith/http-api';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from './start-server.js';
import type { RunningServer, StartServerOptions } from './start-server.js';
import { readTrustSnapshot } from '@certsmith/bundler';
import { prestartStore } from '@certsmith/cert-store';

describe('startServer', () => {
  let dir: string;
  let server: RunningServer | undefined;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certsmith-start-'));
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('listens on 127.0.0.1 with port 0, serves health and certinfo, and closes', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    server = await startServer({
      port: 0,
      workers: 1,
      dataDir: join(dir, 'data'),
      logger: createLogger({ level: 'debug', destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } }),
      operations: [defineOperation({ name: 'slow', method: 'POST', handle: () => released.then(() => ({ done: true })) })],
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.port).toBeGreaterThan(0);
    expect(lines.find((line) => line['msg'] === 'listening')).toMatchObject({
      url: server.url,
      operations: expect.arrayContaining(['health', 'certinfo', 'newkey', 'newcert', 'info', 'sign', 'slow']),
    });
    // No profile has an auth_key: CFSSL would not enable authsign either.
    expect((lines.find((line) => line['msg'] === 'listening')!['operations'] as string[]).includes('authsign')).toBe(false);

    const health = await fetch(`${server.url}/api/v1/cfssl/health`);
    expect(await health.json()).toEqual({ success: true, result: { healthy: true, signers: { default: { healthy: true } }, store: { healthy: true, driver: 'sqlite3' } }, errors: [], messages: [] });
    const certinfo = await fetch(`${server.url}/api/v1/cfssl/certinfo`, { method: 'POST', body: '{"certificate":"junk"}' });
    expect(await certinfo.json()).toMatchObject({ errors: [{ code: 1002 }] });

    // A request in flight when close() starts still completes.
    const inFlight = fetch(`${server.url}/api/v1/cfssl/slow`, { method: 'POST' });
    const deadline = Date.now() + 10_000;
    while (!lines.some((line) => line['msg'] === 'request started' && line['path'] === '/api/v1/cfssl/slow')) {
      if (Date.now() > deadline) throw new Error('the slow request never reached the server');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const closed = server.close();
    setTimeout(release, 100);
    const response = await inFlight;
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toMatchObject({ success: true, result: { done: true } });
    await closed;
    await expect(fetch(`${server.url}/api/v1/cfssl/health`)).rejects.toThrow();
    server = undefined;
  });

  it('loads the trust files in the workers before listening and fails start-up on a broken one', async () => {
    const rootPem = new TestPki({ now: new Date() }).root('Start Trust Root').pem;
    const roots = join(dir, 'roots.pem');
    await writeFile(roots, rootPem);
    const metadata = join(dir, 'metadata.json');
    await writeFile(metadata, JSON.stringify([{ name: 'P', weight: 1, hash_algo: 'SHA2', key_algo: 'RSA', keystore: 'roots.pem' }]));
    const logged: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) } });
    const running = await startServer({ port: 0, workers: 2, dataDir: join(dir, 'data'), caBundleFile: roots, intBundleFile: roots, metadataFile: metadata, logger });
    try {
      expect(logged.find((line) => line['msg'] === 'trust files loaded')).toMatchObject({ trust: { roots: 1, intermediates: 1, platforms: 1 } });
      // Loaded before 'listening': the warm-up is part of start-up.
      expect(logged.findIndex((line) => line['msg'] === 'trust files loaded')).toBeLessThan(logged.findIndex((line) => line['msg'] === 'listening'));
    } finally {
      await running.close();
    }

    const broken = join(dir, 'broken.json');
    await writeFile(broken, '{"name":');
    await expect(startServer({ port: 0, workers: 2, dataDir: join(dir, 'data'), caBundleFile: roots, metadataFile: broken })).rejects.toMatchObject({
      code: 4003,
      flag: '--metadata',
      exitCode: 2,
    });
    const ints = join(dir, 'ints.pem');
    await writeFile(ints, `${rootPem}\nnot a certificate\n`);
    await expect(startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), caBundleFile: roots, intBundleFile: ints })).rejects.toMatchObject({
      code: 3003,
      flag: '--int-bundle',
    });
    await expect(startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), caBundleFile: join(dir, 'missing.pem') })).rejects.toMatchObject({
      code: 4001,
      flag: '--ca-bundle',
    });
  });

  it('builds its pools from trust files read earlier only when they are its own files, and reads a failed reading again', async () => {
    const pki = new TestPki({ now: new Date() });
    const one = join(dir, 'one-root.pem');
    await writeFile(one, pki.root('Prestart Root A').pem);
    const two = join(dir, 'two-roots.pem');
    await writeFile(two, `${pki.root('Prestart Root B').pem}\n${pki.root('Prestart Root C').pem}`);
    const snapshotOfTwo = readTrustSnapshot({ caBundleFile: two });
    const loaded = async (prestartedTrust: StartServerOptions['prestartedTrust']): Promise<unknown> => {
      const logged: Record<string, unknown>[] = [];
      const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) } });
      const running = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), caBundleFile: one, logger, ...(prestartedTrust === undefined ? {} : { prestartedTrust }) });
      await running.close();
      return logged.find((line) => line['msg'] === 'trust files loaded')?.['trust'];
    };
    // Taken when the files are the server's (here a snapshot of other contents, to tell).
    await expect(loaded({ files: { caBundleFile: one }, snapshot: snapshotOfTwo })).resolves.toMatchObject({ roots: 2 });
    // Not taken for other files.
    await expect(loaded({ files: { caBundleFile: two }, snapshot: snapshotOfTwo })).resolves.toMatchObject({ roots: 1 });
    await expect(loaded({ files: { caBundleFile: one, intBundleFile: two }, snapshot: snapshotOfTwo })).resolves.toMatchObject({ roots: 1 });
    // A reading that failed is done again, and a broken file is reported as without it.
    await expect(loaded({ files: { caBundleFile: one }, snapshot: Promise.reject(new Error('thread gone')) })).resolves.toMatchObject({ roots: 1 });
    await expect(
      startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), caBundleFile: join(dir, 'missing.pem'), prestartedTrust: { files: { caBundleFile: join(dir, 'missing.pem') }, snapshot: Promise.reject(new Error('no file')) } }),
    ).rejects.toMatchObject({ code: 4001, flag: '--ca-bundle' });
  });

  it('takes a store opened earlier when it is the store its options name, and closes it otherwise', async () => {
    const dataDir = join(dir, 'prestarted-store');
    const first = await startServer({ port: 0, workers: 1, dataDir, logger: createLogger({ level: 'silent' }) });
    await first.close();
    const config = { driver: 'sqlite3' as const, dataSource: join(dataDir, 'certs.db') };
    const prestarted = prestartStore(config, { migrations: 'apply' });
    const running = await startServer({ port: 0, workers: 1, dataDir, logger: createLogger({ level: 'silent' }), prestartedStore: prestarted });
    try {
      await expect(prestarted.take(config, 'apply')).resolves.toBeNull();
      expect(await (await fetch(`${running.url}/api/v1/cfssl/health`)).json()).toMatchObject({ result: { store: { healthy: true, driver: 'sqlite3' } } });
    } finally {
      await running.close();
    }
    await expect(running.store!.ping()).rejects.toThrow();
    // --no-store: the guess is closed, start-up goes on without a store.
    const unused = prestartStore(config, { migrations: 'apply' });
    const storeless = await startServer({ port: 0, workers: 1, dataDir, store: { enabled: false }, logger: createLogger({ level: 'silent' }), prestartedStore: unused });
    try {
      expect(storeless.store).toBeNull();
      await expect(unused.take(config, 'apply')).resolves.toBeNull();
    } finally {
      await storeless.close();
    }
  });

  it('starts with a trust certificate that indexes but does not parse in full, and reports it after listening', async () => {
    const pki = new TestPki({ now: new Date() });
    const good = pki.root('Good Trust Root').pem;
    // notBefore's digits replaced by letters: the structure is intact (start-up reads only that), the
    // full parse refuses the time (1003).
    const der = Buffer.from(pki.root('Bad Time Root').pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
    const time = der.indexOf(Buffer.from([0x17, 0x0d]));
    der.fill('A'.charCodeAt(0), time + 2, time + 14);
    const bad = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
    const roots = join(dir, 'roots-with-bad-time.pem');
    await writeFile(roots, `${good}\n${bad}`);
    let reported!: (line: Record<string, unknown>) => void;
    const report = new Promise<Record<string, unknown>>((resolve) => (reported = resolve));
    const logger = createLogger({
      level: 'info',
      destination: {
        write: (line: string) => {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (parsed['code'] === 1003) reported(parsed);
        },
      },
    });
    const running = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), caBundleFile: roots, logger });
    try {
      expect((await fetch(`${running.url}/api/v1/cfssl/health`)).status).toBe(200);
      expect(await report).toMatchObject({ flag: '--ca-bundle', certificate: 1, level: 50 });
    } finally {
      await running.close();
    }
  });

  it('rejects with the coded option error before listening', async () => {
    await expect(startServer({ port: 0, dataDir: join(dir, 'data'), caKeyFile: join(dir, 'nope.pem') })).rejects.toMatchObject({
      code: 2001,
      flag: '--ca-key',
    });
  });
});
