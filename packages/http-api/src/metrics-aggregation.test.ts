import { describe, expect, it } from 'vitest';
import { createServerMetrics } from './metrics.js';
import { renderAggregatedMetrics } from './metrics-aggregation.js';
import { watchCertificateStore } from './store/store-metrics.js';

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([^{\s]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

/** A store that answers the count queries with fixed rows. */
const countingStore = {
  countCertificates: async () => [{ label: '', status: 'good', count: 7 }],
  countExpiring: async () => [],
};

describe('renderAggregatedMetrics', () => {
  it('adds counters and histograms of every process, and merges gauges as each one says', async () => {
    const processes = [createServerMetrics({ defaultMetrics: false, version: '1.2.3' }), createServerMetrics({ defaultMetrics: false, version: '1.2.3' })];
    processes[0]!.observeRequest({ endpoint: 'newcert', method: 'POST', status: 200, durationSeconds: 0.02 });
    processes[1]!.observeRequest({ endpoint: 'newcert', method: 'POST', status: 200, durationSeconds: 0.02 });
    processes[1]!.observeRequest({ endpoint: 'newcert', method: 'POST', status: 200, durationSeconds: 0.3 });
    processes[0]!.watchWorkerPool({ size: 1, maxQueue: 64, pending: 1, queued: 0 });
    processes[1]!.watchWorkerPool({ size: 1, maxQueue: 64, pending: 0, queued: 0 });
    for (const metrics of processes) watchCertificateStore(metrics.registry, { store: countingStore, signers: [] });

    const text = await renderAggregatedMetrics(await Promise.all(processes.map((metrics) => metrics.snapshot())));

    expect(sample(text, 'certsmith_http_requests_total', { endpoint: 'newcert', status: '200' })).toBe(3);
    expect(sample(text, 'certsmith_http_request_duration_seconds_count', { endpoint: 'newcert' })).toBe(3);
    expect(sample(text, 'certsmith_http_request_duration_seconds_bucket', { endpoint: 'newcert', le: '0.025' })).toBe(2);
    expect(sample(text, 'certsmith_build_info', { version: '1.2.3' })).toBe(1);
    expect(sample(text, 'certsmith_worker_pool_threads')).toBe(2);
    expect(sample(text, 'certsmith_worker_pool_max_queue')).toBe(128);
    expect(sample(text, 'certsmith_worker_pool_utilization')).toBe(0.5);
    // The same database seen by both processes: counted once.
    expect(sample(text, 'certsmith_certificates', { status: 'good' })).toBe(7);
    expect(sample(text, 'certsmith_certificate_store_up')).toBe(1);
  });

  it('includes the default process metrics of every snapshot', async () => {
    const metrics = createServerMetrics({ defaultMetrics: 'on-demand' });
    const text = await renderAggregatedMetrics([await metrics.snapshot()]);
    expect(text).toContain('process_cpu_user_seconds_total');
  });
});
