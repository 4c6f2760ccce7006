/** The bundle use case (`POST /api/v1/cfssl/bundle` is wired by the HTTP layer). */
export { bundleCertificate, SelfSignedCertificateError } from './bundle-certificate.js';
export type {
  BundleCertificateInput,
  BundleDependencies,
  BundleResult,
  BundleStatus,
  RemoteBundleOptions,
} from './bundle-certificate.js';
export { bundleContextFailedFile, loadBundleContext } from './bundle-context.js';
export type { BundleContext, BundleContextConfig, BundleContextFile } from './bundle-context.js';
export { bundleWarmUpTask, warmUpBundleWorkers } from './warm-up-task.js';
export type { BundleWarmUpOutcome } from './warm-up-task.js';
export { bundleJsonTask, bundleTask } from './bundle-task.js';
export type { BundleTaskInput } from './bundle-task.js';
export {
  createBundleOperation,
  bundleRequestSchema,
  bundleContextConfig,
  toBundleInput,
} from './bundle-operation.js';
export type { BundleOperationOptions, BundleRequest } from './bundle-operation.js';
