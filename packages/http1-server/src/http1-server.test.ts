import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';

import type { Http1Handler } from './http1-connection.js';
import type { Http1Server, Http1ServerOptions } from './http1-server.js';
import { createHttp1Server } from './http1-server.js';

const servers: Http1Server[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => server.close(100)));
});

/** Echo the request as JSON; `/slow/N` answers after N ms. */
const echo: Http1Handler = async (request) => {
  const slow = /^\/slow\/(\d+)$/.exec(request.target);
  if (slow) await new Promise((resolve) => setTimeout(resolve, Number(slow[1])));
  const body = Buffer.from(JSON.stringify({ method: request.method, target: request.target, body: Buffer.from(request.body).toString('latin1') }));
  return { status: request.target === '/304' ? 304 : 200, headers: { 'Content-Type': 'application/json', ETag: '"e"' }, body };
};

async function start(handler: Http1Handler = echo, options: Http1ServerOptions = {}): Promise<{ server: Http1Server; port: number }> {
  const server = createHttp1Server(handler, options);
  servers.push(server);
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  return { server, port };
}

/** A raw client: what it has received so far, and a promise for the socket's close. */
function open(port: number) {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  const waiters: Array<() => void> = [];
  socket.setEncoding('latin1');
  socket.on('data', (text: string) => {
    received += text;
    for (const waiter of waiters.splice(0)) waiter();
  });
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return {
    socket,
    closed,
    get received() {
      return received;
    },
    send: (text: string | Buffer) => socket.write(typeof text === 'string' ? Buffer.from(text, 'latin1') : text),
    /** Wait until `count` complete answers (status lines) have arrived. */
    async answers(count: number): Promise<string> {
      for (;;) {
        const statusLines = received.match(/HTTP\/1\.1 [2-5]\d\d /g)?.length ?? 0;
        if (statusLines >= count && /\r\n\r\n/.test(received)) {
          // And the last answer's body has arrived (Content-Length).
          const lastHead = received.lastIndexOf('HTTP/1.1 ');
          const headEnd = received.indexOf('\r\n\r\n', lastHead);
          const length = /Content-Length: (\d+)/.exec(received.slice(lastHead, headEnd));
          if (headEnd !== -1 && received.length >= headEnd + 4 + Number(length?.[1] ?? 0)) return received;
        }
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    /** Wait until the received text matches. */
    async until(pattern: RegExp): Promise<string> {
      while (!pattern.test(received)) await new Promise<void>((resolve) => waiters.push(resolve));
      return received;
    },
  };
}

const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
const bodies = (text: string) => [...text.matchAll(/\{"method[^}]*\}/g)].map((match) => JSON.parse(match[0]) as { method: string; target: string; body: string });

describe('createHttp1Server', () => {
  it('answers keep-alive requests on one connection with Date, the handler fields and Content-Length', async () => {
    const { port } = await start();
    const client = open(port);
    client.send('GET /a HTTP/1.1\r\nHost: x\r\n\r\n');
    await client.answers(1);
    client.send('POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz');
    const text = await client.answers(2);
    expect(statuses(text)).toEqual([200, 200]);
    expect(bodies(text)).toEqual([
      { method: 'GET', target: '/a', body: '' },
      { method: 'POST', target: '/b', body: 'xyz' },
    ]);
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\nDate: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\nContent-Type: application\/json\r\nETag: "e"\r\nContent-Length: \d+\r\n\r\n/);
    expect(text).not.toContain('Connection:');
  });

  it('answers pipelined requests in request order, whatever order their answers settle in', async () => {
    const { port } = await start();
    const client = open(port);
    client.send('GET /slow/60 HTTP/1.1\r\nHost: x\r\n\r\nGET /slow/1 HTTP/1.1\r\nHost: x\r\n\r\nPOST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nq\r\n0\r\n\r\n');
    const text = await client.answers(3);
    expect(bodies(text).map((body) => body.target)).toEqual(['/slow/60', '/slow/1', '/p']);
    expect(bodies(text)[2]!.body).toBe('q');
  });

  it('answers requests sent one byte at a time', async () => {
    const { port } = await start();
    const client = open(port);
    for (const byte of Buffer.from('POST /bytes HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nokGET /next HTTP/1.1\r\nHost: x\r\n\r\n')) {
      client.send(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(bodies(await client.answers(2)).map((body) => `${body.target}:${body.body}`)).toEqual(['/bytes:ok', '/next:']);
  });

  it('closes after answering Connection: close, and does not answer requests sent after it', async () => {
    const { port } = await start();
    const client = open(port);
    client.send('GET /1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n');
    const text = await client.closed;
    expect(statuses(text)).toEqual([200]);
    expect(text).toContain('Connection: close\r\n');
  });

  it('closes after an HTTP/1.0 request, and keeps an HTTP/1.0 connection that asks for keep-alive', async () => {
    const { port } = await start();
    const plain = open(port);
    plain.send('GET /old HTTP/1.0\r\n\r\n');
    expect(statuses(await plain.closed)).toEqual([200]);
    const kept = open(port);
    kept.send('GET /old HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    const first = await kept.answers(1);
    expect(first).toContain('Connection: keep-alive\r\n');
    kept.send('GET /again HTTP/1.0\r\nConnection: keep-alive\r\n\r\n');
    expect(statuses(await kept.answers(2))).toEqual([200, 200]);
  });

  it('answers HEAD with the GET framing and no body, and 304 with neither body nor Content-Length', async () => {
    const { port } = await start();
    const client = open(port);
    client.send('HEAD /h HTTP/1.1\r\nHost: x\r\n\r\nGET /304 HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n');
    const text = await client.answers(3);
    const answers = text.split(/(?=HTTP\/1\.1 )/);
    expect(answers[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*Content-Length: [1-9]\d*\r\n\r\n$/);
    expect(answers[1]).toMatch(/^HTTP\/1\.1 304 Not Modified\r\n/);
    expect(answers[1]).not.toContain('Content-Length');
    expect(answers[1]!.endsWith('\r\n\r\n')).toBe(true);
    expect(bodies(answers[2]!)).toEqual([{ method: 'GET', target: '/after', body: '' }]);
  });

  it('sends 100 Continue before the body of a request that expects it', async () => {
    const { port } = await start();
    const client = open(port);
    client.send('POST /c HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n');
    expect(await client.until(/^HTTP\/1\.1 100 Continue\r\n\r\n$/)).toBe('HTTP/1.1 100 Continue\r\n\r\n');
    client.send('body');
    expect(bodies(await client.answers(1))).toEqual([{ method: 'POST', target: '/c', body: 'body' }]);
  });

  it.each([
    ['a malformed request', 'GET / HTTP/1.1\r\nHost : x\r\n\r\n', 400],
    ['a body over the limit', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n', 413],
    ['a URL over the limit', `GET /${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
    ['a head over the limit', `GET / HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(17000)}\r\n\r\n`, 431],
  ])('answers %s with %d and Connection: close, then closes', async (_name, input, status) => {
    const { port } = await start();
    const client = open(port);
    client.send(`GET /first HTTP/1.1\r\nHost: x\r\n\r\n${input}`);
    const text = await client.closed;
    expect(statuses(text)).toEqual([200, status]);
    expect(text.slice(text.lastIndexOf('HTTP/1.1'))).toMatch(new RegExp(`^HTTP/1\\.1 ${status} [^\\r]+\\r\\nDate: [^\\r]+\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n$`));
  });

  it('answers 500 and closes when the handler throws or rejects, and reports the error', async () => {
    const errors: unknown[] = [];
    const { port } = await start(
      (request) => {
        if (request.target === '/throw') throw new Error('thrown');
        return Promise.reject(new Error('rejected'));
      },
      { onHandlerError: (error) => errors.push(error) },
    );
    for (const target of ['/throw', '/reject']) {
      const client = open(port);
      client.send(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`);
      expect(statuses(await client.closed)).toEqual([500]);
    }
    expect(errors.map((error) => (error as Error).message)).toEqual(['thrown', 'rejected']);
  });

  it('answers 500 when the handler answers a field with a line break', async () => {
    const { port } = await start(() => ({ status: 200, headers: { 'X-Bad': 'a\r\nSet-Cookie: x' }, body: new Uint8Array(0) }));
    const client = open(port);
    client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    const text = await client.closed;
    expect(statuses(text)).toEqual([500]);
    expect(text).not.toContain('Set-Cookie');
  });

  it('answers 408 and closes when the head does not arrive within headersTimeoutMs', async () => {
    const { port } = await start(echo, { headersTimeoutMs: 50 });
    const client = open(port);
    client.send('GET / HTTP/1.1\r\nHo');
    expect(statuses(await client.closed)).toEqual([408]);
  });

  it('answers 408 and closes when the body does not arrive within bodyTimeoutMs', async () => {
    const { port } = await start(echo, { bodyTimeoutMs: 50 });
    const client = open(port);
    client.send('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc');
    expect(statuses(await client.closed)).toEqual([408]);
  });

  it('closes an idle keep-alive connection after keepAliveTimeoutMs without an answer', async () => {
    const { port } = await start(echo, { keepAliveTimeoutMs: 50 });
    const client = open(port);
    client.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(statuses(await client.closed)).toEqual([200]);
  });

  it('closes a connection that sends nothing within headersTimeoutMs without an answer', async () => {
    const { port } = await start(echo, { headersTimeoutMs: 50 });
    expect(await open(port).closed).toBe('');
  });

  it('closes connections over maxConnections as they are accepted', async () => {
    const { server, port } = await start(echo, { maxConnections: 1 });
    const first = open(port);
    first.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await first.answers(1);
    const second = open(port);
    second.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(await second.closed).toBe('');
    expect(server.connectionCount).toBe(1);
  });

  it('pauses reading at maxPipelinedRequests and answers every request', async () => {
    const { port } = await start(echo, { maxPipelinedRequests: 2 });
    const client = open(port);
    client.send('GET /slow/5 HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(7));
    expect(statuses(await client.answers(7))).toEqual([200, 200, 200, 200, 200, 200, 200]);
  });

  it('talks to node:http clients: a chunked POST and keep-alive', async () => {
    const { port } = await start();
    const ask = (body: string | null) =>
      new Promise<string>((resolve, reject) => {
        const request = httpRequest({ port, host: '127.0.0.1', method: body === null ? 'GET' : 'POST', path: '/node' }, (response) => {
          let text = '';
          response.setEncoding('latin1');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(`${response.statusCode} ${text}`));
        });
        request.on('error', reject);
        // No Content-Length: node:http sends the body chunked.
        if (body !== null) request.write(body);
        request.end();
      });
    expect(await ask('chunked body')).toBe('200 {"method":"POST","target":"/node","body":"chunked body"}');
    expect(await ask(null)).toBe('200 {"method":"GET","target":"/node","body":""}');
  });
});

describe('Http1Server.close', () => {
  it('closes idle connections at once, lets a busy one finish with Connection: close, and refuses new ones', async () => {
    const { server, port } = await start();
    const idle = open(port);
    idle.send('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await idle.answers(1);
    const busy = open(port);
    busy.send('GET /slow/80 HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const closing = server.close(2_000);
    expect(statuses(await idle.closed)).toEqual([200]);
    const text = await busy.closed;
    expect(statuses(text)).toEqual([200]);
    expect(text).toContain('Connection: close\r\n');
    await closing;
    const late = connect(port, '127.0.0.1');
    sockets.push(late);
    await expect(new Promise((resolve, reject) => late.once('connect', resolve).once('error', reject))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('destroys connections still busy after the timeout', async () => {
    const { server, port } = await start();
    const busy = open(port);
    busy.send('GET /slow/5000 HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await server.close(50);
    expect(await busy.closed).toBe('');
  });
});
