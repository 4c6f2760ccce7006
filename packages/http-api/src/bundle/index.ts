/** The HTTP side of bundling: `POST /api/v1/cfssl/bundle` (the use case is `@certsmith/bundler`). */
export { createBundleOperation, bundleRequestSchema, toBundleInput } from './bundle-operation.js';
export type { BundleOperationOptions, BundleRequest } from './bundle-operation.js';
export { bundleResultSchema, bundleStatusSchema } from './bundle-result-schema.js';
