import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import type { MountedRequest } from './mounted-handler.js';
import { isUnderMount } from './mounted-handler.js';

describe('isUnderMount', () => {
  it.each([
    ['/ocsp', '/ocsp', true],
    ['/ocsp/', '/ocsp', true],
    ['/ocsp/MEIwQDA%2B', '/ocsp/', true],
    ['/ocspx', '/ocsp', false],
    ['/api/v1/cfssl/ocsp', '/ocsp', false],
  ])('%s under %s: %s', (path, mount, expected) => expect(isUnderMount(path, mount)).toBe(expected));
});

describe('createApp with a mounted handler', () => {
  let server: Server;
  let url: string;
  const seen: MountedRequest[] = [];

  beforeAll(async () => {
    const app = createApp({
      operations: [],
      maxBodyBytes: 1024,
      mounts: [
        {
          name: 'echo',
          path: '/echo',
          maxBodyBytes: 16,
          async handle(request) {
            seen.push(request);
            return { status: 201, headers: { 'Content-Type': 'application/x-echo', 'X-Path': request.path }, body: request.body.length > 0 ? request.body : Uint8Array.of(1, 2, 3) };
          },
        },
      ],
    });
    server = createHttpServer(app);
    ({ url } = await listen(server, 0, '127.0.0.1'));
  });
  afterAll(async () => {
    await closeHttpServer(server, { timeoutMs: 1000 });
  });

  it('hands the raw request below the mount to the handler and sends its answer as is', async () => {
    const response = await fetch(`${url}/echo/a%2Bb==?x=1`);
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toBe('application/x-echo');
    expect(response.headers.get('x-path')).toBe('/echo/a%2Bb==');
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(Uint8Array.of(1, 2, 3));
    const posted = await fetch(`${url}/echo`, { method: 'POST', body: Uint8Array.of(0x30, 0x00) });
    expect(new Uint8Array(await posted.arrayBuffer())).toEqual(Uint8Array.of(0x30, 0x00));
    expect(seen.map((request) => request.method)).toEqual(['GET', 'POST']);
  });

  it('answers a POST body over the mount limit 413 in the envelope', async () => {
    const response = await fetch(`${url}/echo`, { method: 'POST', body: new Uint8Array(64) });
    expect(response.status).toBe(413);
  });

  it('leaves other paths to the operations (404 here)', async () => {
    expect((await fetch(`${url}/echoes`)).status).toBe(404);
  });
});
