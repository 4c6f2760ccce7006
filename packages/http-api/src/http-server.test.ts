import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { closeHttpServer, createHttpServer, KEEP_ALIVE_TIMEOUT_MS, listen } from './http-server.js';
import type { ApiServer } from './http-server.js';

let server: ApiServer | null = null;
afterEach(async () => {
  if (server !== null) await closeHttpServer(server);
  server = null;
});

describe('createHttpServer keep-alive', () => {
  it('keeps idle connections 65 s (longer than the usual 60 s of clients and load balancers) and says so', async () => {
    server = createHttpServer(createApp({ operations: [] }), {});
    expect(server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    expect(server.headersTimeout).toBeGreaterThan(KEEP_ALIVE_TIMEOUT_MS);
    const { port } = await listen(server, 0, '127.0.0.1');
    const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
      const outgoing = request({ host: '127.0.0.1', port, path: '/api/v1/cfssl/health', headers: { connection: 'keep-alive' } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.headers['keep-alive']));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
    expect(keepAlive).toBe('timeout=65');
  });
});
