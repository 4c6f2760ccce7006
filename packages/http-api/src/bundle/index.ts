/** The bundle use case (`POST /api/v1/cfssl/bundle` is wired by the HTTP layer). */
export { bundleCertificate, SelfSignedCertificateError } from './bundle-certificate.js';
export type {
  BundleCertificateInput,
  BundleDependencies,
  BundleResult,
  BundleStatus,
  RemoteBundleOptions,
} from './bundle-certificate.js';
export { loadBundleContext } from './bundle-context.js';
export type { BundleContext, BundleContextConfig } from './bundle-context.js';
export { bundleTask } from './bundle-task.js';
export type { BundleTaskInput } from './bundle-task.js';
export {
  createBundleOperation,
  bundleRequestSchema,
  bundleContextConfig,
  toBundleInput,
} from './bundle-operation.js';
export type { BundleOperationOptions, BundleRequest } from './bundle-operation.js';
