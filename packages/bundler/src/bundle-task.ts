/**
 * The `bundle` worker task: CFSSL's bundle request (certificate or remote mode) run by the bundle use
 * case against the server's trust data. Parsing, chain building, AIA chasing and the remote TLS fetch
 * all happen on the worker, so the main thread only reads requests and writes responses.
 */
import { defineTask } from '@certsmith/worker-pool';
import { bundleCertificate } from './bundle-certificate.js';
import type { BundleCertificateInput, BundleResult } from './bundle-certificate.js';
import { aiaFetchMetricsReporter } from './aia-fetch-metrics.js';
import { loadBundleContext } from './bundle-context.js';
import { bundleResultJson } from './bundle-result-json.js';
import type { BundleContextConfig } from './bundle-context.js';

/** Input of {@link bundleTask}: plain data, cloned to the worker. */
export interface BundleTaskInput {
  /** Trust files and AIA bounds; the worker loads them once per distinct config and keeps them. */
  context: BundleContextConfig;
  /** `bundleContextKey(context)`, computed once by a caller that sends the same context every time. */
  contextKey?: string;
  /** The request fields, already type-checked. */
  request: BundleCertificateInput;
}

/**
 * Bundle one request. The context (pools, platforms, AIA fetcher) is loaded on the worker's first
 * request and shared by later ones (`loadBundleContext` memoises by config), so intermediates learned
 * from AIA or from submitted bundles stay known to that worker, as in CFSSL's process-wide bundler.
 *
 * @throws the use case's coded errors (1002/1003, 1100, 12xx, 2xxx, 6000) and the context's load
 * errors (4001/4003 roots, 3001/3003 intermediates, platform metadata); they reach the client as 400.
 */
export const bundleTask = defineTask({
  name: 'bundle',
  module: import.meta.url,
  run: bundleWithContext,
  // Strings and the context config, only read (the context is memoised by key, not by object).
  readsInputOnly: true,
});

/**
 * {@link bundleTask} answering with the result as JSON text (what the `bundle` endpoint uses): the
 * worker serialises the result, so the event loop gets one string to splice into the envelope
 * ({@link JsonText}) instead of cloning an object graph of PEM strings and serialising it again.
 */
export const bundleJsonTask = defineTask({
  name: 'bundle.json',
  module: import.meta.url,
  async run(input: BundleTaskInput): Promise<string> {
    return bundleResultJson(await bundleWithContext(input));
  },
  readsInputOnly: true,
});

async function bundleWithContext(input: BundleTaskInput): Promise<BundleResult> {
  const context = await loadBundleContext(input.context, undefined, input.contextKey);
  try {
    return await bundleCertificate(input.request, context);
  } finally {
    // Post this task's AIA counts now: an idle pool worker runs no timers (aia-fetch-metrics.ts).
    if (input.context.metricsChannel !== undefined) aiaFetchMetricsReporter(input.context.metricsChannel).flush();
  }
}
