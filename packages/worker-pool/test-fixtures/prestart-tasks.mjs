/**
 * Tasks for `prestarted-workers.test.ts`: one that tells whether its thread ran the preload module
 * (`prestart-preload.mjs` marks the thread), and two a prestarted thread runs before a pool takes
 * it. Plain JavaScript: workers import task modules with Node itself.
 */
import { defineTask } from '@certsmith/worker-pool';

/** Whether `prestart-preload.mjs` ran in this thread. */
export const preloadedTask = defineTask({
  name: 'test.preloaded',
  module: import.meta.url,
  run: () => globalThis.__prestartPreloaded === true,
});

/** Doubles its input and says whether its thread had run the preload module (it runs before it). */
export const doubleTask = defineTask({
  name: 'test.double',
  module: import.meta.url,
  run: (input) => ({ doubled: input * 2, preloaded: globalThis.__prestartPreloaded === true }),
});

/** Fails with a coded error. */
export const failingTask = defineTask({
  name: 'test.prestart-failure',
  module: import.meta.url,
  run: () => {
    throw Object.assign(new Error('no trust here'), { code: 4001 });
  },
});
