/**
 * A worker task for the key pool tests. Plain JavaScript on purpose: worker threads import task
 * modules with Node itself (no TypeScript), just as they import the built `dist/` of real tasks.
 */
import { workerKeyPool } from '@certsmith/issuer';
import { defineTask } from '@certsmith/worker-pool';

/** This worker's key pool counters (`--key-pool`), or null without a pool. */
export const keyPoolStatsTask = defineTask({
  name: 'test.key-pool-stats',
  module: import.meta.url,
  run: () => workerKeyPool()?.stats() ?? null,
});
