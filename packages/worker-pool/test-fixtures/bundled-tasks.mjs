/**
 * A "bundled" task module and init hook for `bundled-entry.test.ts`: `bundled-worker-entry.mjs`
 * registers this module under {@link BUNDLED_MODULE}, a specifier Node cannot import, so a task
 * runs only when the worker takes it from the registry. Plain JavaScript: workers run it with Node.
 */
import { defineTask } from '@certsmith/worker-pool';

/** The identity the task and the init hook are known by (not importable: `import()` rejects it). */
export const BUNDLED_MODULE = 'certsmith-test:bundled-tasks';

let initData;

/** The init hook: keeps its data for the task (same module instance, or the task sees nothing). */
export function initWorker(data) {
  initData = data;
}

/** Answers with what the init hook of this module instance was given. */
export const bundledTask = defineTask({
  name: 'test.bundled',
  module: BUNDLED_MODULE,
  run: (input) => ({ input, initData, entry: globalThis.__bundledWorkerEntry === true }),
});
