/**
 * `@certsmith/bundler`: CFSSL's bundle and certinfo use cases, outside any HTTP layer. Stands on
 * chain-builder (pools, path building, AIA, the TLS fetch), ubiquity-rules (ranking, status) and
 * x509-core (parsing, the JSON facts); the worker tasks run them on the worker-thread pool.
 */
export { bundleCertificate } from './bundle-certificate.js';
export type {
  BundleCertificateInput,
  BundleDependencies,
  BundleResult,
  BundleStatus,
  RemoteBundleOptions,
} from './bundle-certificate.js';
export { SelfSignedCertificateError } from './errors.js';
export { bundleContextFailedFile, bundleContextKey, loadBundleContext } from './bundle-context.js';
export type { BundleContext, BundleContextConfig, BundleContextFile } from './bundle-context.js';
export { bundleContextConfig } from './trust-options.js';
export type { BundleTrustOptions } from './trust-options.js';
export { bundleJsonTask, bundleTask } from './bundle-task.js';
export type { BundleTaskInput } from './bundle-task.js';
export { bundlePrepareTask, bundleWarmUpTask, prepareBundleWorkers, warmUpBundleWorkers } from './warm-up-task.js';
export type { BundleWarmUpInput, BundleWarmUpOutcome } from './warm-up-task.js';
export { checkTrustSnapshot, readTrustSnapshot } from './trust-snapshot.js';
export { readTrustTask } from './read-trust-task.js';
export type { CheckTrustSnapshotOptions, TrustSnapshot, TrustSnapshotProblem } from './trust-snapshot.js';
export {
  CERTINFO_DIAL_TIMEOUT_MS,
  describeCertificateBytes,
  describeCertificatePem,
  describeServerCertificate,
} from './certinfo.js';
export type { DescribeServerCertificateOptions } from './certinfo.js';
export { certinfoTask } from './certinfo-task.js';
export type { CertinfoTaskInput } from './certinfo-task.js';
export {
  AIA_FAILURE_REASONS,
  AIA_FETCH_METRICS_FLUSH_MS,
  aiaFetchMetricsReporter,
  createAiaFetchMetricsChannelName,
  listenForAiaFetchMetrics,
} from './aia-fetch-metrics.js';
export type {
  AiaFetchCount,
  AiaFetchMetricsBatch,
  AiaFetchMetricsListener,
  AiaFetchMetricsReporter,
} from './aia-fetch-metrics.js';
