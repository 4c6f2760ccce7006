/**
 * Faults of worker threads: a worker that exits or dies of an uncaught exception in the middle of a
 * task fails only that task, with a coded error, and the pool replaces the worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { exitTask, uncaughtTask, whoTask } from '../test-fixtures/crash-tasks.mjs';
import { WorkerCrashedError } from './errors.js';
import { createWorkerPool } from './worker-pool.js';
import type { WorkerPool } from './worker-pool.js';

const pools: WorkerPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

function makePool(size: number, errors: unknown[] = []): WorkerPool {
  const pool = createWorkerPool({ size, maxQueue: 8, tasks: [exitTask, uncaughtTask, whoTask], onError: (error) => errors.push(error) });
  pools.push(pool);
  return pool;
}

describe('worker faults', () => {
  it('fails a task whose worker exits with a coded 500 and replaces the worker', { timeout: 60_000 }, async () => {
    const errors: unknown[] = [];
    const pool = makePool(1, errors);
    // Even as the very first task: a crash is not a startup failure of the pool.
    const error = await pool.run(exitTask, { code: 7 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkerCrashedError);
    expect(error).toMatchObject({ code: 500, message: expect.stringContaining('test.exit') });
    expect(errors).toHaveLength(1);
    const first = await pool.run(whoTask, {});
    expect(first.threadId).toBeGreaterThan(0);
    // And again: the replacement can crash and be replaced too.
    await expect(pool.run(exitTask, {})).rejects.toMatchObject({ code: 500 });
    const second = await pool.run(whoTask, {});
    expect(second.threadId).not.toBe(first.threadId);
    expect(pool.pending).toBe(0);
  });

  it('fails a task whose worker dies of an uncaught exception, without leaking its text', { timeout: 60_000 }, async () => {
    const pool = makePool(1);
    await pool.run(whoTask, {});
    const error = (await pool.run(uncaughtTask, {}).catch((caught: unknown) => caught)) as Error;
    expect(error).toMatchObject({ code: 500 });
    expect(error.message).not.toContain('secret-detail-42');
    await expect(pool.run(whoTask, {})).resolves.toMatchObject({ threadId: expect.any(Number) });
  });

  it('fails only the crashing task: others on other workers and in the queue complete', { timeout: 60_000 }, async () => {
    const pool = makePool(2);
    const results = await Promise.allSettled([
      pool.run(exitTask, {}),
      ...Array.from({ length: 9 }, () => pool.run(whoTask, {})) /* size 2 + maxQueue 8 */,
    ]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 500 } });
    expect(results.slice(1).filter((result) => result.status === 'rejected')).toEqual([]);
  });
});
