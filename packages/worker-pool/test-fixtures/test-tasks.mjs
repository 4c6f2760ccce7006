/**
 * Worker tasks used only by the pool's tests. Plain JavaScript on purpose: worker threads import
 * task modules with Node itself (no TypeScript), just as they import the built `dist/` of real tasks.
 */
import { threadId } from 'node:worker_threads';
import { CertificateDecodeError } from '@certsmith/x509-core';
import { defineTask, tasksRunningInThisThread } from '@certsmith/worker-pool';

/** Returns its input and the thread it ran on. */
export const echoTask = defineTask({
  name: 'test.echo',
  module: import.meta.url,
  run: (input) => ({ input, threadId }),
});

/**
 * Declared {@link defineTask}'s `readsInputOnly`; returns its input's `inherited` property, which
 * only the caller's own object has (a structured clone drops the prototype), and the thread it ran on.
 */
export const readingTask = defineTask({
  name: 'test.reading',
  module: import.meta.url,
  run: (input) => ({ inherited: input.inherited ?? null, threadId }),
  readsInputOnly: true,
});

/** {@link readingTask} without the declaration. */
export const copiedReadingTask = defineTask({
  name: 'test.copied-reading',
  module: import.meta.url,
  run: (input) => ({ inherited: input.inherited ?? null, threadId }),
});

/** Throws a coded error (1002), which must reach the client with its code. */
export const codedFailureTask = defineTask({
  name: 'test.coded-failure',
  module: import.meta.url,
  run: () => {
    throw new CertificateDecodeError();
  },
});

/** Throws an uncoded error whose text must stay out of responses. */
export const plainFailureTask = defineTask({
  name: 'test.plain-failure',
  module: import.meta.url,
  run: () => {
    throw new Error('database password is hunter2');
  },
});

/**
 * Blocks its worker until the main thread opens the gate: `Int32Array(gate)[0]` set to 1 and notified.
 * Bounded by `timeoutMs` so a broken test cannot hang a worker forever.
 */
export const gateTask = defineTask({
  name: 'test.gate',
  module: import.meta.url,
  run: ({ gate, timeoutMs }) => {
    Atomics.wait(new Int32Array(gate), 0, 0, timeoutMs);
    return { opened: Atomics.load(new Int32Array(gate), 0) === 1 };
  },
});

/**
 * Waits until `expected` rendezvous tasks are running in this thread at once (or `timeoutMs` has
 * passed) and reports how many it met: tasks that travel in one message meet, tasks sent one at a
 * time do not.
 */
const present = new Set();
const arrivals = [];
export const rendezvousTask = defineTask({
  name: 'test.rendezvous',
  module: import.meta.url,
  run: async ({ expected, timeoutMs }) => {
    const me = Symbol('rendezvous');
    present.add(me);
    try {
      const met = present.size;
      for (const wake of arrivals.splice(0)) wake();
      if (met < expected) {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          const check = () => {
            if (present.size >= expected) {
              clearTimeout(timer);
              resolve();
            } else arrivals.push(check);
          };
          arrivals.push(check);
        });
      }
      return { met: present.size };
    } finally {
      // Leave only after everyone had a chance to count this task.
      await new Promise((resolve) => setImmediate(resolve));
      present.delete(me);
    }
  },
});

/** Waits `ms` on a timer (a task that waits on I/O, not on the CPU), then answers with its thread. */
export const sleepTask = defineTask({
  name: 'test.sleep',
  module: import.meta.url,
  run: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve({ slept: ms, threadId }), ms)),
});

/** Answers, after a timer, with something structured clone refuses (a function). */
export const uncloneableLaterTask = defineTask({
  name: 'test.uncloneable-later',
  module: import.meta.url,
  run: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve({ callback: () => 1 }), ms)),
});

/**
 * Reports how many tasks run in this worker as it runs (itself included): the tasks of one message
 * start together, so each sees all of them; a message's tasks settle (within microtasks) before the
 * worker handles its next message, so tasks of different messages do not see each other. It
 * settles within its turn, so it is answered with its message, never late.
 */
export const batchMatesTask = defineTask({
  name: 'test.batch-mates',
  module: import.meta.url,
  run: async () => {
    // Let the other tasks of the message start first.
    await Promise.resolve();
    await Promise.resolve();
    return { mates: tasksRunningInThisThread() };
  },
});

/** Answers at once with something structured clone refuses (a function). */
export const uncloneableNowTask = defineTask({
  name: 'test.uncloneable-now',
  module: import.meta.url,
  run: () => ({ callback: () => 1 }),
});
