/**
 * The key pool through the worker pool's init hook (`--key-pool`): each worker fills its share
 * while it is idle and hands the keys to issuing tasks.
 */
import { createWorkerPool, defineTask } from '@certsmith/worker-pool';
import type { TaskDefinition } from '@certsmith/worker-pool';
import { describe, expect, it } from 'vitest';

import { keyPoolStatsTask } from '../test-fixtures/key-pool-tasks.mjs';
import { decodeNewCertificateRequest } from './certificate-request.js';
import { keyAndCsrTask } from './key-and-csr-task.js';
import { perWorkerKeyPool, workerKeyPool, workerKeyPoolInit } from './worker-key-pool.js';

/**
 * The stats task on this module graph's copy of the pool: with no worker thread, the calling thread
 * runs the init hook's own function (`initWorker` of the hook) and the tasks it was given, so the
 * pool it fills is this copy's (the fixture's task reads the built copy, which workers import).
 */
const keyPoolStatsHereTask = defineTask({ name: 'test.key-pool-stats-here', module: import.meta.url, run: () => workerKeyPool()?.stats() ?? null });

describe('key pool (--key-pool)', () => {
  it('splits the server-wide sizes over the workers, rounding up, and drops empty specs', () => {
    expect(perWorkerKeyPool({ 'rsa-2048': 64, 'ecdsa-256': 5, ed25519: 0 }, 2)).toEqual({ 'rsa-2048': 32, 'ecdsa-256': 3 });
    expect(perWorkerKeyPool({ ed25519: 0 }, 2)).toBeNull();
    expect(perWorkerKeyPool(undefined, 2)).toBeNull();
    expect(workerKeyPoolInit({ ed25519: 0 }, 2)).toBeNull();
  });

  /** Wait (bounded) for the idle thread to fill its pool, then issue twice from it. */
  async function fillsAndHandsOutKeys(pool: ReturnType<typeof createWorkerPool>, statsTask: TaskDefinition = keyPoolStatsTask): Promise<void> {
    type Stats = { spec: string; size: number; capacity: number; hits: number; generated: number }[] | null;
    let stats = (await pool.run(statsTask, {})) as Stats;
    // Bounded wait for the idle thread to fill its pool (3 P-256 keys take milliseconds).
    for (let i = 0; i < 100 && (stats?.[0]?.size ?? 0) < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      stats = (await pool.run(statsTask, {})) as Stats;
    }
    expect(stats).toMatchObject([{ spec: 'ecdsa-256', size: 3, capacity: 3 }]);
    const request = decodeNewCertificateRequest({ request: { CN: 'pooled.example', hosts: ['pooled.example'] } }).request;
    const first = await pool.run(keyAndCsrTask, { request, withFacts: false });
    const second = await pool.run(keyAndCsrTask, { request, withFacts: false });
    expect(first.privateKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(second.privateKeyPem).not.toBe(first.privateKeyPem);
    stats = (await pool.run(statsTask, {})) as Stats;
    expect(stats?.[0]?.hits).toBe(2);
  }

  it('fills each worker\'s pool while it is idle and hands the keys to issuing tasks, each once', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [keyAndCsrTask, keyPoolStatsTask], init: [workerKeyPoolInit({ 'ecdsa-256': 3 }, 1)!] });
    try {
      await fillsAndHandsOutKeys(pool);
    } finally {
      await pool.close();
    }
  });

  it('keeps the whole pool on the calling thread when the pool has no worker threads (--workers 0)', async () => {
    const init = workerKeyPoolInit({ 'ecdsa-256': 3 }, 0)!;
    expect(init.data).toEqual({ share: { 'ecdsa-256': 3 }, onCallingThread: true });
    expect(workerKeyPoolInit({ 'ecdsa-256': 3 }, 2)!.data).toEqual({ share: { 'ecdsa-256': 2 }, onCallingThread: false });
    const pool = createWorkerPool({ size: 0, tasks: [keyAndCsrTask, keyPoolStatsHereTask], init: [init] });
    try {
      await fillsAndHandsOutKeys(pool, keyPoolStatsHereTask);
    } finally {
      await pool.close();
    }
    // A hook without its own function: the calling thread imports the built modules, as a worker does.
    const imported = createWorkerPool({ size: 0, tasks: [keyAndCsrTask, keyPoolStatsTask], init: [{ module: init.module, data: init.data }] });
    try {
      await fillsAndHandsOutKeys(imported);
    } finally {
      await imported.close();
    }
  });

  it('has no pool without --key-pool', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [keyPoolStatsTask] });
    try {
      expect(await pool.run(keyPoolStatsTask, {})).toBeNull();
    } finally {
      await pool.close();
    }
  });
});
