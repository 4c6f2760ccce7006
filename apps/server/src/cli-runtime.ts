/**
 * What the `certsmith` executable (`cli.ts`) needs once its workers are started: the program and
 * the server; and what a worker process of `serve --processes` runs (`cluster/serve-worker-process.ts`).
 * `npm run build` also bundles this module and everything it imports, but the packages shared with
 * other threads and plugins, into one CommonJS file, `dist/cli-runtime.bundle.cjs`
 * (`scripts/bundle-cli.mjs`), which the executable runs instead when it is there, with a V8 code
 * cache made at build time (`bundle-loader.ts`, `scripts/code-cache.mjs`; docs/performance.md,
 * start-up passes 4 and 6a).
 */
export { isCodedError } from '@certsmith/x509-core';
export { createProgram } from './cli-program.js';
export { startupExitCode } from './errors.js';
export { startServer } from './start-server.js';
export { WORKER_PROCESS_THREADS, runServeWorker } from './cluster/serve-worker.js';
export { createServeLeader } from './cluster/serve-leader.js';
