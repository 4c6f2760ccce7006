/**
 * Metrics and request logs end to end, on the built `certsmith serve`:
 * - `/metrics` on the API port (default): request counters by endpoint/status/CFSSL code, latency
 *   histograms, worker-pool gauges read at scrape time (a queue is observed while RSA keys are
 *   generated on one worker), worker task counters, signer calls by label and plugin, process metrics;
 * - AIA fetches and cache hits counted in the bundle worker and exported by the main thread, against
 *   a loopback AIA server (`--allow-private-networks` lets the worker reach it);
 * - `--metrics-address`: `/metrics` only there, not on the API port;
 * - one JSON `request` line per request with the request ID (echoed as `X-Request-Id`), operation,
 *   status, CFSSL code, duration, label and profile — never a body, a key or a token; `--loglevel`.
 * Metric values are read from the exposition text with a small parser written here.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TestPki, type TestCertificate } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { killAllCertsmith, parseLogLine, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';
import { findFreePort } from './peers/free-port.js';

let scratch: Scratch;
let ca: OpensslCa;
let main: StartedCertsmith;
/** Loopback AIA server: `/inter.cer` serves the intermediate of {@link aiaLeaf}, anything else is 404. */
let aiaServer: HttpServer;
let aiaBase = '';
const pki = new TestPki({ now: new Date() });
// Under a root the server does not trust (no --ca-bundle: Node's store): the fetched intermediate
// never chains, so it is not learned and the next bundle of the same leaf asks the fetcher's cache.
const aiaRoot = pki.root('Metrics AIA Root', { key: 'ecdsa-p256' });
const aiaInter = pki.intermediate('Metrics AIA Inter', aiaRoot, { key: 'ecdsa-p256' });

beforeAll(async () => {
  scratch = await createScratch('metrics');
  ca = await makeRootCa(scratch, 'ca', 'Metrics CA');
  aiaServer = createHttpServer((request, response) => {
    if (request.url === '/inter.cer') response.end(aiaInter.der);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => aiaServer.listen(0, '127.0.0.1', resolve));
  aiaBase = `http://127.0.0.1:${(aiaServer.address() as AddressInfo).port}`;
  main = await startCertsmith(
    // --allow-private-networks: the AIA server is on loopback, which the SSRF guard refuses by default.
    // One process: the counts below are of one pool and one AIA cache (each serving process has its
    // own); serve-processes.test.ts checks /metrics merging the processes.
    ['--port', '0', '--processes', '1', '--workers', '1', '--loglevel', 'info', '--data-dir', scratch.path('data'), '--ca', ca.certFile, '--ca-key', ca.keyFile, '--allow-private-networks'],
    60_000,
  );
});

afterAll(async () => {
  await killAllCertsmith();
  aiaServer?.closeAllConnections();
  await new Promise((resolve) => (aiaServer ? aiaServer.close(resolve) : resolve(undefined)));
  await scratch?.cleanup();
});

/** Value of the sample `name{labels…}` whose labels include `labels`; undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

async function post(url: string, operation: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${url}/api/v1/cfssl/${operation}`, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(60_000) });
}

function requestLines(server: StartedCertsmith): Record<string, unknown>[] {
  return server.lines.map(parseLogLine).filter((line): line is Record<string, unknown> => line?.['msg'] === 'request');
}

describe('/metrics on the API port', () => {
  it('counts requests by endpoint, status and CFSSL code, with latency histograms and signer and task counters', async () => {
    expect((await fetch(`${main.url}/api/v1/cfssl/health`)).status).toBe(200);
    const issued = await post(main.url, 'newcert', { request: { CN: 'm.example', hosts: ['m.example'] }, label: 'default' });
    expect(issued.status).toBe(200);
    expect((await post(main.url, 'newcert', { request: { CN: 'm.example' }, profile: 'nosuch' })).status).toBe(400);
    expect((await post(main.url, 'bundle', { certificate: 'garbage' })).status).toBe(400);
    expect((await fetch(`${main.url}/api/v1/cfssl/nosuch`)).status).toBe(404);

    const response = await fetch(`${main.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await response.text();
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'health', method: 'GET', status: '200', code: '' })).toBe(1);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'newcert', method: 'POST', status: '200', code: '' })).toBe(1);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'newcert', status: '400', code: '5400' })).toBe(1);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'bundle', status: '400', code: '1002' })).toBe(1);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'unknown', status: '404', code: '404' })).toBe(1);
    expect(sample(text, 'certsmith_http_request_duration_seconds_count', { endpoint: 'newcert' })).toBe(2);
    expect(sample(text, 'certsmith_http_request_duration_seconds_bucket', { endpoint: 'newcert', le: '+Inf' })).toBe(2);
    // Two signatures for the one newcert: its certificate's and its first OCSP response's (recorded with it).
    expect(sample(text, 'certsmith_signer_calls_total', { label: 'default', plugin: '@certsmith/signer-local', call: 'sign' })).toBe(2);
    expect(sample(text, 'certsmith_signer_call_duration_seconds_count', { label: 'default', plugin: '@certsmith/signer-local', call: 'sign' })).toBe(2);
    expect(sample(text, 'certsmith_worker_tasks_total', { task: 'issue.newcert-in-worker', outcome: 'success' })).toBe(1);
    expect(sample(text, 'certsmith_worker_pool_threads')).toBe(1);
    expect(sample(text, 'certsmith_worker_pool_queue_depth')).toBe(0);
    expect(sample(text, 'certsmith_build_info', { version: '0.1.0' })).toBe(1);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('reads worker-pool queue depth and utilisation at scrape time', async () => {
    // Six RSA-2048 keys on one worker: they run (primes on libuv's thread pool, the worker taking the
    // next meanwhile) or wait for the worker, and either way count until answered.
    const requests = Array.from({ length: 6 }, (_, i) =>
      post(main.url, 'newcert', { request: { CN: `rsa${i}.example`, hosts: [`rsa${i}.example`], key: { algo: 'rsa', size: 2048 } } }),
    );
    let settled = false;
    const all = Promise.all(requests).finally(() => (settled = true));
    let deepest = 0;
    let busiest = 0;
    while (!settled) {
      const text = await (await fetch(`${main.url}/metrics`)).text();
      deepest = Math.max(deepest, (sample(text, 'certsmith_worker_pool_active_tasks') ?? 0) + (sample(text, 'certsmith_worker_pool_queue_depth') ?? 0));
      busiest = Math.max(busiest, sample(text, 'certsmith_worker_pool_utilization') ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (const response of await all) expect(response.status).toBe(200);
    expect(deepest).toBeGreaterThan(1);
    expect(busiest).toBe(1);
    const text = await (await fetch(`${main.url}/metrics`)).text();
    expect(sample(text, 'certsmith_worker_pool_queue_depth')).toBe(0);
    expect(sample(text, 'certsmith_worker_pool_active_tasks')).toBe(0);
    expect(sample(text, 'certsmith_worker_pool_utilization')).toBe(0);
  });
});

describe('request log lines', () => {
  it('one JSON line per request: request ID (echoed), operation, status, code, duration, label, profile; no bodies or keys', async () => {
    const before = requestLines(main).length;
    const echoed = await post(main.url, 'newcert', { request: { CN: 'log.example', hosts: ['log.example'] }, label: 'default', profile: 'default' }, { 'X-Request-Id': 'e2e-log-1' });
    expect(echoed.headers.get('x-request-id')).toBe('e2e-log-1');
    const privateKey = ((await echoed.json()) as { result: { private_key: string } }).result.private_key;
    const generated = await post(main.url, 'newcert', { request: { CN: 'x' }, Profile: 'nosuch' }, { 'X-Request-Id': 'not a valid id!' });
    const generatedId = generated.headers.get('x-request-id')!;
    expect(generatedId).toMatch(/^[0-9a-f-]{36}$/);

    // A request's line reaches stdout a few ms after its response (lines are gathered into one
    // write), so lines of earlier tests' requests can still arrive after `before` was taken: pick
    // this test's lines by their request IDs, and require exactly one line per request.
    const linesOf = (reqId: string) => requestLines(main).slice(before).filter((line) => line['reqId'] === reqId);
    await main.waitForLine((text) => parseLogLine(text)?.['reqId'] === 'e2e-log-1', 10_000);
    await main.waitForLine((text) => parseLogLine(text)?.['reqId'] === generatedId, 10_000);
    expect(linesOf('e2e-log-1')).toHaveLength(1);
    expect(linesOf(generatedId)).toHaveLength(1);
    const [first] = linesOf('e2e-log-1');
    const [second] = linesOf(generatedId);
    // Sequential requests of one process: their lines come in request order.
    expect(main.lines.findIndex((text) => parseLogLine(text)?.['reqId'] === 'e2e-log-1')).toBeLessThan(
      main.lines.findIndex((text) => parseLogLine(text)?.['reqId'] === generatedId),
    );
    expect(first).toMatchObject({ level: 30, reqId: 'e2e-log-1', method: 'POST', path: '/api/v1/cfssl/newcert', operation: 'newcert', status: 200, label: 'default', profile: 'default' });
    expect(first!['durationMs']).toBeTypeOf('number');
    expect(first).not.toHaveProperty('code');
    expect(typeof first!['time']).toBe('string');
    expect(second).toMatchObject({ reqId: generatedId, operation: 'newcert', status: 400, code: 5400, profile: 'nosuch' });
    expect(second).not.toHaveProperty('label');

    const stdout = main.lines.join('\n');
    const keyBody = privateKey.split('\n')[1]!;
    expect(stdout).not.toContain(keyBody);
    expect(stdout).not.toContain('log.example');
    expect(stdout).not.toContain('PRIVATE KEY');
  });
});

describe('--metrics-address', () => {
  it('serves /metrics only on its own listener; --loglevel warn drops the request lines', async () => {
    const port = await findFreePort();
    const server = await startCertsmith(
      ['--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path('data'), '--ca', ca.certFile, '--ca-key', ca.keyFile, '-metrics-address', `127.0.0.1:${port}`],
      60_000,
    );
    expect((await fetch(`${server.url}/api/v1/cfssl/health`)).status).toBe(200);
    const onApi = await fetch(`${server.url}/metrics`);
    expect(onApi.status).toBe(404);
    expect(await onApi.json()).toMatchObject({ success: false, errors: [{ code: 404 }] });
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(scraped.status).toBe(200);
    const text = await scraped.text();
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'health', status: '200' })).toBe(1);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'unknown', status: '404' })).toBe(1);
    expect((await fetch(`http://127.0.0.1:${port}/api/v1/cfssl/health`)).status).toBe(404);
    expect(requestLines(server)).toEqual([]);
    expect(server.lines.map(parseLogLine).some((line) => line?.['level'] === 30)).toBe(false);

    server.child.kill('SIGTERM');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });
});

// Last: its scrapes log request lines asynchronously, which would shift the request-log test's count.
describe('AIA metrics', () => {
  const leafVia = (name: string, path: string): TestCertificate => pki.leaf(name, aiaInter, { key: 'ecdsa-p256', caIssuers: [`${aiaBase}${path}`] });

  /** Scrape until `read` gives `expected`: workers post their counts right after the task, asynchronously. */
  async function scrapeUntil(read: (text: string) => unknown, expected: unknown): Promise<string> {
    const deadline = Date.now() + 10_000;
    let text = await (await fetch(`${main.url}/metrics`)).text();
    while (JSON.stringify(read(text)) !== JSON.stringify(expected) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      text = await (await fetch(`${main.url}/metrics`)).text();
    }
    return text;
  }

  it('counts AIA fetches by outcome and reason, and cache hits, made inside the bundle worker', async () => {
    const fetched = leafVia('aia-metrics.example.com', '/inter.cer');
    // Fetched once, then answered from the worker's cache; neither chains to a trusted root.
    for (let i = 0; i < 2; i++) expect(await (await post(main.url, 'bundle', { certificate: fetched.pem })).json()).toMatchObject({ errors: [{ code: 1220 }] });
    expect((await post(main.url, 'bundle', { certificate: leafVia('aia-404.example.com', '/missing.cer').pem })).status).toBe(400);

    const read = (text: string) => [
      sample(text, 'certsmith_aia_fetches_total', { outcome: 'success', reason: '' }),
      sample(text, 'certsmith_aia_fetches_total', { outcome: 'failure', reason: 'http_status' }),
      sample(text, 'certsmith_aia_cache_hits_total'),
    ];
    const text = await scrapeUntil(read, [1, 1, 1]);
    expect(read(text)).toEqual([1, 1, 1]);
    expect(text).toContain('# TYPE certsmith_aia_fetches_total counter');
    // The URL never becomes a label.
    expect(text).not.toContain(aiaBase);
  });
});
