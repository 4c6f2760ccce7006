/**
 * The issuer's per-worker setup, given to the worker pool through its init hook: every thread that
 * runs the issuer's tasks recreates the signers that can be recreated (local keys, see
 * `worker-signers.ts`), installs the use case's issued hook (`worker-issued-hook.ts`) and starts its
 * share of the pre-generated key pool (`--key-pool`, see `worker-key-pool.ts`). The pool knows nothing of either; it runs each module's `initWorker(data)`.
 */
import type { WorkerInit } from '@certsmith/worker-pool';

import type { SignerEntry } from './signer-directory.js';
import { workerIssuedHookInit } from './worker-issued-hook.js';
import type { WorkerIssuedHookSpec } from './worker-issued-hook.js';
import { workerKeyPoolInit } from './worker-key-pool.js';
import { workerSignersInit } from './worker-signers.js';

/** What {@link issuingWorkerInits} sets up. */
export interface IssuingWorkerSetup {
  /** The configured signers: those with a `workerRecipe` are recreated in every thread. */
  signers: readonly SignerEntry[];
  /** Pre-generated keys for the whole pool, per key spec name (`rsa-2048`: 64), split over the threads. */
  keyPool?: Readonly<Record<string, number>> | undefined;
  /** Threads that run tasks (the pool's size): each gets `keyPool / threads` keys, rounded up; 0 (no worker threads): the event loop keeps them all. */
  threads: number;
  /**
   * Run on every certificate a worker signs (`worker-issued-hook.ts`): e.g. a store's row fields and
   * first OCSP response, prepared beside the signature. Installed only when some signer is recreated
   * in the workers (otherwise nothing is signed there).
   */
  issuedHook?: WorkerIssuedHookSpec | undefined;
}

/**
 * The init hooks for a worker pool that runs the issuer's tasks with `signatureSite: 'worker'`
 * (empty when there is nothing to set up).
 */
export function issuingWorkerInits(setup: IssuingWorkerSetup): WorkerInit[] {
  const inits: WorkerInit[] = [];
  const signers = workerSignersInit(setup.signers);
  if (signers !== null) inits.push(signers);
  if (signers !== null && setup.issuedHook !== undefined) inits.push(workerIssuedHookInit(setup.issuedHook));
  const keyPool = workerKeyPoolInit(setup.keyPool, setup.threads);
  if (keyPool !== null) inits.push(keyPool);
  return inits;
}
