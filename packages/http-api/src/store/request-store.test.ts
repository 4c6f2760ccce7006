import { MessageChannel } from 'node:worker_threads';
import { StoreError, StoreUnavailableError, connectStore, messagePortChannel, serveStore } from '@certsmith/cert-store';
import type { Store } from '@certsmith/cert-store';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { defineOperation } from '../operation.js';
import { memoryStore, serveApp } from '../test-support/store-app.js';
import { ServiceUnavailableError } from '../errors.js';
import { STORE_UNAVAILABLE_MESSAGE, storeForRequests } from './request-store.js';

const silent = pino({ level: 'silent' });

describe('storeForRequests', () => {
  it('turns an unreachable database into a 503 with the store\'s Retry-After (at least 1 s)', async () => {
    for (const [given, expected] of [[7, 7], [0, 1]] as const) {
      const down = { driver: 'sqlite3', ping: () => Promise.reject(new StoreUnavailableError('the SQLite thread stopped', { retryAfterSeconds: given })) } as unknown as Store;
      const error = await storeForRequests(down, silent).ping().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error).toMatchObject({ code: 503, message: STORE_UNAVAILABLE_MESSAGE, retryAfterSeconds: expected });
    }
  });

  it('passes other store errors on as they are (11000 with the driver\'s text, as CFSSL)', async () => {
    const failing = new StoreError('no such table: certificates');
    const broken = { driver: 'sqlite3', getCertificate: () => Promise.reject(failing) } as unknown as Store;
    await expect(storeForRequests(broken, silent).getCertificate('1', 'ab')).rejects.toBe(failing);
  });

  it('answers 503 with Retry-After for a store in another process that is gone, and passes its 11000s on', async () => {
    const owner = await memoryStore();
    const { port1, port2 } = new MessageChannel();
    const server = serveStore(owner, messagePortChannel(port1));
    const remote = storeForRequests(connectStore(messagePortChannel(port2), { driver: owner.driver, retryAfterSeconds: 3 }), silent);
    try {
      const row = { serial: '1', authorityKeyId: 'ab', status: 'good', expiry: new Date(), pem: 'x' };
      await remote.insertCertificate(row);
      await expect(remote.insertCertificate(row)).rejects.toMatchObject({ code: 11000, message: expect.stringMatching(/UNIQUE constraint failed/) });
      port1.close();
      const error = await remote.ping().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceUnavailableError);
      expect(error).toMatchObject({ code: 503, message: STORE_UNAVAILABLE_MESSAGE, retryAfterSeconds: 3 });
    } finally {
      await remote.close();
      await server.close();
      await owner.close();
      port2.close();
    }
  });

  it('never closes the server\'s store', async () => {
    let closed = false;
    const store = { driver: 'sqlite3', close: async () => void (closed = true) } as unknown as Store;
    await storeForRequests(store, silent).close();
    expect(closed).toBe(false);
  });
});

describe('a StoreUnavailableError thrown by a handler', () => {
  it('is answered 503 with Retry-After, as the pool\'s 503s are', async () => {
    const operation = defineOperation({
      name: 'probe',
      method: 'GET',
      handle() {
        throw new StoreUnavailableError('the certificate store is closed', { retryAfterSeconds: 2 });
      },
    });
    const app = await serveApp({ operations: [operation] });
    try {
      const response = await app.call('/api/v1/cfssl/probe');
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('2');
      expect(response.body.errors).toEqual([{ code: 503, message: 'the certificate store is closed' }]);
    } finally {
      await app.close();
    }
  });
});
