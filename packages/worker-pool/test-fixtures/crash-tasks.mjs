/**
 * Worker tasks that break their worker thread, for the pool's fault tests (`worker-pool-faults.test.ts`,
 * `test/hardening-faults.test.ts`). Plain JavaScript: workers import task modules with Node itself.
 */
import { threadId } from 'node:worker_threads';
import { defineTask } from '@certsmith/worker-pool';

/** Ends its worker thread in the middle of the task (`process.exit` in a worker stops only that thread). */
export const exitTask = defineTask({
  name: 'test.exit',
  module: import.meta.url,
  run: ({ code }) => {
    process.exit(code ?? 3);
  },
});

/** Throws outside the task's promise chain: an uncaught exception that kills the worker thread. */
export const uncaughtTask = defineTask({
  name: 'test.uncaught',
  module: import.meta.url,
  run: () =>
    new Promise(() => {
      setImmediate(() => {
        throw new Error('uncaught in worker: secret-detail-42');
      });
    }),
});

/** Answers with the thread it ran on. */
export const whoTask = defineTask({
  name: 'test.who',
  module: import.meta.url,
  run: () => ({ threadId }),
});

/** Ends its worker thread `ms` after it starts, while waiting on a timer (after its message was answered). */
export const delayedExitTask = defineTask({
  name: 'test.delayed-exit',
  module: import.meta.url,
  run: ({ ms }) => new Promise(() => setTimeout(() => process.exit(4), ms)),
});

/**
 * Blocks its worker's event loop for `blockMs` (a stand-in for a thread stuck in native code) on its
 * first run, or on every run with `always`; `counter` (a SharedArrayBuffer) numbers the attempts.
 */
export const stuckTask = defineTask({
  name: 'test.stuck',
  module: import.meta.url,
  run: ({ counter, blockMs, always }) => {
    const cells = new Int32Array(counter);
    const attempt = Atomics.add(cells, 0, 1);
    if (attempt === 0 || always) Atomics.wait(cells, 1, 0, blockMs);
    return { attempt, threadId };
  },
});
