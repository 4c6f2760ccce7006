/**
 * Slow and stalled clients against the built server (`--headers-timeout`, `--body-timeout`,
 * `--max-connections`). Node's defaults let a client whose headers or body stall hold its
 * connection for up to 300 s; a few hundred such clients would exhaust the server.
 *
 * - Three rounds of 600 stalled connections (half stop inside their headers, half inside a POST
 *   body): while they are held, `/health` is answered on fresh connections, every answer arriving
 *   before the first stalled client is cut; then every stalled client gets a 408 envelope and a
 *   clean close (FIN, no reset), and the server's RSS after the third round is where it was after
 *   the first.
 * - At the connection cap a new connection is closed without an answer; once the stalled clients
 *   are cut, `/health` is answered again.
 * - Bodies over `--max-body` sent in full by 8 keep-alive clients: every one gets a complete 413.
 *   (The server answers before reading the body; it used to destroy the connection at once, and the
 *   kernel's reset to the bytes still arriving lost ≈2 % of the 413s: `EPIPE`/`ECONNRESET` at the
 *   client. Now it reads and drops the rest before closing.)
 *
 * No sleeps: every wait is for an event (connect, data, close) and bounded.
 */
import { Agent, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { residentSetBytes } from './helpers/process-rss.js';
import { killAllCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';

const HEADERS_TIMEOUT_MS = 5_000;
const BODY_TIMEOUT_MS = 5_000;
const MAX_CONNECTIONS = 700;
const STALLED_PER_KIND = 300;
const ROUNDS = 3;
const HEALTH_PROBES = 20;
/** RSS growth allowed from the first round to the last: allocator noise, not a leak. */
const RSS_GROWTH_LIMIT_BYTES = 32 * 1024 * 1024;

let scratch: Scratch;
let server: StartedCertsmith;
let port = 0;

beforeAll(async () => {
  scratch = await createScratch('slow-clients');
  server = await startCertsmith(
    [
      '--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path('data'),
      '--headers-timeout', String(HEADERS_TIMEOUT_MS), '--body-timeout', String(BODY_TIMEOUT_MS), '--max-connections', String(MAX_CONNECTIONS),
    ],
    60_000,
  );
  port = Number(new URL(server.url).port);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** One stalled client: what it received, and how its connection ended. */
interface Stalled {
  socket: Socket;
  /** Resolves once the connection is closed: the bytes received and a socket error, if any. */
  closed: Promise<{ raw: string; error?: string; at: number }>;
}

/** Open a connection, send `text` and nothing more; resolves once connected. */
async function stall(text: string): Promise<Stalled> {
  const socket = connect(port, '127.0.0.1');
  let raw = '';
  let error: string | undefined;
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (raw += chunk));
  socket.on('error', (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message));
  // Answer the server's FIN with ours, as a well-behaved client does.
  socket.on('end', () => socket.end());
  const closed = new Promise<{ raw: string; error?: string; at: number }>((resolve) => {
    socket.on('close', () => resolve(error === undefined ? { raw, at: performance.now() } : { raw, error, at: performance.now() }));
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => {
      socket.write(text);
      resolve();
    });
    socket.once('error', reject);
  });
  return { socket, closed };
}

/** Open one stalled client per text, 100 at a time (quickly, so that all are held well before the first is cut). */
async function openStalled(texts: readonly string[]): Promise<Stalled[]> {
  const stalled: Stalled[] = [];
  for (let start = 0; start < texts.length; start += 100) {
    stalled.push(...(await Promise.all(texts.slice(start, start + 100).map((text) => stall(text)))));
  }
  return stalled;
}

const PARTIAL_HEADERS = 'POST /api/v1/cfssl/bundle HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n';
const PARTIAL_BODY = 'POST /api/v1/cfssl/bundle HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"certificate":"';

/** GET /health on a fresh connection; resolves with the status line and when it arrived, or the failure. */
function probeHealth(method = 'GET'): Promise<{ status?: string; raw: string; error?: string; at: number }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    let error: string | undefined;
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 20 s')), 20_000);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (raw += chunk));
    socket.on('error', (failure: NodeJS.ErrnoException) => (error ??= failure.code ?? failure.message));
    socket.on('close', () => {
      clearTimeout(timer);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1];
      resolve({ ...(status === undefined ? {} : { status }), raw, ...(error === undefined ? {} : { error }), at: performance.now() });
    });
    socket.on('connect', () => socket.write(`${method} /api/v1/cfssl/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`));
  });
}

function envelopeOf(raw: string): unknown {
  return JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
}

describe('stalled clients', () => {
  it(`${ROUNDS} rounds of ${2 * STALLED_PER_KIND} stalled connections: /health answered meanwhile, each stalled client gets 408 and a clean close, RSS flat`, { timeout: 120_000 }, async () => {
    const rssAfterRound: number[] = [];
    let rssPeak = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const stalled = await openStalled(Array.from({ length: 2 * STALLED_PER_KIND }, (_, i) => (i % 2 === 0 ? PARTIAL_HEADERS : PARTIAL_BODY)));
      const closedAt = stalled.map((client) => client.closed.then((outcome) => outcome.at));
      const firstCut = Promise.race(closedAt);

      // While all of them are held, /health is answered (GET and HEAD), before any stalled client is cut.
      const probes = [];
      for (let i = 0; i < HEALTH_PROBES; i++) probes.push(await probeHealth(i % 2 === 0 ? 'GET' : 'HEAD'));
      rssPeak = Math.max(rssPeak, residentSetBytes(server.child.pid!));
      expect(probes.map((probe) => probe.status)).toEqual(Array.from({ length: HEALTH_PROBES }, () => '200'));
      expect(Math.max(...probes.map((probe) => probe.at))).toBeLessThan(await firstCut);

      // Every stalled client: 408 in the envelope, Connection: close, then a clean close.
      const outcomes = await Promise.all(stalled.map((client) => client.closed));
      const summary = outcomes.map((outcome) => `${/^HTTP\/1\.1 (\d{3})/.exec(outcome.raw)?.[1] ?? 'no answer'} ${outcome.error ?? 'clean close'}`);
      expect(new Set(summary)).toEqual(new Set(['408 clean close']));
      for (const [index, outcome] of outcomes.entries()) {
        expect(outcome.raw).toContain('Connection: close');
        const expected = index % 2 === 0 ? `request headers were not received within ${HEADERS_TIMEOUT_MS} ms` : `request body was not received within ${BODY_TIMEOUT_MS} ms`;
        expect(envelopeOf(outcome.raw)).toEqual({ success: false, result: null, errors: [{ code: 408, message: expected }], messages: [] });
      }
      rssAfterRound.push(residentSetBytes(server.child.pid!));
    }
    console.log(`slow clients: RSS after each round ${rssAfterRound.map((bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`).join(', ')}; peak while held ${(rssPeak / 1024 / 1024).toFixed(1)} MiB`);
    expect(rssAfterRound.at(-1)! - rssAfterRound[0]!).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
    expect((await probeHealth()).status).toBe('200');
  });

  it(`closes connections over --max-connections ${MAX_CONNECTIONS} at once; /health is answered again once the stalled ones are cut`, { timeout: 60_000 }, async () => {
    const stalled = await openStalled(Array.from({ length: MAX_CONNECTIONS }, () => PARTIAL_HEADERS));
    // The server accepts connections in order: an answer to nothing on the next one means it was
    // refused, not that it is still queued.
    const refused = await probeHealth();
    expect(refused.status).toBeUndefined();
    expect(refused.raw).toBe('');
    const outcomes = await Promise.all(stalled.map((client) => client.closed));
    expect(new Set(outcomes.map((outcome) => `${/^HTTP\/1\.1 (\d{3})/.exec(outcome.raw)?.[1] ?? 'no answer'} ${outcome.error ?? 'clean close'}`))).toEqual(new Set(['408 clean close']));
    expect((await probeHealth()).status).toBe('200');
    expect(server.child.exitCode).toBeNull();
  });
});

describe('bodies over --max-body', () => {
  it('get a complete 413 each, from 8 keep-alive clients still sending (no reset, no early close)', { timeout: 60_000 }, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const outcomes = new Map<string, number>();
    let next = 0;
    const total = 240;
    const one = (index: number): Promise<string> =>
      new Promise((resolve) => {
        // 1 MiB + up to 512 KiB: announced, refused at once, then sent in full by the client.
        const body = Buffer.alloc(1024 * 1024 + 1 + ((index * 7919) % (512 * 1024)), 0x41);
        const outgoing = httpRequest({ agent, host: '127.0.0.1', port, path: '/api/v1/cfssl/bundle', method: 'POST', headers: { 'content-length': body.length } }, (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve(`${response.statusCode} ${(JSON.parse(text) as { errors: Array<{ code: number }> }).errors[0]?.code}`));
          response.on('error', (error) => resolve(`response error ${error.message}`));
        });
        outgoing.setTimeout(20_000, () => outgoing.destroy(new Error('no answer within 20 s')));
        outgoing.on('error', (error: NodeJS.ErrnoException) => resolve(`request error ${error.code ?? error.message}`));
        outgoing.end(body);
      });
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < total) {
          const outcome = await one(next++);
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        }
      }),
    );
    agent.destroy();
    expect(Object.fromEntries(outcomes)).toEqual({ '413 413': total });
  });
});
