/** The worker side (reporter) and main-thread side (listener) of the AIA fetch counts channel. */
import { BroadcastChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { AIA_FETCH_METRICS_FLUSH_MS, aiaFetchMetricsReporter, createAiaFetchMetricsChannelName, listenForAiaFetchMetrics } from './aia-fetch-metrics.js';
import type { AiaFetchMetricsBatch } from './aia-fetch-metrics.js';

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

describe('aiaFetchMetricsReporter and listenForAiaFetchMetrics', () => {
  it('sends many observations as one batch per flush interval', async () => {
    const name = createAiaFetchMetricsChannelName();
    const batches: AiaFetchMetricsBatch[] = [];
    const listener = listenForAiaFetchMetrics(name, (batch) => batches.push(batch));
    try {
      const reporter = aiaFetchMetricsReporter(name);
      expect(aiaFetchMetricsReporter(name)).toBe(reporter);
      for (let i = 0; i < 100; i++) reporter.observeAiaFetch({ outcome: 'cache_hit' });
      for (let i = 0; i < 3; i++) reporter.observeAiaFetch({ outcome: 'fetched', durationMs: 5, certificates: 1 });
      reporter.observeAiaFetch({ outcome: 'failed', reason: 'timeout', durationMs: 5_000 });
      reporter.observeAiaFetch({ outcome: 'failed', reason: 'timeout', durationMs: 5_000 });
      reporter.observeAiaFetch({ outcome: 'failed', reason: 'blocked', durationMs: 1 });
      await new Promise((resolve) => setTimeout(resolve, AIA_FETCH_METRICS_FLUSH_MS * 3));
      expect(batches).toEqual([
        {
          type: 'certsmith.aia-fetch-metrics.v1',
          aiaCacheHits: 100,
          aiaFetches: [
            { outcome: 'success', reason: '', count: 3 },
            { outcome: 'failure', reason: 'timeout', count: 2 },
            { outcome: 'failure', reason: 'blocked', count: 1 },
          ],
        },
      ]);
      // Nothing pending, nothing sent.
      reporter.flush();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(batches).toHaveLength(1);
    } finally {
      listener.close();
    }
  });

  it('drops malformed messages, unknown reasons and bad counts, so labels stay bounded', async () => {
    const name = createAiaFetchMetricsChannelName();
    const batches: AiaFetchMetricsBatch[] = [];
    const listener = listenForAiaFetchMetrics(name, (batch) => batches.push(batch));
    const sender = new BroadcastChannel(name);
    try {
      sender.postMessage('hello');
      sender.postMessage({ type: 'something-else', aiaFetches: [], aiaCacheHits: 1 });
      sender.postMessage({ type: 'certsmith.aia-fetch-metrics.v1', aiaFetches: [], aiaCacheHits: -1 });
      sender.postMessage({
        type: 'certsmith.aia-fetch-metrics.v1',
        aiaCacheHits: 2,
        aiaFetches: [
          { outcome: 'failure', reason: 'http://internal.example/secret', count: 1 },
          { outcome: 'success', reason: 'timeout', count: 1 },
          { outcome: 'failure', reason: 'parse', count: 1.5 },
          { outcome: 'failure', reason: 'parse', count: 4 },
          null,
        ],
      });
      await eventually(async () => batches.length, 1);
      expect(batches).toEqual([{ type: 'certsmith.aia-fetch-metrics.v1', aiaCacheHits: 2, aiaFetches: [{ outcome: 'failure', reason: 'parse', count: 4 }] }]);
    } finally {
      sender.close();
      listener.close();
    }
  });
});
