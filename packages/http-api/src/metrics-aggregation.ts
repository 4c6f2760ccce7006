/**
 * `/metrics` for a server made of several processes (`certsmith serve --processes N`): each process
 * gives a {@link MetricsSnapshot} of its registry (`ServerMetrics.snapshot`), and whichever process
 * was asked merges them with prom-client's `AggregatorRegistry.aggregate` — the merge prom-client
 * makes for node:cluster. Counters and histograms add up; a gauge merges as its `aggregator` says
 * (`metrics.ts` and `store/store-metrics.ts` set it where a sum would be wrong: the same database
 * counted by every process, the build's version).
 *
 * prom-client's own collection (`clusterMetrics()`) is not used: it runs in the primary process and
 * asks every connected worker, a starting one included — which answers only once its registry
 * exists, so a scrape during a restart would wait 5 s and fail. The processes' own IPC asks only
 * the processes that serve.
 */
import type { Registry } from 'prom-client';
import { AggregatorRegistry } from './prom-client-parts.js';

/** One process's metrics as prom-client's `Registry.getMetricsAsJSON()` gives them: plain data, structured-clone safe. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** The Prometheus text of `snapshots` merged (the content type is prom-client's, as `ServerMetrics.contentType`). */
export async function renderAggregatedMetrics(snapshots: readonly MetricsSnapshot[]): Promise<string> {
  return await AggregatorRegistry.aggregate([...snapshots]).metrics();
}
