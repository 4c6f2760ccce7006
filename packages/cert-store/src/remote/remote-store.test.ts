import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { serialToDecimal } from '../certificate-row.js';
import { CertificateNotFoundError, InvalidStoreRequestError, StoreClosedError, StoreError, StoreUnavailableError } from '../errors.js';
import type { CertificateChange, CertificateRecord, ChangeSubscription, RecordCertificateInput } from '../model.js';
import { openStore } from '../open-store.js';
import type { Store } from '../store.js';
import { testIssuer } from '../test-support/certificates.js';
import { describeStoreConformance } from '../test-support/store-conformance.js';
import { connectStore } from './connect-store.js';
import { serveStore } from './serve-store.js';
import type { StoreServer } from './serve-store.js';
import { messagePortChannel } from './store-channel.js';
import type { StoreChannel } from './store-channel.js';
import type { WireCall } from './store-protocol.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-remote-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const nextFile = () => join(dir, `store-${(files += 1)}.db`);
const DAY = 86_400_000;

/** A channel that counts and keeps what it sends. */
function recording(channel: StoreChannel): StoreChannel & { sent: unknown[] } {
  const sent: unknown[] = [];
  return {
    sent,
    send(message) {
      sent.push(message);
      channel.send(message);
    },
    onMessage: (listener) => channel.onMessage(listener),
    onClose: (listener) => channel.onClose!(listener),
  };
}

interface Pair {
  owner: Store;
  client: Store;
  server: StoreServer;
  ownerChannel: ReturnType<typeof recording>;
  clientChannel: ReturnType<typeof recording>;
  ports: [MessagePort, MessagePort];
  /** Close the client, the server, the owner's store and the ports. */
  closeAll(): Promise<void>;
}

async function connectedPair(owner?: Store, options: { callTimeoutMs?: number } = {}): Promise<Pair> {
  const store = owner ?? (await openStore({ driver: 'sqlite3', dataSource: nextFile() }));
  const { port1, port2 } = new MessageChannel();
  const ownerChannel = recording(messagePortChannel(port1));
  const clientChannel = recording(messagePortChannel(port2));
  const server = serveStore(store, ownerChannel);
  const client = connectStore(clientChannel, { driver: store.driver, ...options });
  return {
    owner: store,
    client,
    server,
    ownerChannel,
    clientChannel,
    ports: [port1, port2],
    async closeAll() {
      await client.close();
      await server.close();
      await store.close();
      port1.close();
      port2.close();
    },
  };
}

/** The client of a fresh pair, whose close() closes everything: the shape the conformance suite wants. */
async function remoteStore(): Promise<Store> {
  const pair = await connectedPair();
  return new Proxy(pair.client, {
    get(target, property) {
      if (property === 'close') return async () => await pair.closeAll();
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** An owner store whose methods tests replace; the rest are a real SQLite store's. */
function overriding(store: Store, overrides: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof Store];
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: number; retryAfterSeconds?: number }> {
  return (await promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  )) as Error & { code?: number };
}

describeStoreConformance('remote over a MessageChannel (sqlite owner)', remoteStore);

describe('connectStore: results', () => {
  it('returns what the owner store returns for every method, with the same types', async () => {
    const pair = await connectedPair();
    const { owner, client } = pair;
    try {
      const issuer = testIssuer('Remote Equality CA');
      const [a, b] = [issuer.leaf('a.example', { dns: ['a.example', 'www.a.example'] }), issuer.leaf('b.example', { dns: ['b.example', 'www.b.example'] })];
      const expiry = new Date(Date.now() + DAY);
      const body = Uint8Array.from([0x30, 0x00, 0xff, 0x01]);
      const direct = await owner.recordCertificate({ certificate: a.pem, label: 'eq', metadata: { reason: 'direct' }, ocspResponse: { body, expiry } });
      const remote = await client.recordCertificate({ certificate: b.der, label: 'eq', metadata: { reason: 'remote' }, ocspResponse: { body, expiry } });
      expect(shape(remote)).toEqual(shape(direct));
      expect(remote).toMatchObject({ label: 'eq', status: 'good', metadata: { reason: 'remote' }, commonName: 'b.example' });

      const certadd = { serial: '77', authorityKeyId: 'AB:CD', status: 'revoked', reason: 4, revokedAt: new Date(), expiry, pem: a.pem, sans: ['x'], metadata: { n: 1 } };
      await expect(client.insertCertificate(certadd)).resolves.toBeUndefined();
      for (const [serial, aki] of [
        [direct.serial, direct.authorityKeyId],
        [remote.serial, remote.authorityKeyId.toUpperCase()],
        ['77', 'AB:CD'],
        ['404', 'ab'],
      ] as const) {
        expect(await client.getCertificate(serial, aki)).toStrictEqual(await owner.getCertificate(serial, aki));
        expect(await client.findCertificate(serial, aki)).toStrictEqual(await owner.findCertificate(serial, aki));
        expect(await client.getOcspResponse(serial, aki)).toStrictEqual(await owner.getOcspResponse(serial, aki));
      }
      const response = await client.getOcspResponse(direct.serial, direct.authorityKeyId);
      expect(Object.getPrototypeOf(response!.body)).toBe(Object.getPrototypeOf((await owner.getOcspResponse(direct.serial, direct.authorityKeyId))!.body));
      expect(response!.expiry).toBeInstanceOf(Date);

      expect(await client.listCertificates({ label: 'eq', limit: 1 })).toStrictEqual(await owner.listCertificates({ label: 'eq', limit: 1 }));
      const firstPage = await owner.listCertificates({ label: 'eq', limit: 1 });
      expect(await client.listCertificates({ label: 'eq', limit: 1, cursor: firstPage.nextCursor! })).toStrictEqual(
        await owner.listCertificates({ label: 'eq', limit: 1, cursor: firstPage.nextCursor! }),
      );
      expect(await client.listCertificates()).toStrictEqual(await owner.listCertificates());
      expect(await client.listOcspResponses({ expiresAfter: new Date() })).toStrictEqual(await owner.listOcspResponses({ expiresAfter: new Date() }));
      expect(await client.countCertificates()).toStrictEqual(await owner.countCertificates());
      const now = new Date();
      expect(await client.countExpiring({ withinMs: 2 * DAY, now })).toStrictEqual(await owner.countExpiring({ withinMs: 2 * DAY, now }));

      await client.upsertOcspResponse({ serial: '77', authorityKeyId: 'AB:CD', body: Buffer.from([1, 2, 3]), expiry });
      expect(await client.getOcspResponse('77', 'AB:CD')).toStrictEqual(await owner.getOcspResponse('77', 'AB:CD'));

      const revokedDirect = await owner.revokeCertificate(direct.serial, direct.authorityKeyId, 1);
      const revokedRemote = await client.revokeCertificate(remote.serial, remote.authorityKeyId, 1);
      expect(shape(revokedRemote)).toEqual(shape(revokedDirect));
      expect(revokedRemote.revokedAt).toBeInstanceOf(Date);

      expect(await owner.nextCrlNumber('aa')).toBe(1n);
      expect(await client.nextCrlNumber('aa')).toBe(2n);

      const tidyAt = new Date(Date.now() + 400 * DAY);
      const tidied = await client.tidy({ now: tidyAt, bufferMs: 0 });
      expect(tidied).toStrictEqual({ certificates: expect.any(Number), ocspResponses: expect.any(Number), changes: expect.any(Number) });
      expect(await owner.tidy({ now: tidyAt, bufferMs: 0 })).toStrictEqual({ certificates: 0, ocspResponses: 0, changes: expect.any(Number) });
      expect(tidied.certificates).toBeGreaterThan(0);
      await expect(client.ping()).resolves.toBeUndefined();
      expect(client.driver).toBe(owner.driver);
    } finally {
      await pair.closeAll();
    }
  });
});

/** The type of every leaf of a value, so values that must differ (serials, times) can be compared by kind. */
function shape(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.map(shape);
  if (value instanceof Date || value instanceof Uint8Array) return Object.getPrototypeOf(value).constructor.name;
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, shape(inner)]));
  return typeof value;
}

describe('connectStore: batching', () => {
  it('sends the calls of one turn as one message, and the owner answers them as one', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    // Every record call the owner gets is started in one synchronous run: one turn, so one transaction.
    const runs: number[] = [];
    let run = 0;
    let inRun = false;
    const counting = overriding(owner, {
      recordCertificate: (input) => {
        if (!inRun) {
          inRun = true;
          run += 1;
          queueMicrotask(() => (inRun = false));
        }
        runs.push(run);
        return owner.recordCertificate(input);
      },
    });
    const pair = await connectedPair(counting);
    try {
      const issuer = testIssuer('Remote Batch CA');
      const leaves = Array.from({ length: 25 }, (_, i) => issuer.leaf(`batch${i}.example`));
      const records = await Promise.all(leaves.map(async (leaf) => await pair.client.recordCertificate({ certificate: leaf.pem, label: 'batch' })));
      expect(records.map((record) => record.serial)).toEqual(leaves.map((leaf) => serialToDecimal(leaf.serialHex)));
      expect(pair.clientChannel.sent).toHaveLength(1);
      expect((pair.clientChannel.sent[0] as { calls: unknown[] }).calls).toHaveLength(25);
      expect(pair.ownerChannel.sent).toHaveLength(1);
      expect((pair.ownerChannel.sent[0] as { replies: unknown[] }).replies).toHaveLength(25);
      expect(new Set(runs)).toEqual(new Set([1]));

      // Calls of the next turns go in messages of their own.
      await pair.client.ping();
      await pair.client.ping();
      expect(pair.clientChannel.sent).toHaveLength(3);
    } finally {
      await pair.closeAll();
    }
  });
  /** An owner whose `recordCertificate` waits at a gate the test opens, while everything else answers. */
  async function gatedPair(options: { callTimeoutMs?: number; failing?: (input: RecordCertificateInput) => Error | null } = {}) {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    let gate: Promise<void> = Promise.resolve();
    let open: () => void = () => undefined;
    const received: number[] = [];
    const gated = overriding(owner, {
      recordCertificate: async (input) => {
        received.push(1);
        await gate;
        const error = options.failing?.(input) ?? null;
        if (error !== null) throw error;
        return await owner.recordCertificate(input);
      },
    });
    const pair = await connectedPair(gated, options);
    return {
      pair,
      received,
      close: () => {
        gate = new Promise<void>((resolve) => (open = resolve));
      },
      open: () => open(),
      /** The record calls of each message the client sent, in order. */
      recordMessages: () =>
        pair.clientChannel.sent
          .map((message) => (message as { calls?: WireCall[] }).calls?.filter((call) => call.method === 'recordCertificate').length ?? 0)
          .filter((count) => count > 0),
    };
  }

  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('sends a record at once when none is in flight (nothing is gathered while idle)', async () => {
    const { pair, recordMessages } = await gatedPair();
    try {
      const issuer = testIssuer('Idle Record CA');
      const recorded = pair.client.recordCertificate({ certificate: issuer.leaf('idle.example').pem });
      await turn();
      expect(recordMessages()).toEqual([1]);
      await recorded;
      // The next one, made after the answer, goes in its own turn too.
      const next = pair.client.recordCertificate({ certificate: issuer.leaf('idle2.example').pem });
      await turn();
      expect(recordMessages()).toEqual([1, 1]);
      await next;
    } finally {
      await pair.closeAll();
    }
  });

  it('gathers the records made while a group is unanswered into one message, sent when it is answered; reads do not wait', async () => {
    const gated = await gatedPair();
    const { pair, recordMessages } = gated;
    try {
      const issuer = testIssuer('Group Commit CA');
      gated.close();
      const first = pair.client.recordCertificate({ certificate: issuer.leaf('first.example').pem });
      await untilTrue(() => gated.received.length === 1);
      // Ten records, each made in a turn of its own, while the first group is in the owner's hands.
      const later: Array<Promise<CertificateRecord>> = [];
      for (let i = 0; i < 10; i += 1) {
        later.push(pair.client.recordCertificate({ certificate: issuer.leaf(`later${i}.example`).pem }));
        await turn();
      }
      expect(recordMessages()).toEqual([1]);
      // A read goes in its turn's message, not behind the group.
      await expect(pair.client.countCertificates()).resolves.toEqual([]);
      gated.open();
      const firstRecord = await first;
      const records = await Promise.all(later);
      expect(recordMessages()).toEqual([1, 10]);
      // A record that resolved is in the store for every later read.
      await expect(pair.client.getCertificate(records[9]!.serial, records[9]!.authorityKeyId)).resolves.toMatchObject({ serial: records[9]!.serial });
      await expect(pair.client.getCertificate(firstRecord.serial, firstRecord.authorityKeyId)).resolves.not.toBeNull();
    } finally {
      gated.open();
      await pair.closeAll();
    }
  });

  it('fails only the calls of a group the owner fails, and sends the next group', async () => {
    const issuer = testIssuer('Group Failure CA');
    const doomed = issuer.leaf('doomed.example');
    const gated = await gatedPair({
      // The owner gets the row's fields, read by the client (see connect-store.ts).
      failing: (input) => ((input.certificate as { serial?: string }).serial === serialToDecimal(doomed.serialHex) ? new StoreUnavailableError('database down') : null),
    });
    const { pair, recordMessages } = gated;
    try {
      gated.close();
      const failed = rejection(pair.client.recordCertificate({ certificate: doomed.pem }));
      await untilTrue(() => gated.received.length === 1);
      const later = [pair.client.recordCertificate({ certificate: issuer.leaf('ok1.example').pem })];
      await turn();
      later.push(pair.client.recordCertificate({ certificate: issuer.leaf('ok2.example').pem }));
      gated.open();
      expect(await failed).toMatchObject({ code: 503, message: 'database down' });
      expect((await Promise.all(later)).map((record) => record.status)).toEqual(['good', 'good']);
      expect(recordMessages()).toEqual([1, 2]);
    } finally {
      gated.open();
      await pair.closeAll();
    }
  });

  it('fails a record waiting behind an unanswered group at its own deadline, and the next ones go once the group is answered', async () => {
    const gated = await gatedPair({ callTimeoutMs: 200 });
    const { pair, recordMessages } = gated;
    try {
      const issuer = testIssuer('Group Timeout CA');
      gated.close();
      const stuck = rejection(pair.client.recordCertificate({ certificate: issuer.leaf('stuck.example').pem }));
      await untilTrue(() => gated.received.length === 1);
      const waiting = rejection(pair.client.recordCertificate({ certificate: issuer.leaf('waiting.example').pem }));
      // The owner is alive (it answers probes and reads); the record calls fail alone at their deadlines.
      for (const error of await Promise.all([stuck, waiting])) {
        expect(error).toBeInstanceOf(StoreUnavailableError);
        expect(error.message).toBe('the certificate store did not answer within 200 ms');
      }
      // The first group's timeout freed its place: the waiting record went then (and timed out there
      // too) — unless its own deadline, a few ms later, came in the same turn as the first one's (a
      // loaded machine runs both overdue timers together): then it failed before it could go. Never
      // was it sent with the first group, nor twice.
      const sentBeforeOpening = recordMessages();
      expect([[1], [1, 1]]).toContainEqual(sentBeforeOpening);
      await expect(pair.client.ping()).resolves.toBeUndefined();
      gated.open();
      await expect(pair.client.recordCertificate({ certificate: issuer.leaf('after.example').pem })).resolves.toMatchObject({ status: 'good' });
      expect(recordMessages()).toEqual([...sentBeforeOpening, 1]);
    } finally {
      gated.open();
      await pair.closeAll();
    }
  });
});

describe('connectStore: errors', () => {
  it('rebuilds store errors as their classes, with their codes and messages', async () => {
    const pair = await connectedPair();
    const { owner, client } = pair;
    try {
      const leaf = testIssuer('Remote Errors CA').leaf('dup.example');
      const record = await client.recordCertificate({ certificate: leaf.pem });
      const directDuplicate = await rejection(owner.recordCertificate({ certificate: leaf.pem }));
      const duplicate = await rejection(client.recordCertificate({ certificate: leaf.pem }));
      expect(duplicate).toBeInstanceOf(StoreError);
      expect(duplicate).toMatchObject({ name: 'StoreError', code: 11000, message: directDuplicate.message });

      const notFound = await rejection(client.revokeCertificate(record.serial, 'ffff', 1));
      expect(notFound).toBeInstanceOf(CertificateNotFoundError);
      expect(notFound).toMatchObject({ code: 11200, message: 'failed to revoke the certificate: certificate not found' });

      const badCursor = await rejection(client.listCertificates({ cursor: 'not a cursor' }));
      expect(badCursor).toBeInstanceOf(InvalidStoreRequestError);
      expect(badCursor.code).toBe(400);

      // Input that is not a certificate fails where it was given, with the local store's code.
      expect((await rejection(client.recordCertificate({ certificate: 'not a certificate' }))).code).toBe(1002);
    } finally {
      await pair.closeAll();
    }
  });

  it('keeps the owner’s 503 with its Retry-After', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    const down = overriding(owner, {
      ping: async () => {
        throw new StoreUnavailableError('connect ECONNREFUSED 10.0.0.5:5432', { retryAfterSeconds: 7 });
      },
    });
    const pair = await connectedPair(down);
    try {
      const error = await rejection(pair.client.ping());
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).toMatchObject({ code: 503, retryAfterSeconds: 7, message: 'connect ECONNREFUSED 10.0.0.5:5432' });
    } finally {
      await pair.closeAll();
    }
  });

  it('fails a store call not answered in time with 503, alone, while the owner answers others', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const slow = overriding(owner, { ping: async () => await stuck });
    const pair = await connectedPair(slow, { callTimeoutMs: 200 });
    try {
      const started = Date.now();
      const slowCall = rejection(pair.client.ping());
      await expect(pair.client.countCertificates()).resolves.toEqual([]);
      const timedOut = await slowCall;
      expect(timedOut).toBeInstanceOf(StoreUnavailableError);
      expect(timedOut).toMatchObject({ code: 503, retryAfterSeconds: 1, message: 'the certificate store did not answer within 200 ms' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(195);
      // The owner is alive (it answers the client's probe without the store): calls go on.
      await expect(pair.client.countCertificates()).resolves.toEqual([]);
    } finally {
      release();
      await pair.closeAll();
    }
  });

  it('lets a tidy run past the timeout while the owner is alive', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    let release: () => void = () => undefined;
    const longTidy = new Promise<void>((resolve) => (release = resolve));
    const slow = overriding(owner, {
      tidy: async (options) => {
        await longTidy;
        return await owner.tidy(options);
      },
    });
    const pair = await connectedPair(slow, { callTimeoutMs: 100 });
    try {
      const tidy = pair.client.tidy();
      // Three timeouts long, with the owner's server answering the client's probes meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      await expect(tidy).resolves.toEqual({ certificates: 0, ocspResponses: 0, changes: 0 });
    } finally {
      release();
      await pair.closeAll();
    }
  });

  it('fails every call when the owner says nothing for the timeout, refuses new ones at once, and recovers when it answers', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    const { port1, port2 } = new MessageChannel();
    // An owner whose event loop is blocked: what is sent to it waits until it runs again.
    let blocked = true;
    const held: unknown[] = [];
    let deliver: (message: unknown) => void = () => undefined;
    const ownerSide = messagePortChannel(port1);
    const blockedOwner: StoreChannel = {
      send: (message) => ownerSide.send(message),
      onMessage(listener) {
        deliver = listener;
        return ownerSide.onMessage((message) => (blocked ? held.push(message) : listener(message)));
      },
    };
    const server = serveStore(owner, blockedOwner);
    const client = connectStore(messagePortChannel(port2), { driver: 'sqlite3', callTimeoutMs: 200 });
    try {
      const started = Date.now();
      const [ping, tidy] = await Promise.all([rejection(client.ping()), rejection(client.tidy())]);
      // tidy has no deadline of its own: only the owner's silence fails it. ping's own 200 ms
      // deadline ends at the same moment, and on a loaded machine its timer may fire first.
      expect(tidy).toBeInstanceOf(StoreUnavailableError);
      expect(tidy).toMatchObject({ code: 503, message: 'the certificate store did not answer for 200 ms' });
      expect(ping).toBeInstanceOf(StoreUnavailableError);
      expect(ping).toMatchObject({ code: 503, message: expect.stringMatching(/^the certificate store did not answer (for|within) 200 ms$/) });
      expect(Date.now() - started).toBeGreaterThanOrEqual(195);
      expect(await rejection(client.countCertificates())).toBeInstanceOf(StoreUnavailableError);
      blocked = false;
      for (const message of held.splice(0)) deliver(message);
      await untilResolves(() => client.countCertificates());
      await expect(client.ping()).resolves.toBeUndefined();
    } finally {
      await client.close();
      await server.close();
      await owner.close();
      port1.close();
      port2.close();
    }
  });

  it('fails pending and new calls with 503 when the channel closes', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const pair = await connectedPair(overriding(owner, { ping: async () => await stuck }));
    try {
      const pending = pair.client.ping();
      await untilTrue(() => pair.clientChannel.sent.length === 1);
      pair.ports[0].close();
      const gone = await rejection(pending);
      expect(gone).toBeInstanceOf(StoreUnavailableError);
      expect(gone.message).toMatch(/channel to the certificate store closed/);
      expect(await rejection(pair.client.countCertificates())).toBeInstanceOf(StoreUnavailableError);
    } finally {
      release();
      await pair.closeAll();
    }
  });

  it('fails calls at once once the owner stops serving, after answering those it had started', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    const pair = await connectedPair(overriding(owner, { ping: async () => await stuck }));
    try {
      const started = pair.client.ping();
      await untilTrue(() => pair.clientChannel.sent.length === 1);
      const stopping = pair.server.close();
      release();
      await expect(started).resolves.toBeUndefined();
      await stopping;
      const refused = await rejection(pair.client.countCertificates());
      expect(refused).toBeInstanceOf(StoreUnavailableError);
      expect(refused.message).toMatch(/stopped serving/);
    } finally {
      await pair.closeAll();
    }
  });

  it('closing the client does not close the owner’s store, and refuses later calls with StoreClosedError', async () => {
    const pair = await connectedPair();
    try {
      await pair.client.close();
      expect(await rejection(pair.client.ping())).toBeInstanceOf(StoreClosedError);
      await expect(pair.owner.ping()).resolves.toBeUndefined();
      // A watch asked for after close() is not held by the owner: it reports the closed store.
      const sent = pair.clientChannel.sent.length;
      const error = await new Promise<Error>((resolve) => pair.client.watchChanges(() => undefined, { onError: resolve }));
      expect(error).toBeInstanceOf(StoreClosedError);
      await new Promise((resolve) => setImmediate(resolve));
      expect(pair.clientChannel.sent).toHaveLength(sent);
    } finally {
      await pair.closeAll();
    }
  });
});

describe('connectStore: watchChanges', () => {
  it('pushes the owner’s changes in order, and stops at close', async () => {
    const pair = await connectedPair();
    try {
      const issuer = testIssuer('Remote Watch CA');
      const records = [];
      for (let i = 0; i < 3; i += 1) records.push(await pair.client.recordCertificate({ certificate: issuer.leaf(`watch${i}.example`).pem, label: 'w' }));
      const changes: CertificateChange[] = [];
      let seen: () => void = () => undefined;
      const threeSeen = new Promise<void>((resolve) => (seen = () => changes.length >= 3 && resolve()));
      const watch = pair.client.watchChanges(
        async (change) => {
          // A slow consumer still gets them one at a time, in order.
          await new Promise((resolve) => setImmediate(resolve));
          changes.push(change);
          seen();
        },
        { pollIntervalMs: 20, afterId: 0 },
      );
      for (const record of records) await pair.client.revokeCertificate(record.serial, record.authorityKeyId, 1);
      await threeSeen;
      expect(changes.map((change) => change.serial)).toEqual(records.map((record) => record.serial));
      expect(changes[0]!.revokedAt).toBeInstanceOf(Date);
      await watch.close();
      const after = changes.length;
      const leaf = issuer.leaf('after-close.example');
      await pair.client.insertCertificate({ serial: serialToDecimal(leaf.serialHex), authorityKeyId: issuer.akiHex, status: 'revoked', expiry: leaf.notAfter, pem: leaf.pem });
      // A fresh watch from the same point sees the new change; the closed one got nothing more.
      const later = await firstChange(pair.client, changes[changes.length - 1]!.id);
      expect(later.serial).toBe(serialToDecimal(leaf.serialHex));
      expect(changes).toHaveLength(after);
    } finally {
      await pair.closeAll();
    }
  });

  it('drops the client’s subscriptions on the owner when the client closes or the channel goes away', async () => {
    const owner = await openStore({ driver: 'sqlite3', dataSource: nextFile() });
    const held = new Set<ChangeSubscription>();
    const tracking = overriding(owner, {
      watchChanges: (onChange, options) => {
        const subscription = owner.watchChanges(onChange, options);
        const tracked = { close: async () => {
          held.delete(tracked);
          await subscription.close();
        } };
        held.add(tracked);
        return tracked;
      },
    });
    const pair = await connectedPair(tracking);
    try {
      pair.client.watchChanges(() => undefined, { pollIntervalMs: 20 });
      pair.client.watchChanges(() => undefined, { pollIntervalMs: 20 });
      await untilTrue(() => held.size === 2);
      await pair.client.close();
      expect(held.size).toBe(0);

      // A second client on a new channel, which then goes away without a word.
      const { port1, port2 } = new MessageChannel();
      const server = serveStore(tracking, messagePortChannel(port1));
      const client = connectStore(messagePortChannel(port2), { driver: 'sqlite3' });
      client.watchChanges(() => undefined, { pollIntervalMs: 20 });
      await untilTrue(() => held.size === 1);
      port2.close();
      await untilTrue(() => held.size === 0);
      await server.close();
    } finally {
      await pair.closeAll();
    }
  });
  it("delivers a revocation made through one client to another client's watch at once, not at the owner's next poll", async () => {
    const a = await connectedPair();
    const { port1, port2 } = new MessageChannel();
    const serverB = serveStore(a.owner, messagePortChannel(port1));
    const b = connectStore(messagePortChannel(port2), { driver: 'sqlite3' });
    try {
      const issuer = testIssuer('Remote Wake CA');
      const [first, second] = await Promise.all(['wake-1.example', 'wake-2.example'].map(async (name) => await a.client.recordCertificate({ certificate: issuer.leaf(name).pem })));
      const seen: string[] = [];
      let waiting: { count: number; resolve: () => void } | null = null;
      const seenCount = (count: number) => new Promise<void>((resolve) => (seen.length >= count ? resolve() : (waiting = { count, resolve })));
      // Held by the owner with a poll no test waits for: B hears of A's revocations from the
      // owner's store, which wakes its watches when it commits one.
      const watch = b.watchChanges(
        (change) => {
          seen.push(change.serial);
          if (waiting !== null && seen.length >= waiting.count) waiting.resolve();
        },
        { pollIntervalMs: 3_600_000, afterId: 0 },
      );
      await a.client.revokeCertificate(first!.serial, first!.authorityKeyId, 1);
      await seenCount(1);
      await a.client.revokeCertificate(second!.serial, second!.authorityKeyId, 1);
      await seenCount(2);
      expect(seen).toEqual([first!.serial, second!.serial]);
      await watch.close();
    } finally {
      await b.close();
      await serverB.close();
      port1.close();
      port2.close();
      await a.closeAll();
    }
  });
});

describe('the channel is shared', () => {
  it('tags every message, and both sides ignore messages that are not theirs', async () => {
    const pair = await connectedPair();
    try {
      await pair.client.ping();
      for (const message of [...pair.clientChannel.sent, ...pair.ownerChannel.sent]) expect(message).toMatchObject({ certsmithStore: 1 });
      // Another IPC user's messages, a store message of another session, and one of another version.
      const [ownerPort, clientPort] = pair.ports;
      clientPort.postMessage({ type: 'prom-client:getMetricsReq', requestId: 1 });
      clientPort.postMessage({ session: 'x', calls: [{ id: 1, method: 'ping', args: [] }] });
      clientPort.postMessage({ certsmithStore: 2, session: 'x', calls: [{ id: 1, method: 'ping', args: [] }] });
      ownerPort.postMessage({ type: 'prom-client:getMetricsRes', metrics: [] });
      ownerPort.postMessage({ certsmithStore: 1, session: 'another client', replies: [{ id: 1, ok: false, error: { name: 'Error', code: 0, message: 'not yours' } }] });
      const sentBefore = pair.ownerChannel.sent.length;
      await expect(pair.client.ping()).resolves.toBeUndefined();
      expect(pair.ownerChannel.sent).toHaveLength(sentBefore + 1);
      // A call the protocol does not have is refused, not run.
      clientPort.postMessage({ certsmithStore: 1, session: 'probe', calls: [{ id: 9, method: 'constructor', args: [] }] });
      await untilTrue(() => pair.ownerChannel.sent.length === sentBefore + 2);
      expect(pair.ownerChannel.sent.at(-1)).toMatchObject({ session: 'probe', replies: [{ id: 9, ok: false, error: { code: 11000 } }] });
    } finally {
      await pair.closeAll();
    }
  });
});

async function firstChange(store: Store, afterId: number): Promise<CertificateChange> {
  let watch: ChangeSubscription | null = null;
  try {
    return await new Promise<CertificateChange>((resolve) => {
      watch = store.watchChanges(resolve, { pollIntervalMs: 20, afterId });
    });
  } finally {
    await (watch as ChangeSubscription | null)?.close();
  }
}

/** Wait, one turn at a time (bounded), until `check` holds. */
async function untilTrue(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(check()).toBe(true);
}

/** Retry `call` (bounded) until it resolves. */
async function untilResolves(call: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    try {
      await call();
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  await call();
}
