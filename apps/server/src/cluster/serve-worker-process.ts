/**
 * The entry of a worker process of `certsmith serve --processes N` (node:cluster runs this file,
 * `serve-primary.ts`). It loads the server as the executable does — the bundle built by `npm run
 * build` when it is there, with the code cache made for these processes' V8 flags
 * (bundle-loader.ts), else the compiled modules — and runs `runServeWorker`.
 */
import { existsSync } from 'node:fs';
import { CODE_CACHE_FILES, loadBundle } from '../bundle-loader.js';
import { holdBackOptimisation } from '../start-up-tiering.js';

// The primary's: a terminal's Ctrl-C reaches the whole process group, and the primary stops the
// workers in order (serve-primary.ts). Set before anything loads.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
// Before the server's code loads, as the executable does for one process (start-up-tiering.ts).
const restoreOptimisation = holdBackOptimisation();

const bundled = new URL('../cli-runtime.bundle.cjs', import.meta.url);
const { runServeWorker } = (existsSync(bundled) ? loadBundle(bundled, CODE_CACHE_FILES.process).exports : await import('../cli-runtime.js')) as typeof import('../cli-runtime.js');
await runServeWorker(restoreOptimisation);
