import type { AddressInfo } from 'node:net';
import type { Signer } from '@certsmith/signer-api';
import { CertsmithError } from '@certsmith/x509-core';
import { describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { ServiceUnavailableError } from './errors.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import { createSignerDirectory } from '@certsmith/issuer';
import { createMetricsRoute, createMetricsServer, createServerMetrics } from './metrics.js';
import { defineOperation } from './operation.js';
import { defineTask, createInlineTaskRunner } from '@certsmith/worker-pool';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const match = /^([^{\s]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe('createServerMetrics', () => {
  it('counts requests by endpoint, method, status and code, with latency histograms', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false, version: '9.9.9' });
    metrics.observeRequest({ endpoint: 'newcert', method: 'POST', status: 200, durationSeconds: 0.02 });
    metrics.observeRequest({ endpoint: 'newcert', method: 'POST', status: 200, durationSeconds: 0.3 });
    metrics.observeRequest({ endpoint: 'newcert', method: 'POST', status: 400, code: 2400, durationSeconds: 0.001 });
    metrics.observeRequest({ endpoint: 'unknown', method: 'PROPFIND', status: 404, code: 404, durationSeconds: 0.0001 });
    const text = await metrics.render();
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'newcert', method: 'POST', status: '200', code: '' })).toBe(2);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'newcert', status: '400', code: '2400' })).toBe(1);
    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'unknown', method: 'OTHER', status: '404' })).toBe(1);
    expect(sample(text, 'certsmith_http_request_duration_seconds_count', { endpoint: 'newcert' })).toBe(3);
    expect(sample(text, 'certsmith_http_request_duration_seconds_bucket', { endpoint: 'newcert', le: '0.025' })).toBe(2);
    expect(sample(text, 'certsmith_build_info', { version: '9.9.9' })).toBe(1);
    expect(metrics.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it('keeps one registry per instance: two servers in one process do not clash', async () => {
    const a = createServerMetrics();
    const b = createServerMetrics();
    a.observeRequest({ endpoint: 'health', method: 'GET', status: 200, durationSeconds: 0.001 });
    expect(sample(await a.render(), 'certsmith_http_requests_total', { endpoint: 'health' })).toBe(1);
    expect(sample(await b.render(), 'certsmith_http_requests_total', { endpoint: 'health' })).toBeUndefined();
    // Default process metrics are there too.
    expect(await a.render()).toContain('process_cpu_user_seconds_total');
  });

  it('registers the default metrics on demand: when asked, or at the first scrape', async () => {
    const asked = createServerMetrics({ defaultMetrics: 'on-demand' });
    expect(asked.registry.getSingleMetric('process_cpu_user_seconds_total')).toBeUndefined();
    await asked.registerDefaultMetrics();
    await asked.registerDefaultMetrics();
    expect(asked.registry.getSingleMetric('process_cpu_user_seconds_total')).toBeDefined();
    const scraped = createServerMetrics({ defaultMetrics: 'on-demand' });
    expect(await scraped.render()).toContain('process_cpu_user_seconds_total');
    const none = createServerMetrics({ defaultMetrics: false });
    await none.registerDefaultMetrics();
    expect(await none.render()).not.toContain('process_cpu_user_seconds_total');
  });

  it('reads the worker pool gauges at scrape time', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    const pool = { size: 4, maxQueue: 16, pending: 0, queued: 0 };
    metrics.watchWorkerPool(pool);
    Object.assign(pool, { pending: 6, queued: 2 });
    let text = await metrics.render();
    expect(sample(text, 'certsmith_worker_pool_threads')).toBe(4);
    expect(sample(text, 'certsmith_worker_pool_max_queue')).toBe(16);
    expect(sample(text, 'certsmith_worker_pool_active_tasks')).toBe(4);
    expect(sample(text, 'certsmith_worker_pool_queue_depth')).toBe(2);
    expect(sample(text, 'certsmith_worker_pool_utilization')).toBe(1);
    Object.assign(pool, { pending: 1, queued: 0 });
    text = await metrics.render();
    expect(sample(text, 'certsmith_worker_pool_queue_depth')).toBe(0);
    expect(sample(text, 'certsmith_worker_pool_utilization')).toBe(0.25);
  });

  it('reads a pool without worker threads (--workers 0): tasks run and wait, no thread is busy', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    metrics.watchWorkerPool({ size: 0, maxQueue: 64, pending: 11, queued: 3 });
    const text = await metrics.render();
    expect(sample(text, 'certsmith_worker_pool_threads')).toBe(0);
    expect(sample(text, 'certsmith_worker_pool_max_queue')).toBe(64);
    expect(sample(text, 'certsmith_worker_pool_active_tasks')).toBe(8);
    expect(sample(text, 'certsmith_worker_pool_queue_depth')).toBe(3);
    expect(sample(text, 'certsmith_worker_pool_utilization')).toBe(0);
  });

  it('counts worker tasks by outcome', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    const ok = defineTask({ name: 'unit.ok', module: import.meta.url, run: (n: number) => n + 1 });
    const busy = { run: async () => Promise.reject(new ServiceUnavailableError('busy', 1)), close: async () => {} };
    const runner = metrics.instrumentTaskRunner(createInlineTaskRunner());
    expect(await runner.run(ok, 1)).toBe(2);
    await expect(metrics.instrumentTaskRunner(busy).run(ok, 1)).rejects.toThrow('busy');
    const text = await metrics.render();
    expect(sample(text, 'certsmith_worker_tasks_total', { task: 'unit.ok', outcome: 'success' })).toBe(1);
    expect(sample(text, 'certsmith_worker_tasks_total', { task: 'unit.ok', outcome: 'rejected' })).toBe(1);
  });

  it('instruments signers without changing what they are', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    let fail = false;
    class PrivateSigner implements Signer {
      readonly #secret = new Uint8Array([1, 2, 3]);
      readonly algorithms: Signer['algorithms'] = ['ECDSA-SHA256'];
      readonly forwardsLabels = false;
      async getCertificate() {
        return { der: new Uint8Array(), pem: '' };
      }
      async sign(tbs: Uint8Array) {
        if (fail) throw new CertsmithError(2500, 'Private key is unavailable');
        return new Uint8Array([...this.#secret, ...tbs]);
      }
      async close() {}
    }
    const remote: Signer = {
      algorithms: [],
      getCertificate: async () => ({ der: new Uint8Array(), pem: '' }),
      signRequest: async () => {
        throw new Error('boom');
      },
      close: async () => {},
    };
    const directory = metrics.instrumentSignerDirectory(
      createSignerDirectory([
        { label: 'default', signer: new PrivateSigner(), policy: {} as never, pluginName: '@certsmith/signer-pkcs11' },
        { label: 'remote', signer: remote, policy: {} as never, forwardsLabels: true },
      ]),
    );
    const local = directory.route('').signer;
    expect(typeof local.sign).toBe('function');
    expect(local.sign).toBe(local.sign); // stable identity
    expect(typeof directory.route('remote').signer.sign).toBe('undefined');
    expect((local as unknown as { forwardsLabels: boolean }).forwardsLabels).toBe(false);
    expect(await local.sign!(new Uint8Array([9]), 'ECDSA-SHA256')).toEqual(new Uint8Array([1, 2, 3, 9]));
    fail = true;
    await expect(local.sign!(new Uint8Array([9]), 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500 });
    await expect(directory.route('remote').signer.signRequest!({ certificate_request: '' } as never)).rejects.toThrow('boom');
    expect(directory.entries.find((entry) => entry.label === 'remote')?.forwardsLabels).toBe(true);

    const text = await metrics.render();
    const pkcs11 = { label: 'default', plugin: '@certsmith/signer-pkcs11', call: 'sign' };
    expect(sample(text, 'certsmith_signer_calls_total', pkcs11)).toBe(2);
    expect(sample(text, 'certsmith_signer_failures_total', { ...pkcs11, code: '2500' })).toBe(1);
    expect(sample(text, 'certsmith_signer_failures_total', { label: 'remote', plugin: 'unknown', call: 'sign_request', code: 'uncoded' })).toBe(1);
    expect(sample(text, 'certsmith_signer_call_duration_seconds_count', pkcs11)).toBe(2);
    expect(sample(text, 'certsmith_signer_calls_in_flight', { label: 'default' })).toBe(0);
  });
});

describe('/metrics', () => {
  it('is a raw route of the app, counted like any endpoint', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    const health = defineOperation({ name: 'health', method: 'GET', handle: () => ({ healthy: true }) });
    const app = createApp({ operations: [health], routes: [createMetricsRoute(metrics)], metrics });
    const server = createHttpServer(app);
    const { url } = await listen(server, 0, '127.0.0.1');
    try {
      await fetch(`${url}/api/v1/cfssl/health`);
      await fetch(`${url}/api/v1/cfssl/nosuch`);
      const response = await fetch(`${url}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(metrics.contentType);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      const text = await response.text();
      expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'health', method: 'GET', status: '200' })).toBe(1);
      expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'unknown', status: '404', code: '404' })).toBe(1);
      const post = await fetch(`${url}/metrics`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(await post.json()).toMatchObject({ success: false, errors: [{ code: 405 }] });
      expect(sample(await metrics.render(), 'certsmith_http_requests_total', { endpoint: 'metrics', method: 'GET', status: '200' })).toBe(1);
    } finally {
      await closeHttpServer(server, { timeoutMs: 1000 });
    }
  });

  it('has its own listener for --metrics-address that serves nothing else', async () => {
    const metrics = createServerMetrics({ defaultMetrics: false });
    const server = createMetricsServer(metrics);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ok = await fetch(`${base}/metrics?x=1`);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('# TYPE certsmith_http_requests_total counter');
      expect((await fetch(`${base}/api/v1/cfssl/health`)).status).toBe(404);
      expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
