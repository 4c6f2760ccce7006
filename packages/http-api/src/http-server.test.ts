import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { closeHttpServer, createHttpServer, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_MAX_CONNECTIONS, KEEP_ALIVE_TIMEOUT_MS, listen } from './http-server.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './request-body.js';
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

/** Connect and write `text`; resolve with what the server sent once the connection is closed. */
function rawExchange(port: number, text: string): Promise<{ raw: string; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let error: string | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message));
    socket.on('end', () => socket.end());
    socket.on('close', () => resolve(error === undefined ? { raw } : { raw, error }));
    socket.on('connect', () => {
      if (text !== '') socket.write(text);
    });
  });
}

function envelopeOf(raw: string): unknown {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('createHttpServer limits', () => {
  it('defaults: headers 10 s, body 20 s, a whole-request backstop beyond both, 1024 connections', () => {
    server = createHttpServer(createApp({ operations: [] }));
    expect(DEFAULT_HEADERS_TIMEOUT_MS).toBe(10_000);
    expect(DEFAULT_BODY_TIMEOUT_MS).toBe(20_000);
    expect(server.headersTimeout).toBe(DEFAULT_HEADERS_TIMEOUT_MS);
    expect(server.requestTimeout).toBeGreaterThan(DEFAULT_HEADERS_TIMEOUT_MS + DEFAULT_BODY_TIMEOUT_MS);
    expect(server.maxConnections).toBe(DEFAULT_MAX_CONNECTIONS);
    expect(DEFAULT_MAX_CONNECTIONS).toBe(1024);
  });

  it.each([
    ['headers that stop half way', 'POST /api/v1/cfssl/health HTTP/1.1\r\nHost: x\r\n'],
    ['a request line without an end', 'GET /api/v1/cfssl/hea'],
    ['nothing at all', ''],
  ])('answers %s with 408 in the envelope once the headers timeout passes, then closes', async (_name, text) => {
    server = createHttpServer(createApp({ operations: [] }), { headersTimeoutMs: 300 });
    const { port } = await listen(server, 0, '127.0.0.1');
    const outcome = await rawExchange(port, text);
    expect(outcome.error).toBeUndefined();
    expect(outcome.raw).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(outcome.raw).toContain('Connection: close');
    expect(envelopeOf(outcome.raw)).toEqual({
      success: false,
      result: null,
      errors: [{ code: 408, message: 'request headers were not received within 300 ms' }],
      messages: [],
    });
  });

  it('answers the headers timeout of a second request on a keep-alive connection with 408', async () => {
    server = createHttpServer(createApp({ operations: [] }), { headersTimeoutMs: 300 });
    const { port } = await listen(server, 0, '127.0.0.1');
    const outcome = await rawExchange(port, 'GET /api/v1/cfssl/health HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/cfssl/health HTTP/1.1\r\nHo');
    const answers = outcome.raw.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((answer) => answer.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 408']);
  });

  it('answers the requests before a malformed one on the same connection first, then 400, then closes', async () => {
    server = createHttpServer(createApp({ operations: [] }));
    const { port } = await listen(server, 0, '127.0.0.1');
    const outcome = await rawExchange(port, 'GET /api/v1/cfssl/health HTTP/1.1\r\nHost: x\r\n\r\nGET /api/v1/cfssl/health HTTP/1.1\r\nHost: x\r\n\r\nFOO /x HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(outcome.error).toBeUndefined();
    const answers = outcome.raw.split(/(?=HTTP\/1\.1 )/);
    expect(answers.map((answer) => answer.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 400']);
    expect(envelopeOf(answers[2]!)).toMatchObject({ errors: [{ code: 400, message: 'malformed HTTP request' }] });
  });

  it('closes connections over maxConnections at once, without an answer; the others are served', async () => {
    server = createHttpServer(createApp({ operations: [] }), { maxConnections: 2, headersTimeoutMs: 5_000 });
    const { port } = await listen(server, 0, '127.0.0.1');
    const held = [connect(port, '127.0.0.1'), connect(port, '127.0.0.1')];
    await Promise.all(held.map((socket) => new Promise((resolve) => socket.once('connect', resolve))));
    // The server counts a connection once it has accepted it: wait until both are counted.
    const counted = (): Promise<number> => new Promise((resolve, reject) => server!.getConnections((error, count) => (error ? reject(error) : resolve(count))));
    for (let i = 0; i < 100 && (await counted()) < 2; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(await counted()).toBe(2);
    const refused = await rawExchange(port, 'GET /api/v1/cfssl/health HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(refused.raw).toBe('');
    held[0]!.write('GET /api/v1/cfssl/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    const answered = await new Promise<string>((resolve) => {
      let raw = '';
      held[0]!.setEncoding('latin1').on('data', (chunk: string) => (raw += chunk));
      held[0]!.on('close', () => resolve(raw));
    });
    expect(answered).toMatch(/^HTTP\/1\.1 200 /);
    held[1]!.destroy();
  });

  it('refuses negative limits', () => {
    expect(() => createHttpServer(createApp({ operations: [] }), { headersTimeoutMs: -1 })).toThrow(RangeError);
    expect(() => createHttpServer(createApp({ operations: [] }), { maxConnections: 1.5 })).toThrow(RangeError);
  });
});
