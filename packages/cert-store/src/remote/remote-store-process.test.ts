import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { StoreError, StoreUnavailableError } from '../errors.js';
import type { CertificateChange } from '../model.js';
import { openStore } from '../open-store.js';
import type { Store } from '../store.js';
import { testIssuer } from '../test-support/certificates.js';
import { connectStore } from './connect-store.js';
import { serveStore } from './serve-store.js';
import { issuedCertificateFields } from '../certificate-row.js';
import { ipcChannel } from './store-channel.js';
import type { StoreChannel } from './store-channel.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-remote-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ownerScript = fileURLToPath(new URL('../test-support/remote-store-owner.mjs', import.meta.url));
const clientScript = fileURLToPath(new URL('../test-support/remote-store-client.mjs', import.meta.url));
const DAY = 86_400_000;
let files = 0;

interface Owner {
  child: ChildProcess;
  file: string;
  channel: StoreChannel & { sent: unknown[] };
  client: Store;
}

const running: ChildProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map(async (child) => await stopped(child)));
});

/** Fork a process that owns a fresh SQLite store, and connect to it over its IPC channel. */
async function startOwner(options: { callTimeoutMs?: number } = {}): Promise<Owner> {
  const file = join(dir, `owner-${(files += 1)}.db`);
  // Without vitest's NODE_OPTIONS and flags (its resolve conditions and loaders are for TypeScript sources).
  const { NODE_OPTIONS: _ignored, ...env } = process.env;
  const child = fork(ownerScript, [file], { serialization: 'advanced', env, execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  running.push(child);
  await new Promise<void>((resolve, reject) => {
    child.on('message', (message: { fixture?: string }) => message?.fixture === 'ready' && resolve());
    child.once('exit', (code) => reject(new Error(`the owner process exited with ${code} before serving`)));
  });
  const ipc = ipcChannel(child);
  const sent: unknown[] = [];
  const channel = {
    sent,
    send(message: unknown) {
      sent.push(message);
      ipc.send(message);
    },
    onMessage: ipc.onMessage,
    onClose: ipc.onClose!,
  };
  return { child, file, channel, client: connectStore(channel, { driver: 'sqlite3', ...options }) };
}

async function stopped(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

describe('a store served by another process over IPC (serialization: advanced)', () => {
  it('answers every method with what a store opened here reads from the same file, with the same types', async () => {
    const { client, file } = await startOwner();
    const issuer = testIssuer('Process CA');
    const leaves = Array.from({ length: 3 }, (_, i) => issuer.leaf(`p${i}.example`, { dns: [`p${i}.example`] }));
    const expiry = new Date(Date.now() + DAY);
    const records = await Promise.all(
      leaves.map(async (leaf, i) => await client.recordCertificate({ certificate: i === 0 ? leaf.pem : leaf.der, label: 'proc', ocspResponse: { body: Uint8Array.from([0x30, 0, i]), expiry } })),
    );
    await client.insertCertificate({ serial: '5', authorityKeyId: 'AA:BB', status: 'good', expiry, pem: leaves[0]!.pem, metadata: { imported: true } });
    await client.upsertOcspResponse({ serial: '5', authorityKeyId: 'AA:BB', body: Buffer.from([1, 0, 2]), expiry });
    const revoked = await client.revokeCertificate(records[1]!.serial, records[1]!.authorityKeyId, 4);
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(await client.nextCrlNumber('aa')).toBe(1n);

    const direct = await openStore({ driver: 'sqlite3', dataSource: file }, { sqlite: { thread: false } });
    try {
      for (const record of records) {
        expect(await client.getCertificate(record.serial, record.authorityKeyId)).toStrictEqual(await direct.getCertificate(record.serial, record.authorityKeyId));
        expect(await client.findCertificate(record.serial, record.authorityKeyId.toUpperCase())).toStrictEqual(
          await direct.findCertificate(record.serial, record.authorityKeyId.toUpperCase()),
        );
        const response = await client.getOcspResponse(record.serial, record.authorityKeyId);
        expect(response).toStrictEqual(await direct.getOcspResponse(record.serial, record.authorityKeyId));
        expect(Object.getPrototypeOf(response!.body)).toBe(Uint8Array.prototype);
      }
      expect(records[0]).toStrictEqual(await direct.getCertificate(records[0]!.serial, records[0]!.authorityKeyId));
      expect(await client.getCertificate('5', 'AA:BB')).toStrictEqual(await direct.getCertificate('5', 'AA:BB'));
      expect(await client.listCertificates({ label: 'proc', status: 'good' })).toStrictEqual(await direct.listCertificates({ label: 'proc', status: 'good' }));
      expect(await client.listOcspResponses({ limit: 2 })).toStrictEqual(await direct.listOcspResponses({ limit: 2 }));
      expect(await client.countCertificates()).toStrictEqual(await direct.countCertificates());
      const now = new Date();
      expect(await client.countExpiring({ now, withinMs: 2 * DAY })).toStrictEqual(await direct.countExpiring({ now, withinMs: 2 * DAY }));
      expect(await client.tidy({ now: new Date(Date.now() + 400 * DAY), bufferMs: 0 })).toMatchObject({ certificates: 4, ocspResponses: 4 });
      expect(await direct.countCertificates()).toEqual([]);
      await expect(client.ping()).resolves.toBeUndefined();
    } finally {
      await direct.close();
      await client.close();
    }
  });

  it('sends the records of one turn in one message and fails only a duplicate, with StoreError 11000', async () => {
    const { client, channel } = await startOwner();
    const issuer = testIssuer('Process Batch CA');
    const leaves = Array.from({ length: 40 }, (_, i) => issuer.leaf(`b${i}.example`));
    const results = await Promise.allSettled([
      ...leaves.map(async (leaf) => await client.recordCertificate({ certificate: leaf.pem, label: 'b' })),
      client.recordCertificate({ certificate: leaves[7]!.pem, label: 'b' }),
    ]);
    expect(channel.sent).toHaveLength(1);
    expect(results.slice(0, 40).map((result) => result.status)).toEqual(Array(40).fill('fulfilled'));
    const duplicate = (results[40] as PromiseRejectedResult).reason as StoreError;
    expect(duplicate).toBeInstanceOf(StoreError);
    expect(duplicate.code).toBe(11000);
    expect(duplicate.message).toMatch(/UNIQUE constraint failed/);
    expect((await client.listCertificates({ label: 'b', limit: 100 })).certificates).toHaveLength(40);
    await client.close();
  });

  it('fails only the call whose arguments cannot be cloned, with the others of its turn sent', async () => {
    const { client, channel } = await startOwner();
    const issuer = testIssuer('Process Clone CA');
    const [good, bad] = await Promise.allSettled([
      client.recordCertificate({ certificate: issuer.leaf('clone-ok.example').pem }),
      client.recordCertificate({ certificate: issuer.leaf('clone-bad.example').pem, metadata: { callback: () => undefined } }),
    ]);
    expect(good.status).toBe('fulfilled');
    expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect(((bad as PromiseRejectedResult).reason as Error).message).toMatch(/recordCertificate cannot be sent to the certificate store: .*could not be cloned/);
    await expect(client.ping()).resolves.toBeUndefined();
    expect(channel.sent.length).toBeGreaterThanOrEqual(2);
    await client.close();
  });

  it('pushes changes made through the owner to a watch held there', async () => {
    const { client } = await startOwner();
    const record = await client.recordCertificate({ certificate: testIssuer('Process Watch CA').leaf('w.example').pem, label: 'w' });
    let seen: (change: CertificateChange) => void = () => undefined;
    const first = new Promise<CertificateChange>((resolve) => (seen = resolve));
    const watch = client.watchChanges((change) => seen(change), { pollIntervalMs: 20, afterId: 0 });
    await client.revokeCertificate(record.serial, record.authorityKeyId, 1);
    const change = await first;
    await watch.close();
    expect(change).toMatchObject({ serial: record.serial, authorityKeyId: record.authorityKeyId, status: 'revoked', reason: 1, label: 'w' });
    expect(change.revokedAt).toBeInstanceOf(Date);
    await client.close();
  });

  it('answers 503 when the owner does not answer in time, and works again once it does', async () => {
    const { client, child } = await startOwner({ callTimeoutMs: 200 });
    await client.ping();
    // The owner's event loop is busy for 1.5 s (a message of another IPC user makes it so).
    child.send({ fixture: 'hold', ms: 1500 });
    const error = (await client.ping().catch((e: unknown) => e)) as StoreUnavailableError;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ code: 503, retryAfterSeconds: 1 });
    await expect(client.countCertificates()).rejects.toBeInstanceOf(StoreUnavailableError);
    // Bounded: the hold ends after 1.5 s; the probe's or a late answer ends the refusal.
    for (let i = 0; i < 100; i += 1) {
      if (await client.ping().then(() => true, () => false)) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expect(client.ping()).resolves.toBeUndefined();
    await client.close();
  });

  it('fails pending and new calls with 503 when the owner process dies', async () => {
    const { client, child } = await startOwner();
    await client.ping();
    child.send({ fixture: 'hold', ms: 5000 });
    const pending = client.ping();
    child.kill('SIGKILL');
    await expect(pending).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(client.countCertificates()).rejects.toMatchObject({ code: 503 });
    await client.close();
  });

  it('closes the client without ending the owner, which goes on serving others', async () => {
    const { client, child, channel } = await startOwner();
    const record = await client.recordCertificate({ certificate: testIssuer('Process Close CA').leaf('c.example').pem });
    await client.close();
    const second = connectStore(channel, { driver: 'sqlite3' });
    expect(await second.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ serial: record.serial });
    expect(child.exitCode).toBeNull();
    await second.close();
  });
});

describe('a store served to another process over IPC (this process owns it, as the primary does)', () => {
  it('gives the worker process the local types and error classes, and drops its subscription when it dies', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: join(dir, `primary-${(files += 1)}.db`) });
    const held = new Set<object>();
    const tracking = new Proxy(owner, {
      get(target, property) {
        if (property === 'watchChanges') {
          return (...args: Parameters<Store['watchChanges']>) => {
            const subscription = target.watchChanges(...args);
            const tracked = {
              close: async () => {
                held.delete(tracked);
                await subscription.close();
              },
            };
            held.add(tracked);
            return tracked;
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const leaf = testIssuer('Primary CA').leaf('worker.example');
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = fork(clientScript, [leaf.pem], { serialization: 'advanced', env, execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    running.push(child);
    const server = serveStore(tracking, ipcChannel(child));
    try {
      const messages: Array<Record<string, unknown>> = [];
      const next = (name: string) =>
        new Promise<Record<string, unknown>>((resolve, reject) => {
          const seen = messages.find((message) => message.fixture === name);
          if (seen !== undefined) return resolve(seen);
          const onMessage = (message: Record<string, unknown>) => message?.fixture === name && resolve(message);
          child.on('message', onMessage);
          child.once('exit', (code) => reject(new Error(`the worker process exited with ${code}`)));
        });
      child.on('message', (message: Record<string, unknown>) => messages.push(message));
      const report = await next('report');
      expect(report).toEqual({
        fixture: 'report',
        serial: expect.any(String),
        expiryIsDate: true,
        issuedAtMatches: true,
        bodyIsUint8Array: true,
        bodyBytes: [0x30, 0x00, 0xff],
        crlNumberType: 'bigint',
        duplicateIsStoreError: true,
        duplicateCode: 11000,
      });
      expect(await owner.getCertificate(report.serial as string, issuedCertificateFields(leaf.pem).authorityKeyId)).toMatchObject({ label: 'child' });
      await next('watching');
      expect(held.size).toBe(1);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ fixture: 'exit' });
      await exited;
      // Bounded: the disconnect arrives right after the exit.
      for (let i = 0; i < 200 && held.size > 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(held.size).toBe(0);
      await expect(owner.ping()).resolves.toBeUndefined();
    } finally {
      await server.close();
      await owner.close();
    }
  });
});

describe('processes committing their issued rows to the owner\'s SQLite file themselves (commitIssuedRowsTo)', () => {
  const writerScript = fileURLToPath(new URL('../test-support/remote-store-writer.mjs', import.meta.url));

  it('keeps every row of three writer processes and the owner exactly once, most of them committed without the owner', async () => {
    const file = join(dir, `shared-${(files += 1)}.db`);
    const owner = await openStore({ driver: 'sqlite3', dataSource: file });
    const issuer = testIssuer('Shared File CA');
    const template = issuer.leaf('shared.example');
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const rowsEach = 400;
    const writers = [0, 1, 2].map((i) => {
      const child = fork(writerScript, [file, template.pem, String(10_000_000 + i * 1_000_000), String(rowsEach), `writer-${i}`], {
        serialization: 'advanced',
        env,
        execArgv: [],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      running.push(child);
      return child;
    });
    // What reaches the owner: the records it commits for the writers (collisions, no others here).
    let recordsAtOwner = 0;
    const servers = writers.map((child) => {
      const ipc = ipcChannel(child);
      return serveStore(owner, {
        send: (message) => ipc.send(message),
        onMessage: (listener) =>
          ipc.onMessage((message) => {
            for (const call of (message as { calls?: Array<{ method: string }> }).calls ?? []) if (call.method === 'recordCertificate') recordsAtOwner += 1;
            listener(message);
          }),
        onClose: ipc.onClose!,
      });
    });
    const message = (child: ChildProcess, name: string) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        child.on('message', (m: Record<string, unknown>) => m?.fixture === name && resolve(m));
        child.once('exit', (code) => reject(new Error(`a writer process exited with ${code}`)));
      });
    try {
      await Promise.all(writers.map(async (child) => await message(child, 'ready')));
      const done = writers.map(async (child) => await message(child, 'done'));
      for (const child of writers) child.send({ fixture: 'go' });
      // The owner records too, in turns, while the writers do: its own writer meets theirs.
      const ownerSerials: string[] = [];
      const base = issuedCertificateFields(template.pem);
      for (let turn = 0; turn < 100; turn += 1) {
        const records = await Promise.all(
          [0, 1, 2].map(async (i) => await owner.recordCertificate({ certificate: { ...base, serial: String(50_000_000 + turn * 3 + i) }, label: 'owner' })),
        );
        ownerSerials.push(...records.map((record) => record.serial));
      }
      const reports = await Promise.all(done);
      const serials = [...ownerSerials, ...reports.flatMap((report) => report.serials as string[])];
      expect(reports.flatMap((report) => report.failed as string[])).toEqual([]);
      expect(new Set(serials).size).toBe(3 * rowsEach + 300);
      const counted = await owner.countCertificates();
      expect(counted.reduce((sum, entry) => sum + entry.count, 0)).toBe(3 * rowsEach + 300);
      for (const [i, report] of reports.entries()) {
        const stored = await Promise.all((report.serials as string[]).slice(0, 20).map(async (serial) => await owner.getCertificate(serial, base.authorityKeyId)));
        for (const row of stored) expect(row).toMatchObject({ label: `writer-${i}`, status: 'good' });
      }
      expect(recordsAtOwner).toBeLessThan(3 * rowsEach);
    } finally {
      await Promise.all(servers.map(async (server) => await server.close()));
      await owner.close();
    }
  });
});
