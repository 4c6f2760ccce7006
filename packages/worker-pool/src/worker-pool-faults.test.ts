/**
 * Faults of worker threads: a worker that exits or dies of an uncaught exception in the middle of a
 * task fails only that task, with a coded error, and the pool replaces the worker.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { exitTask, stuckTask, uncaughtTask, whoTask } from '../test-fixtures/crash-tasks.mjs';
import { echoTask, gateTask, sleepTask } from '../test-fixtures/test-tasks.mjs';
import { WorkerCrashedError, WorkerStuckError } from './errors.js';
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
    // Run in one turn, the crashing task travels in one message with others: those are sent again,
    // each alone, and complete; the crashing one stops a second worker and then fails.
    await pool.ready();
    const results = await Promise.allSettled([
      pool.run(exitTask, {}),
      ...Array.from({ length: 9 }, () => pool.run(whoTask, {})) /* size 2 + maxQueue 8 */,
    ]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { code: 500 } });
    expect(results.slice(1).filter((result) => result.status === 'rejected')).toEqual([]);
  });

  it('reports the first crash of a message naming its tasks, and the task that crashes twice', { timeout: 60_000 }, async () => {
    const errors: unknown[] = [];
    const pool = makePool(1, errors);
    await pool.ready();
    const [crashing, innocent] = await Promise.allSettled([pool.run(exitTask, {}), pool.run(whoTask, {})]);
    expect(crashing).toMatchObject({ status: 'rejected', reason: { code: 500, taskName: 'test.exit' } });
    expect(innocent).toMatchObject({ status: 'fulfilled' });
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ code: 500, taskName: 'test.exit, test.who' });
    expect(errors[1]).toMatchObject({ code: 500, taskName: 'test.exit' });
    expect(pool.pending).toBe(0);
  });
});

describe('a stuck worker', () => {
  /**
   * A pool that notices a silent worker within a few seconds: heartbeats every second, silent after
   * 3 s. Shorter margins made these tests fail on a loaded machine, where a worker that is starting
   * (importing its modules) or a timer can be late by more than a second.
   */
  function quickWatchPool(errors: unknown[]): WorkerPool {
    const pool = createWorkerPool({
      size: 1,
      tasks: [stuckTask, echoTask, gateTask, sleepTask],
      heartbeatIntervalMs: 1_000,
      messageTimeoutMs: 3_000,
      onError: (error) => errors.push(error),
    });
    pools.push(pool);
    return pool;
  }

  it('is replaced, and the tasks of its unanswered message are sent to the new worker', { timeout: 60_000 }, async () => {
    const errors: unknown[] = [];
    const pool = quickWatchPool(errors);
    const gate = new SharedArrayBuffer(4);
    const counter = new SharedArrayBuffer(8);
    const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    // Sent together once the blocker is done. The stuck task blocks its thread either inside the
    // message or, when its module loads after the echo has settled, as a late task: both are caught.
    const stuck = pool.run(stuckTask, { counter, blockMs: 25_000 });
    const companion = pool.run(echoTask, 'companion');
    Atomics.store(new Int32Array(gate), 0, 1);
    Atomics.notify(new Int32Array(gate), 0);
    await blocker;
    const resent = await stuck;
    expect(resent.attempt).toBe(1);
    await expect(companion).resolves.toMatchObject({ input: 'companion' });
    const stuckErrors = errors.filter((error) => error instanceof WorkerStuckError);
    expect(stuckErrors).toHaveLength(1);
    expect((stuckErrors[0] as WorkerStuckError).taskNames).toContain('test.stuck');
    expect(errors.filter((error) => !(error instanceof WorkerStuckError))).toEqual([]);
  });

  it('is not confused with a long task whose worker keeps its heartbeat', { timeout: 60_000 }, async () => {
    const errors: unknown[] = [];
    const pool = quickWatchPool(errors);
    await expect(pool.run(sleepTask, { ms: 7_000 })).resolves.toMatchObject({ slept: 7_000 });
    expect(errors).toEqual([]);
  });

  it('fails the task with 503 when the second worker gets stuck on it too', { timeout: 60_000 }, async () => {
    const errors: unknown[] = [];
    const pool = quickWatchPool(errors);
    const counter = new SharedArrayBuffer(8);
    await expect(pool.run(stuckTask, { counter, blockMs: 25_000, always: true })).rejects.toMatchObject({
      code: 503,
      message: 'task test.stuck was sent to two workers that both stopped answering; retry later',
    });
    expect(errors.filter((error) => error instanceof WorkerStuckError)).toHaveLength(2);
    await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after' });
  });
});
