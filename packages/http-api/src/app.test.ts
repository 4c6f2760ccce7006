import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { CertificateDecodeError } from '@certsmith/x509-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { codedFailureTask, gateTask, plainFailureTask } from '../../worker-pool/test-fixtures/test-tasks.mjs';
import { createApp } from './app.js';
import type { AppOptions } from './app.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import { createLogger } from './logger.js';
import { defineOperation } from './operation.js';
import type { AnyOperation } from './operation.js';
import { createWorkerPool } from '@certsmith/worker-pool';
import type { WorkerPool } from '@certsmith/worker-pool';

interface Started {
  url: string;
  server: Server;
  logs: Record<string, unknown>[];
}

const running: Server[] = [];

/** Start the app on 127.0.0.1, port 0, capturing its log lines. */
async function startApp(options: Partial<AppOptions> & { operations?: readonly AnyOperation[] } = {}): Promise<Started> {
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const app = createApp({ logger, ...options, operations: options.operations ?? testOperations });
  const server = createHttpServer(app);
  running.push(server);
  const { url } = await listen(server, 0, '127.0.0.1');
  return { url, server, logs };
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => closeHttpServer(server, { timeoutMs: 2000 })));
});

const echoOperation = defineOperation({
  name: 'echo',
  method: 'POST',
  body: z.object({
    name: z.string(),
    flavor: z.enum(['ubiquitous', 'optimal', 'force']).optional(),
    request: z
      .object({ CN: z.string().optional(), hosts: z.array(z.string()).optional() })
      .optional(),
  }),
  handle: (request) => request,
});

const testOperations: AnyOperation[] = [
  echoOperation,
  defineOperation({
    name: 'coded',
    method: 'POST',
    handle: () => {
      throw new CertificateDecodeError();
    },
  }),
  defineOperation({
    name: 'boom',
    method: 'POST',
    handle: () => {
      throw new Error('connection string postgres://admin:hunter2@db');
    },
  }),
  defineOperation({
    name: 'warned',
    method: 'POST',
    handle: (_request, context) => {
      context.addMessage({ code: 5300, message: 'This certificate lacks a "hosts" field.' });
      return { ok: true };
    },
  }),
  defineOperation({ name: 'nothing', method: 'POST', handle: () => undefined }),
];

async function expectEnvelopeError(response: Response, status: number, code: number): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = (await response.json()) as { success: boolean; result: unknown; errors: { code: number; message: string }[]; messages: unknown[] };
  expect(body).toEqual({ success: false, result: null, errors: [{ code, message: expect.any(String) }], messages: [] });
  return body.errors[0]!.message;
}

/** What a raw exchange saw: everything the server sent, and a socket error if there was one. */
interface RawOutcome {
  raw: string;
  error?: string;
}

/**
 * Connect, let `talk` write, and collect what the server sends until the connection is closed; a
 * reset (or a write the server no longer reads) is reported as `error`.
 */
function rawExchange(port: number, talk: (socket: Socket) => void): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let error: string | undefined;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message));
    socket.on('end', () => socket.end());
    socket.on('close', () => resolve(error === undefined ? { raw } : { raw, error }));
    socket.on('connect', () => talk(socket));
  });
}

function post(url: string, body: string | undefined, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}

describe('GET /api/v1/cfssl/health', () => {
  it('answers CFSSL\'s exact health body, 69 bytes with the trailing newline', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/api/v1/cfssl/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const text = await response.text();
    expect(text).toBe('{"success":true,"result":{"healthy":true},"errors":[],"messages":[]}\n');
    expect(Buffer.byteLength(text)).toBe(69);
  });

  it('is also served under the /api/v1/svc/ alias', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/api/v1/svc/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, result: { healthy: true } });
  });

  it('merges contributor details and reports unhealthy when one fails', async () => {
    const { url } = await startApp({
      health: {
        contributors: [
          { key: 'signers', check: async () => ({ healthy: true, detail: { primary: { healthy: true } } }) },
          { key: 'hsm', check: async () => Promise.reject(new Error('token removed')) },
        ],
      },
    });
    const body = await (await fetch(`${url}/api/v1/cfssl/health`)).json();
    expect(body).toEqual({
      success: true,
      result: { healthy: false, signers: { primary: { healthy: true } } },
      errors: [],
      messages: [],
    });
  });

  it('answers HEAD as GET without the body (load balancers probe with HEAD; CFSSL answers 405)', async () => {
    const { url, logs } = await startApp();
    const response = await fetch(`${url}/api/v1/cfssl/health`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('content-length')).toBe('69');
    expect(await response.text()).toBe('');
    expect(logs.find((line) => line['msg'] === 'request')).toMatchObject({ method: 'HEAD', operation: 'health', status: 200 });
  });

  it('answers HEAD on a raw GET route as GET without the body', async () => {
    const { url } = await startApp({ routes: [{ name: 'plain', path: '/plain', method: 'GET', contentType: 'text/plain', handle: () => 'hello\n' }] });
    const response = await fetch(`${url}/plain`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain');
    expect(response.headers.get('content-length')).toBe('6');
    expect(await response.text()).toBe('');
  });
});

describe('POST /api/v1/cfssl/<op> success', () => {
  it('wraps the result in the envelope', async () => {
    const { url } = await startApp();
    const response = await post(`${url}/api/v1/cfssl/echo`, JSON.stringify({ name: 'x', extra: 1 }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    // Unknown keys are ignored, as Go's decoder ignores them.
    expect(await response.json()).toEqual({ success: true, result: { name: 'x' }, errors: [], messages: [] });
  });

  it('is also served under the /api/v1/svc/ alias', async () => {
    const { url } = await startApp();
    const response = await post(`${url}/api/v1/svc/echo`, JSON.stringify({ name: 'svc' }));
    expect(await response.json()).toMatchObject({ success: true, result: { name: 'svc' } });
  });

  it('puts context.addMessage items in messages', async () => {
    const { url } = await startApp();
    const body = await (await post(`${url}/api/v1/cfssl/warned`, '{}')).json();
    expect(body).toEqual({
      success: true,
      result: { ok: true },
      errors: [],
      messages: [{ code: 5300, message: 'This certificate lacks a "hosts" field.' }],
    });
  });

  it('sends result null when the handler returns nothing', async () => {
    const { url } = await startApp();
    const text = await (await post(`${url}/api/v1/cfssl/nothing`, '')).text();
    expect(text).toBe('{"success":true,"result":null,"errors":[],"messages":[]}\n');
  });

  it('echoes a caller X-Request-Id and makes one otherwise', async () => {
    const { url } = await startApp();
    const echoed = await fetch(`${url}/api/v1/cfssl/health`, { headers: { 'x-request-id': 'abc-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('abc-123');
    const made = await fetch(`${url}/api/v1/cfssl/health`, { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('wrong method', () => {
  it.each(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND'])(
    'answers %s on a POST route with 405 code 405 and CFSSL\'s text',
    async (method) => {
      const { url } = await startApp();
      const response = await fetch(`${url}/api/v1/cfssl/echo`, { method });
      const message = await expectEnvelopeError(response, 405, 405);
      expect(message).toBe(`Method is not allowed:"${method}"`);
    },
  );

  it('answers HEAD on a POST route with 405 and no body', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/api/v1/cfssl/echo`, { method: 'HEAD' });
    expect(response.status).toBe(405);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('');
  });

  it('answers POST on the GET health route with 405', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/health`, '{}'), 405, 405)).toBe(
      'Method is not allowed:"POST"',
    );
  });

  it('answers a verb Node\'s parser rejects with a JSON 400 envelope', async () => {
    const { url } = await startApp();
    const { port } = new URL(url);
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let data = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
      socket.write('FOO /api/v1/cfssl/echo HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(raw).toContain('Content-Type: application/json');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toEqual({
      success: false,
      result: null,
      errors: [{ code: 400, message: 'malformed HTTP request' }],
      messages: [],
    });
  });
});

describe('unknown path', () => {
  it.each(['/api/v1/cfssl/nosuch', '/api/v1/cfssl/echo/', '/api/v2/cfssl/echo', '/', '/api/v1/cfssl/'])(
    'answers %s with a JSON 404 code 404',
    async (path) => {
      const { url } = await startApp();
      await expectEnvelopeError(await post(`${url}${path}`, '{}'), 404, 404);
    },
  );

  it('answers GET on an unknown path with 404, not 405', async () => {
    const { url } = await startApp();
    await expectEnvelopeError(await fetch(`${url}/api/v1/cfssl/nosuch`), 404, 404);
  });
});

describe('request body', () => {
  it('answers an empty body with 400 code 400', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, ''), 400, 400)).toBe(
      'unexpected end of JSON input',
    );
  });

  it('answers truncated JSON with 400 code 400', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, '{"name":'), 400, 400)).toBe(
      'unexpected end of JSON input',
    );
  });

  it('answers invalid JSON with 400 without quoting the body', async () => {
    const { url } = await startApp();
    const message = await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, '{"name": secret-key}'), 400, 400);
    expect(message).toMatch(/^request body is not valid JSON/);
    expect(message).not.toContain('secret');
  });

  it('answers a top-level array with 400 naming the type', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, '[]'), 400, 400)).toBe(
      'request body must be a JSON object, got array',
    );
  });

  it('answers a top-level string with 400 naming the type', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, '"x"'), 400, 400)).toBe(
      'request body must be a JSON object, got string',
    );
  });

  it('treats a null body as {} (Go decodes null as a no-op)', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, 'null'), 400, 400)).toBe('name is required');
  });

  it('answers invalid UTF-8 with 400', async () => {
    const { url } = await startApp();
    const response = await fetch(`${url}/api/v1/cfssl/echo`, { method: 'POST', body: new Uint8Array([0x7b, 0xff, 0x7d]) });
    expect(await expectEnvelopeError(response, 400, 400)).toBe('request body is not valid UTF-8');
  });

  it.each([
    [{ name: 1 }, 'name must be a string, got number'],
    [{ name: 'x', request: { hosts: 'a' } }, 'request.hosts must be an array of strings, got string'],
    [{ name: 'x', request: { hosts: ['a', 7] } }, 'request.hosts[1] must be a string, got number'],
    [{ name: 'x', request: [] }, 'request must be an object, got array'],
    [{ name: 'x', flavor: 'bogus' }, 'flavor must be "ubiquitous" or "optimal" or "force", got "bogus"'],
    [{ name: null }, 'name must be a string, got null'],
  ])('answers wrong JSON types %j with 400 naming the field', async (body, message) => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/echo`, JSON.stringify(body)), 400, 400)).toBe(message);
  });

  it('answers a body over the limit (Content-Length) with 413 code 413 and closes the connection', async () => {
    const { url } = await startApp({ maxBodyBytes: 1024 });
    const response = await post(`${url}/api/v1/cfssl/echo`, JSON.stringify({ name: 'x'.repeat(2048) }));
    expect(await expectEnvelopeError(response, 413, 413)).toBe('request body exceeds the limit of 1024 bytes');
    expect(response.headers.get('connection')).toBe('close');
  });

  it('answers a chunked body over the limit with 413', async () => {
    const { url } = await startApp({ maxBodyBytes: 1024 });
    const chunk = new TextEncoder().encode('x'.repeat(600));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"name":"'));
        controller.enqueue(chunk);
        controller.enqueue(chunk);
        controller.enqueue(new TextEncoder().encode('"}'));
        controller.close();
      },
    });
    const response = await fetch(`${url}/api/v1/cfssl/echo`, { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    await expectEnvelopeError(response, 413, 413);
  });

  it('answers a body over the limit with a complete 413 while the client is still sending, then closes cleanly', async () => {
    const { url } = await startApp({ maxBodyBytes: 1024 });
    const { port } = new URL(url);
    // 4 MiB announced and sent in full: the server answers after 1 KiB, reads and drops the rest
    // (no reset while the client writes), and closes once the client has closed its side.
    const announced = 4 * 1024 * 1024;
    const outcome = await rawExchange(Number(port), (socket) => {
      socket.write(`POST /api/v1/cfssl/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${announced}\r\n\r\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < announced) {
          sent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
        socket.end();
      };
      pump();
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.raw).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.raw.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(outcome.raw.slice(outcome.raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ errors: [{ code: 413 }] });
  });

  it('answers a body that stalls past the body timeout with 408 and closes the connection', async () => {
    const { url, logs } = await startApp({ bodyTimeoutMs: 200 });
    const { port } = new URL(url);
    const outcome = await rawExchange(Number(port), (socket) => {
      socket.write('POST /api/v1/cfssl/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":');
    });
    expect(outcome.error).toBeUndefined();
    expect(outcome.raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(outcome.raw.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(outcome.raw.slice(outcome.raw.indexOf('\r\n\r\n') + 4))).toEqual({
      success: false,
      result: null,
      errors: [{ code: 408, message: 'request body was not received within 200 ms' }],
      messages: [],
    });
    expect(logs.find((line) => line['msg'] === 'request')).toMatchObject({ status: 408, code: 408, operation: 'echo' });
  });

  it('accepts a body exactly at the limit', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(100) });
    const { url } = await startApp({ maxBodyBytes: Buffer.byteLength(body) });
    expect((await post(`${url}/api/v1/cfssl/echo`, body)).status).toBe(200);
  });
});

describe('errors thrown by handlers', () => {
  it('answers a coded CertsmithError with 400 and its code and message', async () => {
    const { url } = await startApp();
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/coded`, ''), 400, 1002)).toBe(
      'Failed to decode certificate',
    );
  });

  it('answers an unexpected error with 500 and a generic message, details only in the log', async () => {
    const { url, logs } = await startApp();
    const response = await post(`${url}/api/v1/cfssl/boom`, '');
    const text = await response.clone().text();
    expect(await expectEnvelopeError(response, 500, 500)).toBe('internal server error');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('at ');
    const logged = logs.find((line) => line['msg'] === 'unexpected error');
    expect(logged).toMatchObject({ err: { message: 'connection string postgres://admin:hunter2@db' } });
  });
});

describe('request log', () => {
  it('writes one line per request with method, path, status, code, duration and request ID', async () => {
    const { url, logs } = await startApp();
    await post(`${url}/api/v1/cfssl/coded?token=abc`, '', { 'x-request-id': 'req-1' });
    const lines = logs.filter((line) => line['msg'] === 'request');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      reqId: 'req-1',
      method: 'POST',
      path: '/api/v1/cfssl/coded',
      operation: 'coded',
      status: 400,
      code: 1002,
      durationMs: expect.any(Number),
    });
  });

  it("logs the body's label and profile matched case-insensitively, the last string of each winning, as Go decodes", async () => {
    const { url, logs } = await startApp();
    await post(`${url}/api/v1/cfssl/echo`, '{"name":"x","Label":"first","PROFILE":"server","label":"second","profile":7}');
    await post(`${url}/api/v1/cfssl/echo`, '{"name":"x","LaBeL":"only"}');
    const lines = logs.filter((line) => line['msg'] === 'request');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ operation: 'echo', status: 200, label: 'second' });
    expect(lines[0]).not.toHaveProperty('profile');
    expect(lines[1]).toMatchObject({ label: 'only' });
    expect(lines[1]).not.toHaveProperty('profile');
  });

  it('never logs request bodies', async () => {
    const { url, logs } = await startApp();
    await post(`${url}/api/v1/cfssl/echo`, JSON.stringify({ name: 'x', private_key: 'TOPSECRET' }));
    expect(JSON.stringify(logs)).not.toContain('TOPSECRET');
  });
});

describe('worker tasks through the app', () => {
  let pool: WorkerPool;
  let gate: SharedArrayBuffer;

  beforeAll(() => {
    pool = createWorkerPool({ size: 1, maxQueue: 1, tasks: [codedFailureTask, plainFailureTask, gateTask], retryAfterSeconds: 7 });
  });
  afterAll(async () => {
    if (gate) openGate(gate);
    await pool.close();
  });

  const workerOperations: AnyOperation[] = [
    defineOperation({ name: 'coded_in_worker', method: 'POST', tasks: [codedFailureTask], handle: (_r, c) => c.runTask(codedFailureTask, {}) }),
    defineOperation({ name: 'plain_in_worker', method: 'POST', tasks: [plainFailureTask], handle: (_r, c) => c.runTask(plainFailureTask, {}) }),
    defineOperation({ name: 'gated', method: 'POST', tasks: [gateTask], handle: (_r, c) => c.runTask(gateTask, { gate, timeoutMs: 20_000 }) }),
    defineOperation({ name: 'undeclared', method: 'POST', handle: (_r, c) => c.runTask(gateTask, { gate, timeoutMs: 1 }) }),
  ];

  it('keeps the CFSSL code of an error thrown in a worker', async () => {
    const { url } = await startApp({ operations: workerOperations, taskRunner: pool });
    expect(await expectEnvelopeError(await post(`${url}/api/v1/cfssl/coded_in_worker`, ''), 400, 1002)).toBe(
      'Failed to decode certificate',
    );
  });

  it('answers an uncoded worker error with a generic 500 and logs the worker stack', async () => {
    const { url, logs } = await startApp({ operations: workerOperations, taskRunner: pool });
    const response = await post(`${url}/api/v1/cfssl/plain_in_worker`, '');
    expect(await expectEnvelopeError(response, 500, 500)).toBe('internal server error');
    const logged = logs.find((line) => line['msg'] === 'unexpected error') as { err: { message: string; stack: string } };
    expect(logged.err.message).toBe('database password is hunter2');
    expect(logged.err.stack).toContain('test-tasks.mjs');
  });

  it('answers a task the operation did not declare with 500', async () => {
    const { url } = await startApp({ operations: workerOperations, taskRunner: pool });
    await expectEnvelopeError(await post(`${url}/api/v1/cfssl/undeclared`, ''), 500, 500);
  });

  it('answers 503 with Retry-After when the queue is full, and serves the accepted requests', async () => {
    gate = new SharedArrayBuffer(4);
    const { url } = await startApp({ operations: workerOperations, taskRunner: pool });
    // One task runs (size 1), one waits (maxQueue 1): the pool is then full.
    const first = post(`${url}/api/v1/cfssl/gated`, '');
    const second = post(`${url}/api/v1/cfssl/gated`, '');
    const deadline = Date.now() + 10_000;
    while (pool.pending < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(pool.pending).toBe(2);

    const rejected = await post(`${url}/api/v1/cfssl/gated`, '');
    expect(rejected.headers.get('retry-after')).toBe('7');
    await expectEnvelopeError(rejected, 503, 503);

    openGate(gate);
    for (const response of await Promise.all([first, second])) {
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ success: true, result: { opened: true } });
    }
  });
});

function openGate(gate: SharedArrayBuffer): void {
  const view = new Int32Array(gate);
  Atomics.store(view, 0, 1);
  Atomics.notify(view, 0);
}
