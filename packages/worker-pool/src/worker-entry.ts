/**
 * Entry point of every worker thread of the pool (unless the pool is given a bundle's entry:
 * `WorkerPoolOptions.workerEntry`): runs the thread (`worker-thread.ts`).
 *
 * This file must be the built `dist/worker-entry.js`: worker threads run plain JavaScript (Node 20
 * cannot load TypeScript), so the pool always points here even when tests run from sources.
 */
import { runWorkerThread } from './worker-thread.js';

await runWorkerThread();
