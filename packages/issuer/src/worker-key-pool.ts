/**
 * The pre-generated key pool of one worker thread (`--key-pool`): keys made while the worker has
 * no task, taken by newcert/newkey tasks instead of generating on the request's time. Each key is
 * used once and lives only in this thread's memory. The pool is per worker so a key never crosses
 * a thread boundary; the server splits its configured sizes over the workers
 * ({@link workerKeyPoolInit}) and the pool's init hook starts each worker's share ({@link initWorker}).
 *
 * Background refills need the worker's event loop to run between tasks, which it does: the pool
 * does not park idle workers in Atomics.wait (see `createWorkerPool`).
 */
import { isMainThread } from 'node:worker_threads';
import { tasksRunningInThisThread } from '@certsmith/worker-pool';
import type { WorkerInit } from '@certsmith/worker-pool';

import { generateKey, generateKeyInThread } from './key-generation.js';
import type { GeneratedKey, KeySpec } from './key-generation.js';
import { createKeyPool, pooledKeySource } from './key-pool.js';
import type { KeyPool, KeyPoolSizes } from './key-pool.js';

let pool: KeyPool | null | undefined;
let providedSource: ((spec: KeySpec) => Promise<GeneratedKey>) | null = null;

/** Each thread's share of a server-wide key pool (rounded up); null when no spec has keys. */
export function perWorkerKeyPool(sizes: Readonly<Record<string, number>> | undefined, threads: number): Record<string, number> | null {
  if (sizes === undefined) return null;
  const share: Record<string, number> = {};
  for (const [spec, size] of Object.entries(sizes)) if (size > 0) share[spec] = Math.ceil(size / threads);
  return Object.keys(share).length > 0 ? share : null;
}

/**
 * The pool's init hook that starts, in each of `threads` worker threads, its share of the
 * server-wide key pool `sizes` (`--key-pool`); null when no spec has keys. A configured pool starts
 * filling as soon as the worker is up, before any request arrives.
 */
export function workerKeyPoolInit(sizes: Readonly<Record<string, number>> | undefined, threads: number): WorkerInit | null {
  const share = perWorkerKeyPool(sizes, threads);
  return share === null ? null : { module: import.meta.url, data: share };
}

/**
 * The init hook (see {@link workerKeyPoolInit}): start this worker's share of the key pool. Not on
 * the main thread: the event loop runs tasks only while every worker is busy, and a pool there would
 * make keys on the thread that serves every request, for those few tasks; they use fresh keys.
 */
export function initWorker(data: unknown): void {
  if (isMainThread) return;
  startWorkerKeyPool(data as KeyPoolSizes);
}

/** Start this thread's pool with `sizes` (no-op when there is none or it already runs). */
export function startWorkerKeyPool(sizes?: KeyPoolSizes): KeyPool | null {
  if (pool !== undefined) return pool;
  const configured = sizes !== undefined && Object.values(sizes).some((size) => size > 0);
  // Refills run only while this worker has no task: requests never wait behind a pooled key.
  pool = configured ? createKeyPool({ sizes, generate: generateKey, busy: () => tasksRunningInThisThread() > 0 }) : null;
  return pool;
}

/**
 * Where this thread's issuing tasks take keys from instead of its key pool (`null`: back to the
 * pool, or fresh keys): for single-threaded embedding and for benchmarks that time issuance
 * without key generation (`tools/bench/issuer`). Must return a fresh key matching `spec`.
 */
export function provideThreadKeySource(source: ((spec: KeySpec) => Promise<GeneratedKey>) | null): void {
  providedSource = source;
}

/** The key source of issuing tasks: a pooled key when one is ready, else a fresh one. */
export function workerKeySource(): (spec: KeySpec) => Promise<GeneratedKey> {
  if (providedSource !== null) return providedSource;
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
