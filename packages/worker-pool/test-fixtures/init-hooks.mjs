/**
 * Init hooks and a task that reads what they set, for the pool's init-hook tests. Plain JavaScript:
 * workers import these modules with Node itself.
 */
import { threadId } from 'node:worker_threads';
import { defineTask } from '@certsmith/worker-pool';

/** What the hooks of this module saw in this thread, in call order. */
const calls = [];

/** The init hook: records its data (after an await, to show the pool waits for it). */
export async function initWorker(data) {
  await new Promise((resolve) => setTimeout(resolve, 50));
  calls.push(data);
}

/** Answers with the hooks' calls in this thread. */
export const initCallsTask = defineTask({
  name: 'test.init-calls',
  module: import.meta.url,
  run: () => ({ calls, threadId }),
});
