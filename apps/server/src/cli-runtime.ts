/**
 * What the `certsmith` executable (`cli.ts`) needs once its workers are started: the program and
 * the server; and what a worker process of `serve --processes` runs (`cluster/serve-worker-process.ts`). `npm run build` also bundles this module and everything it imports into one file,
 * `dist/cli-runtime.bundle.js` (`scripts/bundle-cli.mjs`), which the executable loads instead when it
 * is there: one file instead of ≈400 modules (docs/performance.md, start-up).
 */
export { isCodedError } from '@certsmith/x509-core';
export { createProgram } from './cli-program.js';
export { startupExitCode } from './errors.js';
export { startServer } from './start-server.js';
export { WORKER_PROCESS_THREADS, runServeWorker } from './cluster/serve-worker.js';
export { createServeLeader } from './cluster/serve-leader.js';
