/**
 * A task for `worker-bundle.test.ts`: the modules the thread's entry registered as bundled
 * (`registerBundledModules`). Plain JavaScript: workers import task modules with Node itself.
 */
import { defineTask } from '@certsmith/worker-pool';

export const bundledModulesProbeTask = defineTask({
  name: 'test.bundled-modules',
  module: import.meta.url,
  run: () => [...(globalThis[Symbol.for('certsmith.worker-pool.bundled-modules')]?.keys() ?? [])],
});
