/**
 * The entry of a worker process of `certsmith serve --processes N` (node:cluster runs this file,
 * `serve-primary.ts`). It loads the server as the executable does — the bundle built by `npm run
 * build` when it is there, else the compiled modules — and runs `runServeWorker`.
 */
import { existsSync } from 'node:fs';
import { holdBackOptimisation } from '../start-up-tiering.js';

// The primary's: a terminal's Ctrl-C reaches the whole process group, and the primary stops the
// workers in order (serve-primary.ts). Set before anything loads.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
// Before the server's code loads, as the executable does for one process (start-up-tiering.ts).
const restoreOptimisation = holdBackOptimisation();

const bundled = new URL('../cli-runtime.bundle.js', import.meta.url);
const { runServeWorker } = (await (existsSync(bundled) ? import(bundled.href) : import('../cli-runtime.js'))) as typeof import('../cli-runtime.js');
await runServeWorker(restoreOptimisation);
