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
