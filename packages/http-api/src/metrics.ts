/**
 * Prometheus metrics (prom-client) for one server instance: its own {@link Registry} (never the
 * global one, so several servers in one process do not clash), request counters and latency
 * histograms fed by the app ({@link RequestObserver}), worker-pool gauges read on scrape, worker task
 * counters, signer call counters from a transparent wrapper around each signer, signer lifecycle
 * events the plugins report, and AIA fetch counters that the bundle workers post on this server's
 * channel (`@certsmith/bundler`, `aia-fetch-metrics.ts`).
 *
 * Label values are bounded: endpoints are operation or route names (`unknown` for anything else),
 * methods a fixed list (`OTHER` beyond it), codes CFSSL's catalogue, signer labels and plugins come
 * from the configuration, signer events and AIA outcomes and reasons are fixed lists. Nothing from a
 * request body (an AIA URL included) becomes a label.
 */
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Server } from 'node:http';
import type { Signer, SignerEvent } from '@certsmith/signer-api';
import { ErrorCode, isCodedError } from '@certsmith/x509-core';
import type { Registry as PromRegistry } from 'prom-client';
import { Counter, Gauge, Histogram, Registry, loadCollectDefaultMetrics } from './prom-client-parts.js';
import type { RawRoute, RequestObservation, RequestObserver } from './app.js';
import { errorEnvelope, serializeEnvelope } from './envelope.js';
import { ServiceUnavailableError } from './errors.js';
import { createSignerDirectory } from '@certsmith/issuer';
import type { SignerDirectory } from '@certsmith/issuer';
import type { TaskRunner } from '@certsmith/worker-pool';
import type { MetricsSnapshot } from './metrics-aggregation.js';
import { createAiaFetchMetricsChannelName, listenForAiaFetchMetrics } from '@certsmith/bundler';

/** Path of the Prometheus endpoint, on the API port or on `--metrics-address`. */
export const METRICS_PATH = '/metrics';

/** Request latency buckets (seconds): sub-millisecond health checks up to RSA key generation under load. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Signer call buckets (seconds): a local ECDSA signature to an HSM or a remote CA under load. */
const SIGNER_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

const KNOWN_METHODS = new Set(['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);

/** Signer methods that are counted as calls (the ones a request waits for). */
const SIGNER_CALLS: Readonly<Record<string, string>> = { sign: 'sign', signRequest: 'sign_request', info: 'info' };

/** What the pool gauges read on each scrape (a `WorkerPool` has all three). */
export interface WorkerPoolGaugeSource {
  /** Worker threads (0: every task runs on the event loop). */
  readonly size: number;
  readonly maxQueue: number;
  /** Tasks admitted and not settled: running plus waiting. */
  readonly pending: number;
  /** Tasks waiting for a thread (the rest of `pending` runs). */
  readonly queued: number;
}

/** Options of {@link createServerMetrics}. */
export interface ServerMetricsOptions {
  /**
   * Also export prom-client's process and Node.js metrics (CPU, memory, event loop lag, GC); default
   * true. `'on-demand'`: registered by {@link ServerMetrics.registerDefaultMetrics} or by the first
   * {@link ServerMetrics.render}, whichever comes first — a server calls it a little after it
   * listens, so that loading them is not part of its start-up.
   */
  defaultMetrics?: boolean | 'on-demand';
  /** Value of the `version` label of `certsmith_build_info`. */
  version?: string;
}

/** The metrics of one server. */
export interface ServerMetrics extends RequestObserver {
  /** This server's registry. */
  readonly registry: PromRegistry;
  /** `Content-Type` of {@link ServerMetrics.render} (Prometheus text format 0.0.4). */
  readonly contentType: string;
  /** The exposition text. */
  render(): Promise<string>;
  /**
   * This registry's metrics as data, the default metrics included (registered now when they are
   * on demand), for a process that merges several processes' metrics (`renderAggregatedMetrics`).
   */
  snapshot(): Promise<MetricsSnapshot>;
  /**
   * Register the default metrics now, when the options ask for them ({@link ServerMetricsOptions.defaultMetrics});
   * resolves once they are registered. Idempotent.
   */
  registerDefaultMetrics(): Promise<void>;
  /** Export gauges for `pool`, read at scrape time. One pool per server. */
  watchWorkerPool(pool: WorkerPoolGaugeSource): void;
  /** A runner that counts and times the tasks `runner` runs (close is passed through). */
  instrumentTaskRunner(runner: TaskRunner): TaskRunner;
  /** `signer` with `sign`, `signRequest` and `info` counted and timed under `label` and `plugin`. */
  instrumentSigner(signer: Signer, labels: { label: string; plugin: string }): Signer;
  /** A directory whose signers are instrumented ({@link ServerMetrics.instrumentSigner}). */
  instrumentSignerDirectory(directory: SignerDirectory): SignerDirectory;
  /** Count a lifecycle event a signer reported (its context's `reportEvent`), under `label` and `plugin`. */
  observeSignerEvent(event: SignerEvent, labels: { label: string; plugin: string }): void;
  /**
   * Name of the channel this server's worker threads post their counters on (AIA fetches). Put it in
   * the bundle context config (`BundleOperationOptions.metricsChannel`) so the workers report here.
   */
  readonly workerMetricsChannel: string;
  /** Stop receiving worker counters. The registry still renders. Idempotent. */
  close(): void;
}

/** Create the metrics of one server on a fresh registry. */
export function createServerMetrics(options: ServerMetricsOptions = {}): ServerMetrics {
  const registry: PromRegistry = new Registry();
  const defaultMetrics = options.defaultMetrics ?? true;
  let defaultsRegistered: Promise<void> | null = null;
  const registerDefaultMetrics = (): Promise<void> => {
    if (defaultMetrics === false) return Promise.resolve();
    defaultsRegistered ??= loadCollectDefaultMetrics().then((collectDefaultMetrics) => collectDefaultMetrics({ register: registry }));
    return defaultsRegistered;
  };
  if (defaultMetrics === true) registerDefaultMetrics().catch(() => undefined); // a failure shows in render()
  const registers = [registry];

  const buildInfo = new Gauge({
    name: 'certsmith_build_info',
    help: 'Always 1; the version label says which certsmith is running.',
    labelNames: ['version'] as const,
    // Merged over processes (serve --processes): one build, 1 — not one per process.
    aggregator: 'max',
    registers,
  });
  buildInfo.set({ version: options.version ?? 'unknown' }, 1);

  const requests = new Counter({
    name: 'certsmith_http_requests_total',
    help: 'HTTP requests answered, by endpoint (operation name, or unknown), method, status and CFSSL error code (empty on success).',
    labelNames: ['endpoint', 'method', 'status', 'code'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'certsmith_http_request_duration_seconds',
    help: 'Time from receiving a request to sending its response, by endpoint.',
    labelNames: ['endpoint'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });

  const tasks = new Counter({
    name: 'certsmith_worker_tasks_total',
    help: 'Worker tasks finished, by task and outcome (success, failure, rejected: queue full, timeout or shutting down).',
    labelNames: ['task', 'outcome'] as const,
    registers,
  });
  const taskDuration = new Histogram({
    name: 'certsmith_worker_task_duration_seconds',
    help: 'Time a worker task took, waiting in the queue included, by task.',
    labelNames: ['task'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });

  const signerCalls = new Counter({
    name: 'certsmith_signer_calls_total',
    help: 'Signer calls finished (sign: one signature by a local key or HSM; sign_request / info: a remote CA), by signer label, plugin and call.',
    labelNames: ['label', 'plugin', 'call'] as const,
    registers,
  });
  const signerFailures = new Counter({
    name: 'certsmith_signer_failures_total',
    help: 'Signer calls that failed, by signer label, plugin, call and CFSSL code (uncoded for errors without one).',
    labelNames: ['label', 'plugin', 'call', 'code'] as const,
    registers,
  });
  const signerDuration = new Histogram({
    name: 'certsmith_signer_call_duration_seconds',
    help: 'Duration of signer calls, by signer label, plugin and call.',
    labelNames: ['label', 'plugin', 'call'] as const,
    buckets: SIGNER_BUCKETS,
    registers,
  });
  const signerInFlight = new Gauge({
    name: 'certsmith_signer_calls_in_flight',
    help: 'Signer calls started and not finished (a call that outlives --signer-timeout stays here until it settles).',
    labelNames: ['label', 'plugin'] as const,
    registers,
  });

  const signerEvents = new Counter({
    name: 'certsmith_signer_events_total',
    help: 'Lifecycle events signers reported, by signer label, plugin and event (session_recovered: a lost HSM session was reopened without an outage; backend_down: the HSM token or remote CA became unusable; backend_recovered: it is usable again).',
    labelNames: ['label', 'plugin', 'event'] as const,
    registers,
  });

  // Counted in the workers, posted in batches on this server's own channel (@certsmith/bundler).
  const aiaFetches = new Counter({
    name: 'certsmith_aia_fetches_total',
    help: 'HTTP fetches of AIA CA Issuers URLs made by bundling, by outcome (success, failure) and failure reason (empty on success; invalid_url, blocked, timeout, too_large, too_many_redirects, http_status, parse, network).',
    labelNames: ['outcome', 'reason'] as const,
    registers,
  });
  const aiaCacheHits = new Counter({
    name: 'certsmith_aia_cache_hits_total',
    help: "AIA lookups answered without a new request: from a worker's cache of successful fetches, or by a fetch of the same URL already in flight.",
    registers,
  });
  const workerMetricsChannel = createAiaFetchMetricsChannelName();
  const workerMetrics = listenForAiaFetchMetrics(workerMetricsChannel, (batch) => {
    for (const { outcome, reason, count } of batch.aiaFetches) aiaFetches.inc({ outcome, reason }, count);
    if (batch.aiaCacheHits > 0) aiaCacheHits.inc(batch.aiaCacheHits);
  });

  let pool: WorkerPoolGaugeSource | null = null;
  // Merged over processes (serve --processes) as sums, the whole server's threads and tasks; the
  // utilization as the processes' average.
  const poolGauge = (name: string, help: string, read: (source: WorkerPoolGaugeSource) => number, aggregator: 'sum' | 'average' = 'sum'): void => {
    new Gauge({
      name,
      help,
      aggregator,
      registers,
      collect() {
        if (pool !== null) this.set(read(pool));
      },
    });
  };
  // Running = admitted less waiting: a worker runs a message's tasks together, and with --workers 0
  // (or the event-loop lane) tasks run on the event loop, so neither count is bounded by `size`.
  poolGauge('certsmith_worker_pool_threads', 'Worker threads in the pool (--workers; 0: every task on the event loop).', (p) => p.size);
  poolGauge('certsmith_worker_pool_max_queue', 'Tasks allowed to wait for a worker before requests get 503 (--max-queue).', (p) => p.maxQueue);
  poolGauge('certsmith_worker_pool_active_tasks', 'Tasks running now, on a worker thread or the event loop (waiting on I/O included).', (p) => p.pending - p.queued);
  poolGauge('certsmith_worker_pool_queue_depth', 'Tasks waiting for a thread to run them now.', (p) => p.queued);
  poolGauge(
    'certsmith_worker_pool_utilization',
    'Worker threads running a task / threads, 0 to 1, at scrape time (0 without worker threads).',
    (p) => (p.size > 0 ? Math.min(p.pending - p.queued, p.size) / p.size : 0),
    'average',
  );

  /** One finished signer call, made here or by a worker's copy of the signer: duration, count, failure. */
  const recordSignerCall = (callLabels: { label: string; plugin: string; call: string }, seconds: number, failureCode: string | null): void => {
    signerDuration.observe(callLabels, seconds);
    signerCalls.inc(callLabels);
    if (failureCode !== null) signerFailures.inc({ ...callLabels, code: failureCode });
  };

  const instrumentSigner = (signer: Signer, labels: { label: string; plugin: string }): Signer => {
    const cache = new Map<PropertyKey, { source: unknown; wrapped: unknown }>();
    const timed = (call: string, method: (...args: unknown[]) => unknown) => {
      const callLabels = { label: labels.label, plugin: labels.plugin, call };
      return async (...args: unknown[]): Promise<unknown> => {
        signerInFlight.inc(labels);
        const started = performance.now();
        let failureCode: string | null = null;
        try {
          return await method(...args);
        } catch (error) {
          failureCode = isCodedError(error) ? String(error.code) : 'uncoded';
          throw error;
        } finally {
          recordSignerCall(callLabels, (performance.now() - started) / 1000, failureCode);
          signerInFlight.dec(labels);
        }
      };
    };
    // A proxy keeps every other property (algorithms, forwardsLabels, plugin extras) and `typeof
    // signer.sign` exactly as the plugin made them; methods run bound to the real signer.
    return new Proxy(signer, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        const cached = cache.get(property);
        if (cached !== undefined && cached.source === value) return cached.wrapped;
        const bound = (value as (...args: unknown[]) => unknown).bind(target);
        const call = typeof property === 'string' ? SIGNER_CALLS[property] : undefined;
        const wrapped = call === undefined ? bound : timed(call, bound);
        cache.set(property, { source: value, wrapped });
        return wrapped;
      },
    });
  };

  return {
    registry,
    contentType: registry.contentType,
    async render() {
      await registerDefaultMetrics();
      return await registry.metrics();
    },
    async snapshot() {
      await registerDefaultMetrics();
      return await registry.getMetricsAsJSON();
    },
    registerDefaultMetrics,
    observeRequest(observation: RequestObservation) {
      const method = KNOWN_METHODS.has(observation.method) ? observation.method : 'OTHER';
      const code = observation.status >= 400 && observation.code !== undefined ? String(observation.code) : '';
      requests.inc({ endpoint: observation.endpoint, method, status: String(observation.status), code });
      latency.observe({ endpoint: observation.endpoint }, observation.durationSeconds);
    },
    watchWorkerPool(source) {
      pool = source;
    },
    instrumentTaskRunner(runner) {
      return {
        async run(task, input, runOptions) {
          // Not `startTimer`: its closures, `hrtime` pairs and label copies are paid with every request.
          const started = performance.now();
          try {
            const result = await runner.run(task, input, runOptions);
            tasks.inc({ task: task.name, outcome: 'success' });
            return result;
          } catch (error) {
            tasks.inc({ task: task.name, outcome: error instanceof ServiceUnavailableError ? 'rejected' : 'failure' });
            throw error;
          } finally {
            taskDuration.observe({ task: task.name }, (performance.now() - started) / 1000);
          }
        },
        close: () => runner.close(),
      };
    },
    instrumentSigner,
    instrumentSignerDirectory(directory) {
      return createSignerDirectory(
        directory.entries.map((entry) => ({
          ...entry,
          signer: instrumentSigner(entry.signer, { label: entry.label, plugin: entry.pluginName ?? 'unknown' }),
          // Signatures made by the entry's worker copy (newcert issued in a worker).
          observeWorkerSign: (seconds: number, ok: boolean) =>
            recordSignerCall({ label: entry.label, plugin: entry.pluginName ?? 'unknown', call: 'sign' }, seconds, ok ? null : String(ErrorCode.PrivateKeyUnavailable)),
        })),
      );
    },
    observeSignerEvent(event, labels) {
      signerEvents.inc({ label: labels.label, plugin: labels.plugin, event });
    },
    workerMetricsChannel,
    close() {
      workerMetrics.close();
    },
  };
}

/** The `GET /metrics` route for the API app (when metrics are served on the API port). */
export function createMetricsRoute(metrics: Pick<ServerMetrics, 'contentType' | 'render'>): RawRoute {
  return {
    name: 'metrics',
    path: METRICS_PATH,
    method: 'GET',
    summary: 'Prometheus metrics (text exposition format)',
    contentType: metrics.contentType,
    handle: () => metrics.render(),
  };
}

/**
 * A plain HTTP server that only answers `GET /metrics` (for `--metrics-address`): 404 for other
 * paths, 405 for other methods, both in the JSON envelope like the API. Not yet listening.
 */
export function createMetricsServer(metrics: Pick<ServerMetrics, 'contentType' | 'render'>, options: { onError?: (error: unknown) => void } = {}): Server {
  return createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const fail = (status: number, message: string): void => {
      const body = serializeEnvelope(errorEnvelope(status, message));
      response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...(status === 405 ? { Allow: 'GET' } : {}) });
      response.end(body);
    };
    if (path !== METRICS_PATH) return fail(404, '404 page not found');
    if (request.method !== 'GET') return fail(405, `Method is not allowed:${JSON.stringify(request.method)}`);
    metrics.render().then(
      (text) => {
        response.writeHead(200, { 'Content-Type': metrics.contentType, 'Content-Length': Buffer.byteLength(text) });
        response.end(text);
      },
      (error: unknown) => {
        options.onError?.(error);
        fail(500, 'internal server error');
      },
    );
  });
}
