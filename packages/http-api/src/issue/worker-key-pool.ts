/**
 * The pre-generated key pool of one worker thread (`--key-pool`): keys made while the worker has
 * no task, taken by newcert/newkey tasks instead of generating on the request's time. Each key is
 * used once and lives only in this thread's memory. The pool is per worker so a key never crosses
 * a thread boundary; the server splits its configured sizes over the workers.
 *
 * Background refills need the worker's event loop to run between tasks, which it does: the pool
 * does not park idle workers in Atomics.wait (see `createWorkerPool`).
 */
import { workerData } from 'node:worker_threads';
import { createKeyPool, generateKey, generateKeyInThread, pooledKeySource } from '@certsmith/issuer';
import type { GeneratedKey, KeyPool, KeyPoolSizes, KeySpec } from '@certsmith/issuer';
import type { WorkerSetup } from '../worker-protocol.js';
import { tasksRunningInThisThread } from '@certsmith/worker-pool';

let pool: KeyPool | null | undefined;

/** Start this worker's pool from `workerData.keyPool` (no-op when there is none or it already runs). */
export function startWorkerKeyPool(sizes: KeyPoolSizes | undefined = (workerData as WorkerSetup | undefined)?.keyPool): KeyPool | null {
  if (pool !== undefined) return pool;
  const configured = sizes !== undefined && Object.values(sizes).some((size) => size > 0);
  // Refills run only while this worker has no task: requests never wait behind a pooled key.
  pool = configured ? createKeyPool({ sizes, generate: generateKey, busy: () => tasksRunningInThisThread() > 0 }) : null;
  return pool;
}

/** The key source of issuing tasks: a pooled key when one is ready, else a fresh one. */
export function workerKeySource(): (spec: KeySpec) => Promise<GeneratedKey> {
  const current = pool === undefined ? startWorkerKeyPool() : pool;
  return current === null ? generateKeyInThread : pooledKeySource(current, generateKeyInThread);
}

/** This worker's pool counters (null without a pool). */
export function workerKeyPool(): KeyPool | null {
  return pool ?? null;
}

/** Stop and forget this thread's pool (tests). */
export function stopWorkerKeyPool(): void {
  pool?.close();
  pool = undefined;
}
