/**
 * The trust files of `serve --processes N`, read once by the primary for every worker process: a
 * thread of its own reads and indexes them (the bundler's `bundle.read-trust` task, as the one-process
 * executable has its first worker thread do) while the first worker process loads the server on the
 * other core, and is stopped once it has answered — the primary keeps none of the bundler. The worker
 * processes build their pools from the snapshot (`StartServerOptions.prestartedTrust`) instead of
 * each reading ≈3 MB of PEM; one that gets none reads the files itself, and reports a broken file
 * exactly as one process does.
 */
import { prestartWorkers } from '@certsmith/worker-pool/prestart';
import type { TrustSnapshot } from '@certsmith/bundler';
import type { TrustFileGuess } from '../serve-prestart.js';

/** Read `files` on a thread started on `workerEntry` (the workers' bundle, when built); the thread ends when it has answered. */
export function readTrustInThread(files: TrustFileGuess, workerEntry: URL | undefined): Promise<TrustSnapshot> {
  const thread = prestartWorkers({
    count: 1,
    ...(workerEntry === undefined ? {} : { workerEntry }),
    task: { module: import.meta.resolve('@certsmith/bundler'), name: 'bundle.read-trust', input: files },
  });
  const reading = (thread.taskResult as Promise<TrustSnapshot>).finally(() => thread.stop());
  reading.catch(() => undefined);
  return reading;
}
