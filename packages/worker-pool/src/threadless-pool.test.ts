import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { initCallsTask } from '../test-fixtures/init-hooks.mjs';
import { preloadedTask } from '../test-fixtures/prestart-tasks.mjs';
import { batchMatesTask, codedFailureTask, copiedReadingTask, echoTask, readingTask, sleepTask, uncloneableNowTask } from '../test-fixtures/test-tasks.mjs';
import { ServiceUnavailableError } from './errors.js';
import { prestartWorkers } from './prestarted-workers.js';
import { defineTask } from './task.js';
import { DEFAULT_THREADLESS_TASKS_PER_TURN, createWorkerPool } from './worker-pool.js';
import type { WorkerPool, WorkerPoolOptions } from './worker-pool.js';

const hooks = new URL('../test-fixtures/init-hooks.mjs', import.meta.url);

async function withPool(options: WorkerPoolOptions, use: (pool: WorkerPool) => Promise<void>): Promise<void> {
  const pool = createWorkerPool(options);
  try {
    await use(pool);
  } finally {
    await pool.close();
  }
}

describe('createWorkerPool size 0', () => {
  it('runs every task on the calling thread, with copies of input and result and coded errors', () =>
    withPool({ size: 0, tasks: [echoTask, codedFailureTask, uncloneableNowTask] }, async (pool) => {
      await pool.ready();
      const input = { list: [1, 2] };
      const [echoed, failed, uncloneable] = await Promise.allSettled([pool.run(echoTask, input), pool.run(codedFailureTask, {}), pool.run(uncloneableNowTask, {})]);
      expect(echoed).toMatchObject({ status: 'fulfilled', value: { input: { list: [1, 2] }, threadId } });
      expect((echoed as PromiseFulfilledResult<{ input: unknown }>).value.input).not.toBe(input);
      expect(failed).toMatchObject({ status: 'rejected', reason: { code: 1002, name: 'CertificateDecodeError' } });
      expect(uncloneable).toMatchObject({ status: 'rejected', reason: { message: expect.stringContaining('could not be cloned') } });
      expect([pool.size, pool.pending, pool.queued]).toEqual([0, 0, 0]);
    }));

  it('hands a task declared readsInputOnly the caller\'s input itself, and any other task a copy', () =>
    withPool({ size: 0, tasks: [readingTask, copiedReadingTask] }, async (pool) => {
      await pool.ready();
      // A copy would drop the prototype, and with it `inherited`.
      const input = Object.create({ inherited: 'from the prototype' }) as object;
      const [reading, copied] = await Promise.all([pool.run(readingTask, input), pool.run(copiedReadingTask, input)]);
      expect(reading).toEqual({ inherited: 'from the prototype', threadId });
      expect(copied).toEqual({ inherited: null, threadId });
    }));

  it('starts no thread: prestarted threads are stopped', async () => {
    const prestarted = prestartWorkers({ count: 1 });
    await withPool({ size: 0, tasks: [preloadedTask], prestarted }, async (pool) => {
      expect(prestarted.count).toBe(0);
      await pool.ready();
      expect(await pool.run(preloadedTask, undefined)).toBe(false);
    });
  });

  it('runs the init hooks once on the calling thread before its first task; tasks sent before wait for them', () =>
    withPool({ size: 0, tasks: [initCallsTask], init: [{ module: hooks, data: { once: true } }] }, async (pool) => {
      // Sent before the hooks are done (they wait 50 ms): queued, then answered.
      const early = [pool.run(initCallsTask, {}), pool.run(initCallsTask, {})];
      expect([pool.pending, pool.queued]).toEqual([2, 2]);
      await pool.ready();
      const answers = [...(await Promise.all(early)), ...(await Promise.all([1, 2, 3].map(() => pool.run(initCallsTask, {}))))];
      for (const answer of answers) expect(answer).toEqual({ calls: [{ once: true }], threadId });
    }));

  it("calls the hooks' own initWorker and runs the tasks it was given, importing neither module, when every hook comes with its function", async () => {
    // Neither module exists: an import would fail ready() with "cannot be imported".
    const nowhere = new URL('../test-fixtures/never-imported.mjs', import.meta.url).href;
    const seen: unknown[] = [];
    const heldTask = defineTask({ name: 'test.held', module: nowhere, run: () => ({ seen, threadId }) });
    await withPool({ size: 0, tasks: [heldTask], init: [{ module: nowhere, data: { held: true }, initWorker: (data) => void seen.push(data) }] }, async (pool) => {
      await pool.ready();
      expect(await pool.run(heldTask, {})).toEqual({ seen: [{ held: true }], threadId });
    });
  });

  it('imports every hook and task module when one hook comes without its function: tasks and hooks share one copy of each module', () =>
    withPool(
      {
        size: 0,
        tasks: [initCallsTask],
        init: [
          { module: hooks, data: { imported: 1 } },
          { module: hooks, data: { imported: 2 }, initWorker: () => { throw new Error('the held hook must not run here'); } },
        ],
      },
      async (pool) => {
        await pool.ready();
        const { calls } = (await pool.run(initCallsTask, {})) as { calls: unknown[] };
        expect(calls.slice(-2)).toEqual([{ imported: 1 }, { imported: 2 }]);
      },
    ));

  it('fails to start when an init hook throws: ready(), waiting and later tasks reject with WorkerInitError naming the module', async () => {
    const errors: unknown[] = [];
    await withPool({ size: 0, tasks: [echoTask], init: [{ module: new URL('../test-fixtures/failing-init.mjs', import.meta.url) }], onError: (error) => errors.push(error) }, async (pool) => {
      const waiting = pool.run(echoTask, 'never');
      const failure = { name: 'WorkerInitError', message: expect.stringContaining('failing-init.mjs: initWorker failed: cannot open the key store') };
      await expect(pool.ready()).rejects.toMatchObject(failure);
      await expect(waiting).rejects.toMatchObject(failure);
      await expect(pool.run(echoTask, 'later')).rejects.toMatchObject(failure);
      expect([pool.pending, pool.queued]).toEqual([0, 0]);
      expect(errors).toEqual([expect.objectContaining(failure)]);
    });
  });

  it('answers 503 with Retry-After once one task more than maxQueue is pending', () =>
    withPool({ size: 0, maxQueue: 1, retryAfterSeconds: 3, tasks: [sleepTask] }, async (pool) => {
      await pool.ready();
      const accepted = [pool.run(sleepTask, { ms: 100 }), pool.run(sleepTask, { ms: 100 })];
      const refused = pool.run(sleepTask, { ms: 100 });
      await expect(refused).rejects.toBeInstanceOf(ServiceUnavailableError);
      await expect(refused).rejects.toMatchObject({ code: 503, retryAfterSeconds: 3, message: expect.stringContaining('server is busy') });
      await expect(Promise.all(accepted)).resolves.toMatchObject([{ slept: 100 }, { slept: 100 }]);
      expect(pool.pending).toBe(0);
    }));

  it('defaults maxQueue to 64, the calling thread counting as one lane', () => {
    const pool = createWorkerPool({ size: 0, tasks: [echoTask] });
    expect([pool.size, pool.maxQueue]).toEqual([0, 64]);
    return pool.close();
  });

  it('runs at most callerThread.maxTasks tasks per turn (default DEFAULT_THREADLESS_TASKS_PER_TURN)', async () => {
    await withPool({ size: 0, tasks: [batchMatesTask] }, async (pool) => {
      await pool.ready();
      const answers = await Promise.all(Array.from({ length: DEFAULT_THREADLESS_TASKS_PER_TURN + 5 }, () => pool.run(batchMatesTask, {})));
      expect(Math.max(...answers.map((answer) => answer.mates))).toBe(DEFAULT_THREADLESS_TASKS_PER_TURN);
    });
    await withPool({ size: 0, tasks: [batchMatesTask], callerThread: { maxTasks: 3 } }, async (pool) => {
      await pool.ready();
      const answers = await Promise.all(Array.from({ length: 7 }, () => pool.run(batchMatesTask, {})));
      expect(answers.map((answer) => answer.mates)).toEqual([3, 3, 3, 3, 3, 3, 1]);
    });
  });

  it('fails a task still running after taskTimeoutMs with 503 and carries on', () =>
    withPool({ size: 0, taskTimeoutMs: 200, tasks: [sleepTask, echoTask] }, async (pool) => {
      await expect(pool.run(sleepTask, { ms: 1_000 })).rejects.toMatchObject({ code: 503, message: expect.stringContaining('did not finish within 200 ms') });
      expect(pool.pending).toBe(0);
      await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after', threadId });
    }));

  it('answers an aborted task with the signal reason, waiting or running', () =>
    withPool({ size: 0, tasks: [sleepTask, initCallsTask], init: [{ module: hooks, data: 'abort' }] }, async (pool) => {
      // Waiting: the init hooks are still running.
      const controller = new AbortController();
      const waiting = pool.run(initCallsTask, {}, { signal: controller.signal });
      controller.abort(new Error('client went away'));
      await expect(waiting).rejects.toThrow('client went away');
      expect([pool.pending, pool.queued]).toEqual([0, 0]);
      await pool.ready();
      // Running: answered at once, its outcome dropped when it comes.
      const running = new AbortController();
      const sleeping = pool.run(sleepTask, { ms: 300 }, { signal: running.signal });
      await new Promise((resolve) => setTimeout(resolve, 50));
      running.abort(new Error('gone mid-task'));
      await expect(sleeping).rejects.toThrow('gone mid-task');
      expect(pool.pending).toBe(0);
      await expect(pool.run(sleepTask, { ms: 1 }, { signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow('already');
    }));

  it('answers the accepted tasks when it closes, refuses new ones with 503, and fails what outlasts closeTimeoutMs', async () => {
    const pool = createWorkerPool({ size: 0, tasks: [sleepTask], closeTimeoutMs: 300 });
    await pool.ready();
    const accepted = [pool.run(sleepTask, { ms: 50 }), pool.run(sleepTask, { ms: 80 })];
    const tooLong = pool.run(sleepTask, { ms: 2_000 });
    const closed = pool.close();
    await expect(pool.run(sleepTask, { ms: 1 })).rejects.toMatchObject({ code: 503, message: 'server is shutting down' });
    await expect(Promise.all(accepted)).resolves.toMatchObject([{ slept: 50 }, { slept: 80 }]);
    await expect(tooLong).rejects.toMatchObject({ code: 503, message: 'server is shutting down' });
    await closed;
    expect(pool.pending).toBe(0);
  });

  it('refuses callerThread.tasks: every task runs on the calling thread', () => {
    expect(() => createWorkerPool({ size: 0, tasks: [echoTask, sleepTask], callerThread: { maxTasks: 2, tasks: [echoTask] } })).toThrow(TypeError);
    expect(() => createWorkerPool({ size: 0, tasks: [echoTask], callerThread: { maxTasks: 0 } })).toThrow(RangeError);
    expect(() => createWorkerPool({ size: -1, tasks: [echoTask] })).toThrow(RangeError);
  });
});
