/**
 * AIA fetch counts, kept in worker threads and exported by the main thread. The AIA fetcher lives
 * in each worker's bundle context, but the server's prom-client registry lives on the main thread, so a
 * worker counts locally and posts the increments, batched, on a `BroadcastChannel` named for its
 * server; the main thread adds them to its counters ({@link listenForAiaFetchMetrics}).
 *
 * Why a channel and not the task result: AIA fetches also happen in tasks that do not return
 * bundles (newcert/sign with `"bundle": true`), and a channel needs nothing from the pool. Why one
 * name per server: several servers in one process (tests, embedding) must not count each other's
 * fetches. Both ends `unref()` their channel, so counting never keeps a process or a worker alive.
 *
 * Batching: increments accumulate and are posted together, never one message per fetch. The task
 * that counted calls {@link AiaFetchMetricsReporter.flush} when it ends (the bundle task does), so its
 * counts are visible to the next scrape at once and do not depend on how a pool parks idle
 * workers (a pool that parks them on `Atomics.wait` runs no timer between tasks). The timer ({@link AIA_FETCH_METRICS_FLUSH_MS}) bounds
 * the delay inside a long task. So a worker posts at most one batch per task that touched AIA, plus
 * one per interval of a long task.
 * Increments of a worker terminated mid-task (shutdown, a task timeout) are lost, which a counter
 * scraped every few seconds can afford.
 */
import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import type { AiaFetchFailureReason, AiaFetchObservation } from '@certsmith/chain-builder';

/** Longest a worker keeps increments before posting them. */
export const AIA_FETCH_METRICS_FLUSH_MS = 250;

const MESSAGE_TYPE = 'certsmith.aia-fetch-metrics.v1';

/** Values of the `reason` label of `certsmith_aia_fetches_total` (`''` on success). */
export const AIA_FAILURE_REASONS = [
  'invalid_url',
  'blocked',
  'timeout',
  'too_large',
  'too_many_redirects',
  'http_status',
  'parse',
  'network',
] as const satisfies readonly AiaFetchFailureReason[];

// Fails to compile when chain-builder adds a reason this list lacks (the receiver drops unknown ones).
const everyReasonListed: Exclude<AiaFetchFailureReason, (typeof AIA_FAILURE_REASONS)[number]> extends never ? true : never = true;
void everyReasonListed;

/** Label set of one `certsmith_aia_fetches_total` increment. */
export interface AiaFetchCount {
  readonly outcome: 'success' | 'failure';
  /** `''` for a success. */
  readonly reason: AiaFetchFailureReason | '';
  readonly count: number;
}

/** What a worker posts: increments since its previous batch. Plain data (structured clone). */
export interface AiaFetchMetricsBatch {
  readonly type: typeof MESSAGE_TYPE;
  /** `certsmith_aia_fetches_total` increments. */
  readonly aiaFetches: readonly AiaFetchCount[];
  /** `certsmith_aia_cache_hits_total` increment. */
  readonly aiaCacheHits: number;
}

/** A fresh channel name for one server (unique in the process). */
export function createAiaFetchMetricsChannelName(): string {
  return `certsmith.aia-fetch-metrics.${randomUUID()}`;
}

/** The worker side: counts observations and posts them in batches. */
export interface AiaFetchMetricsReporter {
  /** Count one AIA lookup; use as the fetcher's `observer`. */
  observeAiaFetch(observation: AiaFetchObservation): void;
  /** Post what is pending now (nothing when nothing is); call when a task that counted ends. */
  flush(): void;
}

const reporters = new Map<string, AiaFetchMetricsReporter>();

/**
 * The reporter of this thread for `channelName`, made on first use and shared afterwards (one
 * batch stream per thread and server, whatever number of bundle contexts report on it).
 */
export function aiaFetchMetricsReporter(channelName: string): AiaFetchMetricsReporter {
  let reporter = reporters.get(channelName);
  if (reporter === undefined) {
    reporter = createReporter(channelName);
    reporters.set(channelName, reporter);
  }
  return reporter;
}

function createReporter(channelName: string): AiaFetchMetricsReporter {
  let channel: BroadcastChannel | null = null;
  let timer: NodeJS.Timeout | null = null;
  const fetches = new Map<string, { outcome: AiaFetchCount['outcome']; reason: AiaFetchCount['reason']; count: number }>();
  let cacheHits = 0;

  const flush = (): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (fetches.size === 0 && cacheHits === 0) return;
    const batch: AiaFetchMetricsBatch = { type: MESSAGE_TYPE, aiaFetches: [...fetches.values()], aiaCacheHits: cacheHits };
    fetches.clear();
    cacheHits = 0;
    if (channel === null) {
      channel = new BroadcastChannel(channelName);
      channel.unref();
    }
    channel.postMessage(batch);
  };
  const schedule = (): void => {
    if (timer !== null) return;
    timer = setTimeout(flush, AIA_FETCH_METRICS_FLUSH_MS);
    timer.unref();
  };

  return {
    observeAiaFetch(observation) {
      if (observation.outcome === 'cache_hit') cacheHits += 1;
      else {
        const outcome = observation.outcome === 'fetched' ? 'success' : 'failure';
        const reason = observation.outcome === 'failed' ? observation.reason : '';
        const key = `${outcome}:${reason}`;
        const entry = fetches.get(key);
        if (entry === undefined) fetches.set(key, { outcome, reason, count: 1 });
        else entry.count += 1;
      }
      schedule();
    },
    flush,
  };
}

/** The main-thread side of one channel. */
export interface AiaFetchMetricsListener {
  /** Stop listening (idempotent). */
  close(): void;
}

/**
 * Receive the batches posted on `channelName` and hand each valid one to `onBatch`. Anything else
 * on the channel (a malformed message, an unknown reason, a non-positive count) is dropped, so a
 * label value can only come from the fixed lists.
 */
export function listenForAiaFetchMetrics(channelName: string, onBatch: (batch: AiaFetchMetricsBatch) => void): AiaFetchMetricsListener {
  const channel = new BroadcastChannel(channelName);
  channel.unref();
  // Node delivers a MessageEvent; its `data` is the structured clone of what a worker posted.
  channel.onmessage = (event: unknown) => {
    const batch = validBatch((event as { data?: unknown }).data);
    if (batch !== null) onBatch(batch);
  };
  let closed = false;
  return {
    close() {
      if (closed) return;
      closed = true;
      channel.close();
    },
  };
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function validBatch(data: unknown): AiaFetchMetricsBatch | null {
  if (typeof data !== 'object' || data === null) return null;
  const { type, aiaFetches, aiaCacheHits } = data as Record<string, unknown>;
  if (type !== MESSAGE_TYPE || !Array.isArray(aiaFetches) || !isCount(aiaCacheHits)) return null;
  const fetches: AiaFetchCount[] = [];
  for (const item of aiaFetches as unknown[]) {
    const { outcome, reason, count } = (item ?? {}) as Record<string, unknown>;
    if (!isCount(count) || count === 0) continue;
    if (outcome === 'success' && reason === '') fetches.push({ outcome, reason, count });
    else if (outcome === 'failure' && (AIA_FAILURE_REASONS as readonly unknown[]).includes(reason)) {
      fetches.push({ outcome, reason: reason as AiaFetchFailureReason, count });
    }
  }
  return { type: MESSAGE_TYPE, aiaFetches: fetches, aiaCacheHits };
}
