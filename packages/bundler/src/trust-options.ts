/**
 * From a server's or command's trust options (CFSSL's `-ca-bundle`, `-int-bundle`, `-metadata`,
 * plus certsmith's AIA and network settings) to the plain-data {@link BundleContextConfig} every
 * worker loads. The one place that decides the embedded default, so the bundle endpoint, newcert's
 * `"bundle": true`, the warm-up and `certsmith bundle` all load the same state from the same flags.
 */
import type { BundleContextConfig } from './bundle-context.js';

/** Trust data and fetch settings of bundling: the server's `--ca-bundle`, `--int-bundle`, `--metadata`, … */
export interface BundleTrustOptions {
  /** Trusted roots (`--ca-bundle`); absent = Node's root store. */
  caBundleFile?: string | undefined;
  /** Known intermediates (`--int-bundle`); absent = none (AIA finds them). */
  intBundleFile?: string | undefined;
  /** Platform metadata (`--metadata`); absent = see {@link bundleContextConfig}. */
  metadataFile?: string | undefined;
  /** AIA fetching bounds, or `false` to never fetch. Default: chain-builder's (5 s, 1 MiB, 3 redirects). */
  aia?: BundleContextConfig['aia'];
  /** Let AIA and `domain` fetches reach private, loopback and link-local addresses (`--allow-private-networks`). */
  allowPrivateNetworks?: boolean | undefined;
  /** Non-public ranges those fetches may reach anyway (config `allowCidrs`). */
  allowCidrs?: readonly string[] | undefined;
  /** Where workers post AIA fetch counts: the server's `ServerMetrics.workerMetricsChannel`. Absent = not counted. */
  metricsChannel?: string | undefined;
}

/**
 * The plain-data context config for `options`, as the worker loads it. The embedded default is
 * used when neither roots nor metadata are configured: Node's root store as the root pool and ONE
 * platform (`System`: Node's roots plus the OS store) for ubiquity. With `--ca-bundle` but no
 * `--metadata` there are no platforms, as in `cfssl serve` (status: "Unable to measure bundle
 * ubiquity: No platform metadata present."). Unrelated keys of `options` are ignored, so a server
 * can pass its whole options object.
 */
export function bundleContextConfig(options: BundleTrustOptions): BundleContextConfig {
  const config: BundleContextConfig = {};
  if (options.caBundleFile !== undefined) config.caBundleFile = options.caBundleFile;
  if (options.intBundleFile !== undefined) config.intBundleFile = options.intBundleFile;
  if (options.metadataFile !== undefined) config.metadataFile = options.metadataFile;
  else if (options.caBundleFile === undefined) config.embeddedPlatforms = true;
  if (options.aia !== undefined) config.aia = options.aia;
  if (options.allowPrivateNetworks || (options.allowCidrs?.length ?? 0) > 0) {
    config.network = { allowPrivateNetworks: options.allowPrivateNetworks === true, allowCidrs: [...(options.allowCidrs ?? [])] };
  }
  if (options.metricsChannel !== undefined) config.metricsChannel = options.metricsChannel;
  return config;
}
