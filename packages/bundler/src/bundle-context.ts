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
  type AiaFetcher,
  type TrustPools,
} from '@certsmith/chain-builder';
import type { RemoteBundleOptions } from './bundle-certificate.js';
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

/** Which configured file a load error came from (same thread only; see {@link bundleContextFailedFile}). */
const failedFiles = new WeakMap<object, BundleContextFile>();

/** The files of a {@link BundleContextConfig}, by config key. */
export type BundleContextFile = 'caBundleFile' | 'intBundleFile' | 'metadataFile';

function tagged<T>(file: BundleContextFile, pending: Promise<T>): Promise<T> {
  return pending.catch((error: unknown) => {
    if (typeof error === 'object' && error !== null) failedFiles.set(error, file);
    throw error;
  });
}

/**
 * The file whose loading raised `error` (an error thrown by {@link loadBundleContext} on this
 * thread), or `null` when it did not come from a configured file.
 */
export function bundleContextFailedFile(error: unknown): BundleContextFile | null {
  return typeof error === 'object' && error !== null ? (failedFiles.get(error) ?? null) : null;
}

async function load(config: BundleContextConfig): Promise<BundleContext> {
  const [roots, intermediates, platforms] = await Promise.all([
    config.caBundleFile
      ? tagged('caBundleFile', loadCertificatePool(config.caBundleFile, 'roots'))
      : Promise.resolve(new CertificatePool(parseBundlePem(rootCertificates.join('\n'), 'roots'))),
    config.intBundleFile ? tagged('intBundleFile', loadCertificatePool(config.intBundleFile, 'intermediates')) : Promise.resolve(new CertificatePool()),
    config.metadataFile ? tagged('metadataFile', loadPlatforms(config.metadataFile)) : config.embeddedPlatforms ? defaultPlatforms() : Promise.resolve([]),
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
 * The context for `config`, loaded on first use and shared afterwards within this thread. A failed
 * load is not cached, so a corrected file can be retried.
 * @throws the coded load errors: 4001/4003 roots, 3001/3003 intermediates, platform metadata errors
 */
export function loadBundleContext(config: BundleContextConfig): Promise<BundleContext> {
  const key = JSON.stringify(config);
  let pending = loaded.get(key);
  if (!pending) {
    pending = load(config);
    loaded.set(key, pending);
    pending.catch(() => loaded.delete(key));
  }
  return pending;
}
