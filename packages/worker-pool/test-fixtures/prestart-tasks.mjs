/**
 * A module a prestarted worker preloads (it marks the thread) and a task that tells whether its
 * thread was marked, for `prestarted-workers.test.ts`. Plain JavaScript: workers import task modules
 * with Node itself.
 */
import { defineTask } from '@certsmith/worker-pool';

/** Whether `prestart-preload.mjs` ran in this thread. */
export const preloadedTask = defineTask({
  name: 'test.preloaded',
  module: import.meta.url,
  run: () => globalThis.__prestartPreloaded === true,
});
