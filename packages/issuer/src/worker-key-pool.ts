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

/** What the key pool's init hook carries to each thread that runs tasks. */
interface KeyPoolInitData {
  /** This thread's share of the server-wide sizes. */
  readonly share: KeyPoolSizes;
  /**
   * Whether the calling thread keeps a pool too: only when the pool has no worker threads (`size:
   * 0`), where the event loop runs every task. RSA keys are made on libuv's thread pool
   * (`generateKey`), so refilling does not hold the event loop; refills wait while a task runs.
   */
  readonly onCallingThread: boolean;
}

/**
 * The pool's init hook that starts, in each of `threads` worker threads, its share of the
 * server-wide key pool `sizes` (`--key-pool`); null when no spec has keys. With `threads` 0 (a pool
 * without worker threads) the event loop, which then runs every task, keeps the whole pool. A
 * configured pool starts filling as soon as the thread is up, before any request arrives.
 */
export function workerKeyPoolInit(sizes: Readonly<Record<string, number>> | undefined, threads: number): WorkerInit | null {
  const share = perWorkerKeyPool(sizes, Math.max(threads, 1));
  if (share === null) return null;
  const data: KeyPoolInitData = { share, onCallingThread: threads === 0 };
  // With its own initWorker: a thread that holds this module already calls it (WorkerInit.initWorker).
  return { module: import.meta.url, data, initWorker };
}

/**
 * The init hook (see {@link workerKeyPoolInit}): start this thread's share of the key pool. Not on
 * the main thread while there are workers: the event loop then runs tasks only while every worker is
 * busy, and a pool there would make keys on the thread that serves every request, for those few
 * tasks; they use fresh keys.
 */
export function initWorker(data: unknown): void {
  const { share, onCallingThread } = data as KeyPoolInitData;
  if (isMainThread && !onCallingThread) return;
  startWorkerKeyPool(share);
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
