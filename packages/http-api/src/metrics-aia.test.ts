/**
 * AIA fetch counts made in workers reaching a server's registry: per-server isolation, and the real
 * path — the bundle task on a worker-thread pool fetching AIA from a loopback server.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aiaFetchMetricsReporter, bundleTask, listenForAiaFetchMetrics } from '@certsmith/bundler';
import type { AiaFetchMetricsBatch, BundleContextConfig } from '@certsmith/bundler';
import { createServerMetrics } from './metrics.js';
import type { ServerMetrics } from './metrics.js';
import { createWorkerPool } from '@certsmith/worker-pool';
import type { WorkerPool } from '@certsmith/worker-pool';

/** Value of `name` with exactly these labels (0 when absent). */
async function counter(metrics: ServerMetrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  if (metric === undefined) throw new Error(`${name} is not registered`);
  const { values } = await metric.get();
  const found = values.find((value) => JSON.stringify(value.labels) === JSON.stringify(labels));
  return found?.value ?? 0;
}

/** Wait until `read` returns `expected` (batches arrive asynchronously), then return what it read. */
async function eventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  return value;
}

describe('createServerMetrics worker counters', () => {
  it('counts only what arrives on its own channel, so servers in one process do not mix', async () => {
    const a = createServerMetrics({ defaultMetrics: false });
    const b = createServerMetrics({ defaultMetrics: false });
    try {
      expect(a.workerMetricsChannel).not.toBe(b.workerMetricsChannel);
      const reporter = aiaFetchMetricsReporter(a.workerMetricsChannel);
      reporter.observeAiaFetch({ outcome: 'fetched', durationMs: 1, certificates: 1 });
      reporter.observeAiaFetch({ outcome: 'cache_hit' });
      reporter.flush();
      expect(await eventually(() => counter(a, 'certsmith_aia_cache_hits_total'), 1)).toBe(1);
      expect(await counter(a, 'certsmith_aia_fetches_total', { outcome: 'success', reason: '' })).toBe(1);
      expect(await counter(b, 'certsmith_aia_cache_hits_total')).toBe(0);
      expect(await counter(b, 'certsmith_aia_fetches_total', { outcome: 'success', reason: '' })).toBe(0);
    } finally {
      a.close();
      b.close();
    }
  });

  it('stops counting after close', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    metrics.close();
    metrics.close();
    const reporter = aiaFetchMetricsReporter(metrics.workerMetricsChannel);
    reporter.observeAiaFetch({ outcome: 'cache_hit' });
    reporter.flush();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await counter(metrics, 'certsmith_aia_cache_hits_total')).toBe(0);
  });

  it('counts signer events by label, plugin and event', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    try {
      metrics.observeSignerEvent('session_recovered', { label: 'hsm', plugin: '@certsmith/signer-pkcs11' });
      metrics.observeSignerEvent('session_recovered', { label: 'hsm', plugin: '@certsmith/signer-pkcs11' });
      metrics.observeSignerEvent('backend_down', { label: 'hsm', plugin: '@certsmith/signer-pkcs11' });
      expect(await counter(metrics, 'certsmith_signer_events_total', { label: 'hsm', plugin: '@certsmith/signer-pkcs11', event: 'session_recovered' })).toBe(2);
      expect(await counter(metrics, 'certsmith_signer_events_total', { label: 'hsm', plugin: '@certsmith/signer-pkcs11', event: 'backend_down' })).toBe(1);
    } finally {
      metrics.close();
    }
  });
});

describe('AIA counters from bundle tasks on the worker-thread pool', () => {
  const pki = new TestPki();
  const root = pki.root('Worker Metrics Root', { key: 'ecdsa-p256' });
  const inter = pki.intermediate('Worker Metrics Inter', root, { key: 'ecdsa-p256' });
  // Under a root nobody trusts: fetched, but never learned, so the next bundle asks the cache again.
  const strayRoot = pki.root('Worker Metrics Stray Root', { key: 'ecdsa-p256' });
  const strayInter = pki.intermediate('Worker Metrics Stray Inter', strayRoot, { key: 'ecdsa-p256' });
  // Its AIA URL answers 404: the worker learns nothing.
  const unreachableInter = pki.intermediate('Worker Metrics Unreachable Inter', root, { key: 'ecdsa-p256' });
  let server: Server;
  let dir: string;
  let pool: WorkerPool;
  let metrics: ServerMetrics;
  let context: BundleContextConfig;
  let base = '';

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === '/inter.cer') res.end(inter.der);
      else if (req.url === '/stray.cer') res.end(strayInter.der);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = await mkdtemp(join(tmpdir(), 'worker-metrics-'));
    await writeFile(join(dir, 'roots.pem'), root.pem);
    metrics = createServerMetrics({ defaultMetrics: false });
    // Loopback AIA needs the private-network guard opened, as `--allow-private-networks` does.
    context = { caBundleFile: join(dir, 'roots.pem'), aia: { timeoutMs: 2_000 }, network: { allowPrivateNetworks: true }, metricsChannel: metrics.workerMetricsChannel };
    pool = createWorkerPool({ size: 1, tasks: [bundleTask] });
  });

  afterAll(async () => {
    await pool?.close();
    metrics?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('counts fetches, failures and cache hits made in the worker in the main-thread registry, one batch per task', async () => {
    // A second listener on the server's channel sees the batches themselves.
    const batches: AiaFetchMetricsBatch[] = [];
    const tap = listenForAiaFetchMetrics(metrics.workerMetricsChannel, (batch) => batches.push(batch));
    const bundle = (caIssuers: string[], issuer = inter) =>
      pool.run(bundleTask, { context, request: { certificatePem: pki.leaf(`w${Math.random()}.example.com`, issuer, { key: 'ecdsa-p256', caIssuers }).pem } }).catch((error: unknown) => error);
    try {
      expect(await bundle([`${base}/inter.cer`])).toMatchObject({ status: { rebundled: true } });
      expect(await bundle([`${base}/missing.cer`, `${base}/also-missing.cer`], unreachableInter)).toMatchObject({ code: 1220 });
      expect(await bundle([`${base}/stray.cer`], strayInter)).toMatchObject({ code: 1220 });
      expect(await bundle([`${base}/stray.cer`], strayInter)).toMatchObject({ code: 1220 });

      const read = async () => ({
        success: await counter(metrics, 'certsmith_aia_fetches_total', { outcome: 'success', reason: '' }),
        httpStatus: await counter(metrics, 'certsmith_aia_fetches_total', { outcome: 'failure', reason: 'http_status' }),
        cacheHits: await counter(metrics, 'certsmith_aia_cache_hits_total'),
      });
      expect(await eventually(read, { success: 2, httpStatus: 2, cacheHits: 1 })).toEqual({ success: 2, httpStatus: 2, cacheHits: 1 });
      // Both failed fetches of the second task travelled in one message.
      // Each listener gets its own delivery: wait for the tap's copy of the last batch too.
      expect(await eventually(async () => batches.length, 4)).toBe(4);
      expect(batches[1]).toMatchObject({ aiaCacheHits: 0, aiaFetches: [{ outcome: 'failure', reason: 'http_status', count: 2 }] });
    } finally {
      tap.close();
    }
  });
});
