/**
 * What the entry of a worker bundle needs, and nothing else (`@certsmith/worker-pool/worker-thread`):
 * register the bundled modules, then run the thread. See `WorkerPoolOptions.workerEntry`.
 */
export { registerBundledModules } from './bundled-modules.js';
export type { BundledModuleLoader } from './bundled-modules.js';
export { runWorkerThread } from './worker-thread.js';
