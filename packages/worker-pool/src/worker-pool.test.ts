import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delayedExitTask, exitTask, whoTask } from '../test-fixtures/crash-tasks.mjs';
import { initCallsTask } from '../test-fixtures/init-hooks.mjs';
import { batchMatesTask, codedFailureTask, echoTask, gateTask, uncloneableNowTask, plainFailureTask, rendezvousTask, sleepTask, uncloneableLaterTask } from '../test-fixtures/test-tasks.mjs';
import { defaultMaxTasksPerMessage } from './batching.js';
import { ServiceUnavailableError, UnknownTaskError } from './errors.js';
import { withoutEntryPointFlags, withoutResolveConditions, workerExecArgv } from './exec-argv.js';
import { defineTask } from './task.js';
import { createWorkerPool, defaultWorkerCount } from './worker-pool.js';
import type { WorkerPool } from './worker-pool.js';

function openGate(gate: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(gate), 0, 1);
  Atomics.notify(new Int32Array(gate), 0);
}

describe('createWorkerPool', () => {
  let pool: WorkerPool;
  beforeAll(() => {
    pool = createWorkerPool({ size: 1, maxQueue: 1, tasks: [echoTask, codedFailureTask, plainFailureTask, gateTask] });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('runs a task on a worker thread and returns its structured-cloned result', async () => {
    const result = await pool.run(echoTask, { nested: { list: [1, 'two'] } });
    expect(result.input).toEqual({ nested: { list: [1, 'two'] } });
    expect(result.threadId).not.toBe(threadId);
  });

  it('rebuilds a coded worker error with its code, name and message', async () => {
    await expect(pool.run(codedFailureTask, {})).rejects.toMatchObject({
      code: 1002,
      name: 'CertificateDecodeError',
      message: 'Failed to decode certificate',
    });
  });

  it('rebuilds an uncoded worker error without a code and with the worker stack', async () => {
    const error = (await pool.run(plainFailureTask, {}).catch((caught: unknown) => caught)) as Error & { code?: unknown };
    expect(error.message).toBe('database password is hunter2');
    expect(error.code).toBeUndefined();
    expect(error.stack).toContain('test-tasks.mjs');
  });

  it('rejects a task it was not created with', async () => {
    const stranger = defineTask({ name: 'test.stranger', module: import.meta.url, run: () => 1 });
    await expect(pool.run(stranger, undefined)).rejects.toBeInstanceOf(UnknownTaskError);
  });

  it('rejects with ServiceUnavailableError when size + maxQueue tasks are pending', async () => {
    const gate = new SharedArrayBuffer(4);
    const running = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    const queued = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    expect(pool.pending).toBe(2);
    const rejected = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    await expect(rejected).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(rejected).rejects.toMatchObject({ code: 503, retryAfterSeconds: 1 });
    openGate(gate);
    await expect(Promise.all([running, queued])).resolves.toEqual([{ opened: true }, { opened: true }]);
    expect(pool.pending).toBe(0);
  });
});

describe('createWorkerPool taskTimeoutMs', () => {
  it('abandons a task that runs too long with a 503 and replaces its worker', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [gateTask, echoTask], taskTimeoutMs: 2000 });
    try {
      await pool.ready();
      const gate = new SharedArrayBuffer(4);
      await expect(pool.run(gateTask, { gate, timeoutMs: 20_000 })).rejects.toMatchObject({ code: 503 });
      await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after' });
    } finally {
      await pool.close();
    }
  });
});

/**
 * Run `queue` while the pool's only worker is held by a gate task, then open the gate: what `queue`
 * started waits meanwhile, so it goes to the worker in one message.
 */
async function sentTogether<T extends Promise<unknown>[]>(pool: WorkerPool, queue: () => T): Promise<T> {
  const gate = new SharedArrayBuffer(4);
  const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
  await nextTurn();
  const queued = queue();
  openGate(gate);
  await expect(blocker).resolves.toEqual({ opened: true });
  return queued;
}

/**
 * Wait for the end of this event-loop turn, when the pool sends the tasks run in it: what is run
 * next travels in another message.
 */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A pool made for one test and closed after it. */
async function withPool(options: Parameters<typeof createWorkerPool>[0], use: (pool: WorkerPool) => Promise<void>): Promise<void> {
  const pool = createWorkerPool(options);
  try {
    // Tasks run before the workers are up wait and then travel together; these tests are about
    // what happens once they are.
    await pool.ready();
    await use(pool);
  } finally {
    await pool.close();
  }
}

describe('createWorkerPool batches', () => {
  const tasks = [gateTask, echoTask, codedFailureTask, rendezvousTask, batchMatesTask];

  it('sends the tasks waiting for a busy worker to it together once it frees up', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      const waiting = await sentTogether(pool, () => [1, 2, 3, 4].map(() => pool.run(batchMatesTask, {})));
      // All four started in the same turn of the worker: they came in one message.
      await expect(Promise.all(waiting)).resolves.toEqual([{ mates: 4 }, { mates: 4 }, { mates: 4 }, { mates: 4 }]);
    }));

  it('sends the tasks run in one event-loop turn to an idle worker together, at the end of the turn', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      const together = [1, 2, 3].map(() => pool.run(batchMatesTask, {}));
      await expect(Promise.all(together)).resolves.toEqual([{ mates: 3 }, { mates: 3 }, { mates: 3 }]);
      // Run in different turns, they travel apart.
      const first = pool.run(batchMatesTask, {});
      await nextTurn();
      const second = pool.run(batchMatesTask, {});
      await expect(Promise.all([first, second])).resolves.toEqual([{ mates: 1 }, { mates: 1 }]);
    }));

  it('lets a task that waits on I/O run on while its worker takes the next message', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      // Two rendezvous tasks sent one after the other still meet: the first was answered late.
      const first = pool.run(rendezvousTask, { expected: 2, timeoutMs: 10_000 });
      await nextTurn();
      const second = pool.run(rendezvousTask, { expected: 2, timeoutMs: 10_000 });
      await expect(Promise.all([first, second])).resolves.toEqual([{ met: 2 }, { met: 2 }]);
    }));

  it('gives each task of a message its own answer, results and coded errors alike', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      const [first, failing, second] = await sentTogether(pool, () => [
        pool.run(echoTask, 'first'),
        pool.run(codedFailureTask, {}).catch((error: unknown) => error),
        pool.run(echoTask, 'second'),
      ]);
      expect(((await first) as { input: unknown }).input).toBe('first');
      expect(await failing).toMatchObject({ code: 1002, message: 'Failed to decode certificate' });
      expect(((await second) as { input: unknown }).input).toBe('second');
      expect(pool.pending).toBe(0);
    }));

  it('sends every task alone with maxTasksPerMessage 1', async () => {
    await withPool({ size: 1, tasks, maxTasksPerMessage: 1 }, async (pool) => {
      const waiting = await sentTogether(pool, () => [1, 2].map(() => pool.run(batchMatesTask, {})));
      await expect(Promise.all(waiting)).resolves.toEqual([{ mates: 1 }, { mates: 1 }]);
    });
    expect(() => createWorkerPool({ size: 1, tasks, maxTasksPerMessage: 0 })).toThrow(RangeError);
  });

  it('times out a task that waited too long for a worker with a 503, and the pool carries on', () =>
    withPool({ size: 1, tasks, taskTimeoutMs: 1_500 }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      const queued = pool.run(echoTask, 'late');
      await expect(blocker).rejects.toMatchObject({ code: 503, message: 'task test.gate did not finish within 1500 ms' });
      await expect(queued).rejects.toMatchObject({ code: 503, message: 'task test.echo did not finish within 1500 ms' });
      await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after' });
      expect(pool.pending).toBe(0);
    }));

  it('fails the tasks sent with one that timed out with a 503 naming it, and serves the next', () =>
    withPool({ size: 1, tasks, taskTimeoutMs: 2_500 }, async (pool) => {
      const opener = new SharedArrayBuffer(4);
      const never = new SharedArrayBuffer(4);
      const blocker = pool.run(gateTask, { gate: opener, timeoutMs: 20_000 });
      await nextTurn();
      const stuck = pool.run(gateTask, { gate: never, timeoutMs: 20_000 });
      await new Promise((resolve) => setTimeout(resolve, 700));
      const companion = pool.run(echoTask, 'companion');
      openGate(opener);
      await expect(blocker).resolves.toEqual({ opened: true });
      await expect(stuck).rejects.toMatchObject({ code: 503, message: 'task test.gate did not finish within 2500 ms' });
      await expect(companion).rejects.toMatchObject({
        code: 503,
        message: 'task test.echo was stopped with its worker: task test.gate, sent with it, did not finish within 2500 ms',
      });
      await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after' });
    }));
});

describe('createWorkerPool late outcomes', () => {
  const tasks = [gateTask, echoTask, sleepTask, delayedExitTask, uncloneableLaterTask];

  it('answers the quick tasks of a message at once, and a task waiting on I/O when it is done', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      const settledAt: Record<string, number> = {};
      const [slow, quick] = await sentTogether(pool, () => [
        pool.run(sleepTask, { ms: 1_500 }).then((result) => ((settledAt.slow = performance.now()), result)),
        pool.run(echoTask, 'quick').then((result) => ((settledAt.quick = performance.now()), result)),
      ]);
      expect(((await quick) as { input: unknown }).input).toBe('quick');
      // Meanwhile the worker takes new work instead of waiting for the slow task.
      const next = await pool.run(echoTask, 'next');
      expect(settledAt.slow).toBeUndefined();
      await expect(slow).resolves.toMatchObject({ slept: 1_500, threadId: next.threadId });
      expect(settledAt.slow! - settledAt.quick!).toBeGreaterThan(1_000);
      expect(pool.pending).toBe(0);
    }));

  it('fails a late task whose worker exits with a coded 500, and replaces the worker', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      const [dying, quick] = await sentTogether(pool, () => [pool.run(delayedExitTask, { ms: 300 }), pool.run(echoTask, 'quick')]);
      const { threadId: before } = await quick;
      await expect(dying).rejects.toMatchObject({ code: 500, name: 'WorkerCrashedError' });
      expect((await pool.run(echoTask, 'after')).threadId).not.toBe(before);
    }));

  it('fails a late task whose answer cannot cross threads, and the worker carries on', () =>
    withPool({ size: 1, tasks }, async (pool) => {
      const [uncloneable, quick] = await sentTogether(pool, () => [pool.run(uncloneableLaterTask, { ms: 200 }), pool.run(echoTask, 'quick')]);
      const { threadId: before } = (await quick) as { threadId: number };
      await expect(uncloneable).rejects.toMatchObject({ message: expect.stringContaining('could not be cloned') });
      expect((await pool.run(echoTask, 'after')).threadId).toBe(before);
    }));

  it('times out a late task with a 503 and leaves its worker serving', () =>
    withPool({ size: 1, tasks, taskTimeoutMs: 1_500 }, async (pool) => {
      const [slow, quick] = await sentTogether(pool, () => [pool.run(sleepTask, { ms: 4_000 }), pool.run(echoTask, 'quick')]);
      const { threadId: before } = await quick;
      await expect(slow).rejects.toMatchObject({ code: 503, message: 'task test.sleep did not finish within 1500 ms' });
      expect((await pool.run(echoTask, 'after')).threadId).toBe(before);
    }));
});

describe('createWorkerPool close', () => {
  it('refuses new tasks with 503 once closing', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [echoTask] });
    const closed = pool.close();
    await expect(pool.run(echoTask, 1)).rejects.toMatchObject({ code: 503 });
    await closed;
  });

  it('answers the tasks running and waiting when it closes, then stops its workers', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [gateTask, echoTask] });
    await pool.ready();
    const gate = new SharedArrayBuffer(4);
    const running = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    await nextTurn();
    const waiting = pool.run(echoTask, 'waiting');
    const closed = pool.close();
    let closedYet = false;
    void closed.then(() => (closedYet = true));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closedYet).toBe(false);
    openGate(gate);
    await expect(running).resolves.toEqual({ opened: true });
    await expect(waiting).resolves.toMatchObject({ input: 'waiting' });
    await closed;
    expect(pool.pending).toBe(0);
  });

  it('fails what is still running after closeTimeoutMs with 503', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [gateTask], closeTimeoutMs: 300 });
    await pool.ready();
    const gate = new SharedArrayBuffer(4);
    const running = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    await nextTurn();
    await pool.close();
    await expect(running).rejects.toMatchObject({ code: 503, message: 'server is shutting down' });
  });

  it('rejects invalid sizes', () => {
    expect(() => createWorkerPool({ size: 1.5, tasks: [] })).toThrow(RangeError);
    expect(() => createWorkerPool({ size: 1, maxQueue: -1, tasks: [] })).toThrow(RangeError);
    expect(() => createWorkerPool({ size: 1, taskTimeoutMs: 0, tasks: [] })).toThrow(RangeError);
  });
});

describe('createWorkerPool run', () => {
  it('counts tasks waiting for a worker in queued and all accepted ones in pending', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask] }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const running = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      const waiting = [pool.run(echoTask, 1), pool.run(echoTask, 2)];
      expect(pool.pending).toBe(3);
      expect(pool.queued).toBe(2);
      openGate(gate);
      await Promise.all([running, ...waiting]);
      expect([pool.pending, pool.queued]).toEqual([0, 0]);
    }));

  it('fails only the task whose input cannot be cloned', () =>
    withPool({ size: 1, tasks: [echoTask] }, async (pool) => {
      const [bad, good] = await Promise.allSettled([pool.run(echoTask, { callback: () => 1 }), pool.run(echoTask, 'fine')]);
      // Sent together, they fail together: the message could not be cloned, the caller's bug.
      expect(bad).toMatchObject({ status: 'rejected', reason: { name: 'DataCloneError' } });
      expect(good.status === 'fulfilled' || (good.reason as Error).name === 'DataCloneError').toBe(true);
      await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after' });
    }));

  it('fails a task whose result cannot be cloned, and answers the others of its message', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask, uncloneableNowTask] }, async (pool) => {
      const [bad, good] = await sentTogether(pool, () => [pool.run(uncloneableNowTask, {}), pool.run(echoTask, 'fine')]);
      await expect(bad).rejects.toMatchObject({ message: expect.stringContaining('could not be cloned') });
      await expect(good).resolves.toMatchObject({ input: 'fine' });
    }));

  it('takes a waiting task out of the queue when its signal aborts', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask] }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const running = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      const controller = new AbortController();
      const waiting = pool.run(echoTask, 'never', { signal: controller.signal });
      controller.abort(new Error('client went away'));
      await expect(waiting).rejects.toThrow('client went away');
      expect([pool.pending, pool.queued]).toEqual([1, 0]);
      openGate(gate);
      await running;
      await expect(pool.run(echoTask, 'x', { signal: AbortSignal.abort(new Error('already')) })).rejects.toThrow('already');
    }));
});

describe('an idle pool', () => {
  it('does not keep the process alive, and a pending task does', () => {
    const entry = new URL('./index.ts', import.meta.url).href.replace('/src/index.ts', '/dist/index.js');
    const fixtures = new URL('../test-fixtures/test-tasks.mjs', import.meta.url).href;
    const script = `
      const { createWorkerPool } = await import(${JSON.stringify(entry)});
      const { sleepTask } = await import(${JSON.stringify(fixtures)});
      const pool = createWorkerPool({ size: 1, tasks: [sleepTask] });
      const result = await pool.run(sleepTask, { ms: 200 });
      console.log('slept', result.slept);
    `;
    // Without vitest's NODE_OPTIONS (its resolve conditions would point workspace packages at sources).
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000, env });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('slept 200');
    // Exited on its own (no timeout kill): the unclosed pool's idle worker held nothing.
    expect(child.status).toBe(0);
  });
});

describe('createWorkerPool ready', () => {
  it('resolves once its workers can take tasks; tasks run before wait for them and are answered', async () => {
    const pool = createWorkerPool({ size: 2, tasks: [echoTask] });
    try {
      const early = [pool.run(echoTask, 'early 1'), pool.run(echoTask, 'early 2')];
      await pool.ready();
      await expect(Promise.all(early)).resolves.toMatchObject([{ input: 'early 1' }, { input: 'early 2' }]);
      const threads = new Set((await Promise.all([1, 2, 3, 4].map((i) => pool.run(echoTask, i)))).map((result) => result.threadId));
      expect(threads.size).toBeGreaterThanOrEqual(1);
    } finally {
      await pool.close();
    }
  });
});

describe('createWorkerPool init', () => {
  const hooks = new URL('../test-fixtures/init-hooks.mjs', import.meta.url);

  it('runs every hook with its data in each worker, in order, before the worker takes a task', async () => {
    const pool = createWorkerPool({
      size: 2,
      tasks: [initCallsTask],
      init: [
        { module: hooks, data: { first: [1, 2] } },
        { module: hooks.href, data: 'second' },
      ],
    });
    try {
      // Sent before the workers are up: still answered only after the hooks have run.
      const early = pool.run(initCallsTask, {});
      await expect(early).resolves.toMatchObject({ calls: [{ first: [1, 2] }, 'second'] });
      await pool.ready();
      const answers = await Promise.all([1, 2, 3, 4, 5, 6].map(() => pool.run(initCallsTask, {})));
      for (const answer of answers) expect(answer.calls).toEqual([{ first: [1, 2] }, 'second']);
    } finally {
      await pool.close();
    }
  });

  it('fails to start when a hook throws: ready() and the tasks reject naming the module', async () => {
    const errors: unknown[] = [];
    const pool = createWorkerPool({
      size: 1,
      tasks: [echoTask],
      init: [{ module: new URL('../test-fixtures/failing-init.mjs', import.meta.url) }],
      onError: (error) => errors.push(error),
    });
    try {
      const task = pool.run(echoTask, 'never');
      await expect(pool.ready()).rejects.toMatchObject({ name: 'WorkerInitError', message: expect.stringContaining('failing-init.mjs') });
      await expect(task).rejects.toMatchObject({ message: expect.stringContaining('cannot open the key store') });
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await pool.close();
    }
  });

  it('fails to start when a hook module has no initWorker', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [echoTask], init: [{ module: new URL('../test-fixtures/test-tasks.mjs', import.meta.url) }] });
    try {
      await expect(pool.ready()).rejects.toMatchObject({ message: expect.stringContaining('does not export a function named initWorker') });
    } finally {
      await pool.close();
    }
  });
});

describe('pool defaults', () => {
  it('keeps a CPU for the event loop: one worker per CPU but one, at least one', () => {
    expect(defaultWorkerCount()).toBe(Math.max(1, availableParallelism() - 1));
  });

  it('shares 8 tasks per message round over the workers, at least 2 per message', () => {
    expect([1, 2, 3, 4, 8, 16].map(defaultMaxTasksPerMessage)).toEqual([8, 4, 3, 2, 2, 2]);
  });
});

describe('withoutResolveConditions', () => {
  it('drops --conditions and -C in every spelling and keeps other flags', () => {
    expect(
      withoutResolveConditions([
        '--require',
        'x.cjs',
        '--conditions',
        '@certsmith/source',
        '--conditions=development',
        '-C',
        'import',
        '-Cfoo',
        '--enable-source-maps',
      ]),
    ).toEqual(['--require', 'x.cjs', '--enable-source-maps']);
  });
});

describe('withoutEntryPointFlags', () => {
  it('drops the parent\'s script and input type and keeps other flags', () => {
    expect(withoutEntryPointFlags(['--input-type=module', '--no-warnings', '-e', 'console.log(1)', '--print', '1', '--eval=2', '--input-type', 'commonjs'])).toEqual(['--no-warnings']);
  });
});

describe('workerExecArgv', () => {
  it('drops per-process flags a Worker refuses (they already apply to the whole process) and keeps the rest', () => {
    expect(workerExecArgv(['--perf-basic-prof', '--no-warnings', '--max-semi-space-size=4', '--enable-source-maps', '--conditions', 'x'])).toEqual([
      '--no-warnings',
      '--enable-source-maps',
    ]);
  });

  it('keeps failing on flags that are wrong, not merely per-process', () => {
    expect(() => workerExecArgv(['--cpu-prof-dir=/tmp/never'])).toThrow(/must be used with --cpu-prof/);
  });

  it('tries nothing when there are no flags', () => {
    expect(workerExecArgv([])).toEqual([]);
  });

  it('drops a lone per-process flag', () => {
    expect(workerExecArgv(['--trace-gc'])).toEqual([]);
  });
});

describe('createWorkerPool callerThread', () => {
  const hooks = new URL('../test-fixtures/init-hooks.mjs', import.meta.url);

  it('runs waiting tasks on the calling thread while every worker is busy, after its init hooks', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask, initCallsTask], init: [{ module: hooks, data: 'main too' }], callerThread: { maxTasks: 2 } }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      // The first task the caller would take starts its init hooks; until they are done, tasks wait.
      const answers = await Promise.all([1, 2, 3].map((n) => pool.run(echoTask, n)));
      expect(answers.map((answer) => answer.threadId)).toEqual([threadId, threadId, threadId]);
      expect(answers.map((answer) => answer.input)).toEqual([1, 2, 3]);
      await expect(pool.run(initCallsTask, {})).resolves.toMatchObject({ calls: ['main too'], threadId });
      openGate(gate);
      await blocker;
      // With the worker free again, tasks go to it.
      expect((await pool.run(echoTask, 'worker')).threadId).not.toBe(threadId);
    }));

  it('gives the calling thread copies: input and result are cloned, errors keep their code', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask, codedFailureTask], callerThread: { maxTasks: 4 } }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      const input = { list: [1, 2] };
      const [echoed, failed] = await Promise.allSettled([pool.run(echoTask, input), pool.run(codedFailureTask, {})]);
      expect(echoed).toMatchObject({ status: 'fulfilled', value: { input: { list: [1, 2] }, threadId } });
      expect((echoed as PromiseFulfilledResult<{ input: unknown }>).value.input).not.toBe(input);
      expect(failed).toMatchObject({ status: 'rejected', reason: { code: 1002, message: 'Failed to decode certificate' } });
      openGate(gate);
      await blocker;
    }));

  it('runs only the tasks it lists on the calling thread', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask, whoTask], callerThread: { maxTasks: 4, tasks: [echoTask] } }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      const [echoed, who] = [pool.run(echoTask, 'here'), pool.run(whoTask, {})];
      expect((await echoed).threadId).toBe(threadId);
      // Not listed: it waits for the worker.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(pool.queued).toBe(1);
      openGate(gate);
      await blocker;
      expect((await who).threadId).not.toBe(threadId);
      expect(() => createWorkerPool({ size: 1, tasks: [echoTask], callerThread: { maxTasks: 0 } })).toThrow(RangeError);
    }));

  it('never runs a task sent again after a crash on the calling thread', () =>
    withPool({ size: 1, tasks: [exitTask, whoTask, gateTask], callerThread: { maxTasks: 4 } }, async (pool) => {
      // The crash sends both again, each alone, to workers only: the innocent one completes there.
      const [crashing, innocent] = await Promise.allSettled([pool.run(exitTask, {}), pool.run(whoTask, {})]);
      expect(crashing).toMatchObject({ status: 'rejected', reason: { code: 500 } });
      expect(innocent.status).toBe('fulfilled');
      expect((innocent as PromiseFulfilledResult<{ threadId: number }>).value.threadId).not.toBe(threadId);
    }));

  it('never runs tasks on the calling thread by default', () =>
    withPool({ size: 1, tasks: [gateTask, echoTask], taskTimeoutMs: 1_500 }, async (pool) => {
      const gate = new SharedArrayBuffer(4);
      const blocker = pool.run(gateTask, { gate, timeoutMs: 20_000 });
      await nextTurn();
      const waiting = pool.run(echoTask, 'waits');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(pool.queued).toBe(1);
      openGate(gate);
      await blocker;
      expect((await waiting).threadId).not.toBe(threadId);
    }));
});
