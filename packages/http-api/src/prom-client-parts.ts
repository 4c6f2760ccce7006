/**
 * prom-client's metric classes without its index. The index also loads the default metrics, and
 * with them `@opentelemetry/api` (≈50 modules, for exemplars certsmith does not use): ≈35 ms of a
 * server's start-up on a 2-core machine, on the thread that answers `/health` (docs/performance.md,
 * start-up). The classes come from the same files the index exports them from, so they are the
 * same classes (a `Registry` here is `prom-client`'s `Registry`); the default metrics are loaded
 * when asked for ({@link loadCollectDefaultMetrics}).
 */
import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

const require = createRequire(import.meta.url);

export const Registry = require('prom-client/lib/registry') as typeof PromClient.Registry;
export const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter;
export const Gauge = require('prom-client/lib/gauge') as typeof PromClient.Gauge;
export const Histogram = require('prom-client/lib/histogram') as typeof PromClient.Histogram;
/** Loads nothing else at import: node:cluster is required on first use, and only by `clusterMetrics()`, which certsmith does not call. */
export const AggregatorRegistry = require('prom-client/lib/cluster') as typeof PromClient.AggregatorRegistry;

/** prom-client's `collectDefaultMetrics`, imported on first use. */
export async function loadCollectDefaultMetrics(): Promise<typeof PromClient.collectDefaultMetrics> {
  const { collectDefaultMetrics } = await import('prom-client');
  return collectDefaultMetrics;
}
