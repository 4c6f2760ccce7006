/**
 * The `bundle.read-trust` worker task: {@link readTrustSnapshot} in a worker thread. The `certsmith`
 * executable gives it to the worker it starts first thing (`prestartWorkers`), which reads and
 * indexes the trust files while the main thread is still loading the server's code; the server then
 * builds its pools from that snapshot instead of reading the files on its own thread (numbers:
 * docs/performance.md, start-up). A snapshot travels between threads as typed arrays.
 */
import { defineTask } from '@certsmith/worker-pool';
import type { TrustFilePaths } from './trust-files.js';
import { readTrustSnapshot } from './trust-snapshot.js';
import type { TrustSnapshot } from './trust-snapshot.js';

/** Read and index the trust files `input` names; rejects as {@link readTrustSnapshot} does. */
export const readTrustTask = defineTask({
  name: 'bundle.read-trust',
  module: import.meta.url,
  async run(input: TrustFilePaths): Promise<TrustSnapshot> {
    return await readTrustSnapshot(input);
  },
});
