/**
 * Loading the bundle use case's state — root and intermediate pools, platform metadata, AIA
 * fetcher — once per worker thread. The configuration is plain data so the main thread can pass it
 * to every worker; the loaded state never crosses threads.
 */
import { rootCertificates } from 'node:tls';
import {
  CertificatePool,
  createAiaFetcher,
  createNetworkGuard,
  fetchPeerCertificates,
  loadCertificatePool,
  parseBundlePem,
  poolFromSnapshot,
  type AiaFetcher,
  type TrustPools,
} from '@certsmith/chain-builder';
import type { RemoteBundleOptions } from './bundle-certificate.js';
import { taggedWithFile, trustFileOf, type BundleContextFile } from './trust-files.js';
import type { TrustSnapshot } from './trust-snapshot.js';
import { defaultPlatforms, loadPlatforms, type Platform } from '@certsmith/ubiquity-rules';
import { aiaFetchMetricsReporter } from './aia-fetch-metrics.js';

/** Where the state comes from (CFSSL's `-ca-bundle`, `-int-bundle`, `-metadata`). */
export interface BundleContextConfig {
  /** Root bundle; absent = Node's bundled roots (CFSSL uses the system roots). */
  caBundleFile?: string;
  /** Intermediate bundle; absent = empty pool. */
  intBundleFile?: string;
  /** Platform metadata; absent = no platforms, unless `embeddedPlatforms`. */
  metadataFile?: string;
  /** Without `metadataFile`, use the embedded single "System" platform instead of none. */
  embeddedPlatforms?: boolean;
  /** AIA fetching: `false` disables it; an object tunes the bounds. */
  aia?: false | { timeoutMs?: number; maxResponseBytes?: number; maxRedirects?: number };
  /**
   * Which addresses request-driven fetches (AIA URLs inside submitted certificates, `domain`
   * bundling) may reach. Default: public addresses only — loopback, private and link-local targets
   * are refused after DNS resolution and on every redirect (SSRF guard; CFSSL has none).
   */
  network?: { allowPrivateNetworks?: boolean; allowCidrs?: string[] };
  /**
   * Channel the AIA fetcher's counts are posted on (a server's `ServerMetrics.workerMetricsChannel`);
   * absent = not counted (the CLI). Part of the memo key like the rest, so two servers sharing a
   * thread (inline runner) never count into each other's registry.
   */
  metricsChannel?: string;
}

/** The loaded state. */
export interface BundleContext {
  pools: TrustPools;
  platforms: Platform[];
  aia: AiaFetcher | null;
  /** Remote-mode TLS fetch, guarded like the AIA fetcher. */
  remote: RemoteBundleOptions;
}

const loaded = new Map<string, Promise<BundleContext>>();

export type { BundleContextFile };

/**
 * The file whose loading raised `error` (an error thrown by {@link loadBundleContext} or
 * `readTrustSnapshot` on this thread), or `null` when it did not come from a configured file.
 */
export function bundleContextFailedFile(error: unknown): BundleContextFile | null {
  return trustFileOf(error);
}

async function load(config: BundleContextConfig, snapshot: TrustSnapshot | undefined): Promise<BundleContext> {
  // From the snapshot when one was read for this config (no file, no parse); else from the files.
  const [roots, intermediates, platforms] = await Promise.all([
    snapshot?.roots
      ? poolFromSnapshot(snapshot.roots)
      : config.caBundleFile
        ? taggedWithFile('caBundleFile', loadCertificatePool(config.caBundleFile, 'roots'))
        : new CertificatePool(parseBundlePem(rootCertificates.join('\n'), 'roots')),
    snapshot?.intermediates
      ? poolFromSnapshot(snapshot.intermediates)
      : config.intBundleFile
        ? taggedWithFile('intBundleFile', loadCertificatePool(config.intBundleFile, 'intermediates'))
        : new CertificatePool(),
    snapshot?.platforms
      ? [...snapshot.platforms]
      : config.metadataFile
        ? taggedWithFile('metadataFile', loadPlatforms(config.metadataFile))
        : config.embeddedPlatforms
          ? defaultPlatforms()
          : [],
  ]);
  // One guard for both kinds of request-driven fetch, so `domain` bundling cannot reach what AIA
  // chasing may not.
  const guard = createNetworkGuard(config.network ?? {});
  const observer = config.metricsChannel === undefined ? undefined : aiaFetchMetricsReporter(config.metricsChannel).observeAiaFetch;
  const aia = config.aia === false ? null : createAiaFetcher({ ...(config.aia ?? {}), fetchGuard: guard, ...(observer ? { observer } : {}) });
  const remote: RemoteBundleOptions = { fetchPeer: (options) => fetchPeerCertificates({ ...options, guard }) };
  return { pools: { roots, intermediates }, platforms, aia, remote };
}

/**
 * The key {@link loadBundleContext} keeps a config's context under. A caller that sends the same
 * config with every task computes it once and passes it along, so a worker does not serialise the
 * config per request (docs/performance.md#bundle-cpu-per-request).
 */
export function bundleContextKey(config: BundleContextConfig): string {
  return JSON.stringify(config);
}

/**
 * The context for `config`, loaded on first use and shared afterwards within this thread. A failed
 * load is not cached, so a corrected file can be retried. With `snapshot` (the same config's files,
 * read by `readTrustSnapshot`, usually on another thread), the pools and platforms are built from it
 * instead of the files; it is used only when this thread has not loaded `config` yet.
 * @param key `bundleContextKey(config)`, when the caller has it already
 * @throws the coded load errors: 4001/4003 roots, 3001/3003 intermediates, platform metadata
 * errors, tagged with their file ({@link bundleContextFailedFile})
 */
export function loadBundleContext(
  config: BundleContextConfig,
  snapshot?: TrustSnapshot,
  key: string = bundleContextKey(config),
): Promise<BundleContext> {
  let pending = loaded.get(key);
  if (!pending) {
    pending = load(config, snapshot);
    loaded.set(key, pending);
    pending.catch(() => loaded.delete(key));
  }
  return pending;
}
