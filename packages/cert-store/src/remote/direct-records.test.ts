import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { issuedCertificateFields } from '../certificate-row.js';
import type { DbConfig } from '../db-config.js';
import { StoreClosedError } from '../errors.js';
import type { IssuedCertificateFields } from '../model.js';
import { openStore } from '../open-store.js';
import { CHECKPOINT_EVERY_COMMITS, CHECKPOINT_EVERY_ROWS } from '../sqlite/calling-thread-writer.js';
import { SqliteStore } from '../sqlite/sqlite-store.js';
import type { Store } from '../store.js';
import { testIssuer } from '../test-support/certificates.js';
import { describeStoreConformance } from '../test-support/store-conformance.js';
import { connectStore } from './connect-store.js';
import { serveStore } from './serve-store.js';
import { messagePortChannel } from './store-channel.js';
import type { StoreChannel } from './store-channel.js';
import type { CallsMessage } from './store-protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-direct-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const nextFile = () => join(dir, `store-${(files += 1)}.db`);
const issuer = testIssuer('Direct Records CA');

/** The methods of the calls a channel sent (protocol notices included). */
function sentMethods(sent: unknown[]): string[] {
  return sent.flatMap((message) => ((message as Partial<CallsMessage>).calls ?? []).map((call) => call.method));
}

/** An owner store on `dataSource`, served over a MessageChannel to a client that commits issued rows itself. */
async function directPair(dataSource = nextFile(), commitIssuedRowsTo: DbConfig = { driver: 'sqlite3', dataSource }) {
  const owner = await openStore({ driver: 'sqlite3', dataSource });
  const { port1, port2 } = new MessageChannel();
  const ownerChannel = messagePortChannel(port1);
  const inner = messagePortChannel(port2);
  const sent: unknown[] = [];
  const clientChannel: StoreChannel = {
    send(message) {
      sent.push(message);
      inner.send(message);
    },
    onMessage: (listener) => inner.onMessage(listener),
    onClose: (listener) => inner.onClose!(listener),
  };
  const server = serveStore(owner, ownerChannel);
  const client = connectStore(clientChannel, { driver: 'sqlite3', commitIssuedRowsTo });
  return {
    owner,
    client,
    sent,
    file: dataSource,
    async closeAll() {
      await client.close();
      await server.close();
      await owner.close();
      port1.close();
      port2.close();
    },
  };
}

/** Row fields for a made-up certificate (cheap: thousands of rows). */
function fields(index: number): IssuedCertificateFields {
  const template = issuedCertificateFields(issuer.leaf('template.example').der);
  return { ...template, serial: `${2_000_000_000 + index}` };
}

async function rowCount(store: Store): Promise<number> {
  return (await store.countCertificates()).reduce((sum, entry) => sum + entry.count, 0);
}

/** Resolves once `done()` holds, checking every turn: the event loop keeps running meanwhile. */
async function turnsUntil(done: () => boolean): Promise<void> {
  // Bounded: 10,000 turns.
  for (let i = 0; i < 10_000 && !done(); i += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(done()).toBe(true);
}

describeStoreConformance('remote, issued rows committed by the client', async (): Promise<Store> => {
  const pair = await directPair();
  return new Proxy(pair.client, {
    get(target, property) {
      if (property === 'close') return async () => await pair.closeAll();
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
});

describe('connectStore with commitIssuedRowsTo', () => {
  it('commits issued rows and their first OCSP responses itself: no record reaches the owner', async () => {
    const pair = await directPair();
    const leaves = ['a.example', 'b.example', 'c.example'].map((name) => issuer.leaf(name));
    const expiry = new Date('2031-01-01T00:00:00Z');
    const records = await Promise.all(leaves.map((leaf) => pair.client.recordCertificate({ certificate: leaf.der, label: 'direct', ocspResponse: { body: Uint8Array.of(0x30, 1), expiry } })));
    expect(sentMethods(pair.sent)).not.toContain('recordCertificate');
    for (const record of records) {
      expect(await pair.owner.getCertificate(record.serial, record.authorityKeyId)).toEqual(record);
      expect(await pair.owner.getOcspResponse(record.serial, record.authorityKeyId)).toMatchObject({ body: Uint8Array.of(0x30, 1), expiry });
    }
    await pair.closeAll();
  });

  it('sends a batch that meets another connection\'s write lock to the owner, without waiting for the lock itself', async () => {
    const pair = await directPair();
    await pair.client.recordCertificate({ certificate: fields(0) });
    const other = new Database(pair.file);
    other.exec('BEGIN IMMEDIATE');
    let settled = 0;
    const recording = Promise.all([1, 2, 3].map(async (i) => await pair.client.recordCertificate({ certificate: fields(i), label: 'locked' }).finally(() => (settled += 1))));
    // The event loop turns while the lock is held: the batch went to the owner, whose thread waits.
    await turnsUntil(() => sentMethods(pair.sent).filter((method) => method === 'recordCertificate').length === 3);
    expect(settled).toBe(0);
    other.exec('COMMIT');
    other.close();
    const records = await recording;
    for (const record of records) expect(await pair.owner.getCertificate(record.serial, record.authorityKeyId)).toMatchObject({ label: 'locked' });
    expect(await rowCount(pair.owner)).toBe(4);
    // The lock is free again: the next batch is committed here.
    await pair.client.recordCertificate({ certificate: fields(5) });
    expect(sentMethods(pair.sent).filter((method) => method === 'recordCertificate')).toHaveLength(3);
    await pair.closeAll();
  });

  it('sends a batch with a duplicate to the owner, which fails only that row with 11000 and keeps the first', async () => {
    const pair = await directPair();
    const leaf = issuer.leaf('twice.example');
    const first = await pair.client.recordCertificate({ certificate: leaf.der, label: 'first' });
    const [again, fine] = await Promise.allSettled([pair.client.recordCertificate({ certificate: leaf.der, label: 'second' }), pair.client.recordCertificate({ certificate: fields(1) })]);
    expect(again).toMatchObject({ status: 'rejected', reason: { code: 11000 } });
    expect(fine.status).toBe('fulfilled');
    expect(sentMethods(pair.sent).filter((method) => method === 'recordCertificate')).toHaveLength(2);
    expect(await pair.owner.getCertificate(first.serial, first.authorityKeyId)).toMatchObject({ label: 'first' });
    await pair.closeAll();
  });

  it(`tells the owner every ${CHECKPOINT_EVERY_ROWS} rows, and the owner's thread checkpoints`, async () => {
    const pair = await directPair();
    expect(pair.owner).toBeInstanceOf(SqliteStore);
    const noted = vi.spyOn(pair.owner as SqliteStore, 'checkpointForOthers');
    for (let batch = 0; batch < CHECKPOINT_EVERY_ROWS / 500 + 1; batch += 1) {
      await Promise.all(Array.from({ length: 500 }, async (_, i) => await pair.client.recordCertificate({ certificate: fields(batch * 500 + i) })));
    }
    await pair.client.ping();
    expect(sentMethods(pair.sent).filter((method) => method === 'checkpoint')).toHaveLength(1);
    expect(noted).toHaveBeenCalledOnce();
    expect(await rowCount(pair.owner)).toBe(CHECKPOINT_EVERY_ROWS + 500);
    await pair.closeAll();
  });

  it(`tells the owner every ${CHECKPOINT_EVERY_COMMITS} commits of few rows, whose WAL frames add up sooner`, async () => {
    const pair = await directPair();
    const noted = vi.spyOn(pair.owner as SqliteStore, 'checkpointForOthers');
    for (let i = 0; i < CHECKPOINT_EVERY_COMMITS + 10; i += 1) await pair.client.recordCertificate({ certificate: fields(i) });
    await pair.client.ping();
    expect(sentMethods(pair.sent).filter((method) => method === 'checkpoint')).toHaveLength(1);
    expect(noted).toHaveBeenCalledOnce();
    await pair.closeAll();
  });

  it.each([
    ['in memory', ':memory:'],
    ['not a WAL file', 'rollback.db?_journal_mode=DELETE'],
  ])('sends every record to the owner when the database is %s', async (_name, dataSource) => {
    const source = dataSource.startsWith(':') ? dataSource : join(dir, `${(files += 1)}-${dataSource}`);
    const pair = await directPair(source);
    const record = await pair.client.recordCertificate({ certificate: fields(1) });
    expect(sentMethods(pair.sent)).toContain('recordCertificate');
    expect(await pair.owner.getCertificate(record.serial, record.authorityKeyId)).toEqual(record);
    await pair.closeAll();
  });

  it('sends every record to the owner when its own connection cannot be opened', async () => {
    const pair = await directPair(nextFile(), { driver: 'sqlite3', dataSource: join(dir, 'missing-directory', 'store.db') });
    const record = await pair.client.recordCertificate({ certificate: fields(1) });
    expect(sentMethods(pair.sent)).toContain('recordCertificate');
    expect(await pair.owner.getCertificate(record.serial, record.authorityKeyId)).toEqual(record);
    await pair.closeAll();
  });

  it('commits the records made before close(), and refuses those after it', async () => {
    const pair = await directPair();
    const recording = pair.client.recordCertificate({ certificate: fields(1) });
    const closing = pair.client.close();
    const record = await recording;
    await closing;
    await expect(pair.client.recordCertificate({ certificate: fields(2) })).rejects.toBeInstanceOf(StoreClosedError);
    expect(await pair.owner.getCertificate(record.serial, record.authorityKeyId)).toEqual(record);
    await pair.closeAll();
  });
});
