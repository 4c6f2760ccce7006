/**
 * A worker task for the key pool tests. Plain JavaScript on purpose: worker threads import task
 * modules with Node itself (no TypeScript), just as they import the built `dist/` of real tasks.
 */
// The built package by path, as the pool's threads import the issuer's tasks and init hooks
// (`resolveBuiltModule`): under vitest the package name would resolve to the TypeScript sources, a
// second copy of the module with a pool of its own, when the task runs on the test's own thread.
import { workerKeyPool } from '../dist/index.js';
import { defineTask } from '@certsmith/worker-pool';

/** This worker's key pool counters (`--key-pool`), or null without a pool. */
export const keyPoolStatsTask = defineTask({
  name: 'test.key-pool-stats',
  module: import.meta.url,
  run: () => workerKeyPool()?.stats() ?? null,
});
