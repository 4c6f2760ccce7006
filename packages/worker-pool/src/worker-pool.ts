/**
 * The worker-thread pool: runs {@link TaskDefinition}s on `node:worker_threads`, a {@link WorkerHandle}
 * per thread, with a bounded queue ({@link TaskQueue}), the batching policy (`batching.ts`) and
 * recovery from crashed, stuck and slow workers (`recovery.ts`); or, with `size: 0`, on the calling
 * thread alone (`caller-thread-lane.ts`) behind the same queue, deadlines and close. Why it is our
 * own and not Piscina's: ADR 0001 (docs/adr/0001-worker-pool.md).
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { fromErrorPayload } from '@certsmith/x509-core';
import { EndOfTurn, batchShare, defaultMaxTasksPerMessage } from './batching.js';
import { ServiceUnavailableError, UnknownTaskError } from './errors.js';
import { workerExecArgv } from './exec-argv.js';
import { PooledTask } from './pooled-task.js';
import { DEFAULT_HEARTBEAT_INTERVAL_MS } from './protocol.js';
import type { TaskOutcome, WorkerSetup } from './protocol.js';
import { CallerThreadLane } from './caller-thread-lane.js';
import { Recovery } from './recovery.js';
import { resolveBuiltModule } from './task.js';
import type { TaskDefinition } from './task.js';
import type { RunTaskOptions, TaskRunner } from './task-runner.js';
import { TaskQueue } from './task-queue.js';
import type { WorkerStart } from './worker-handle.js';
import { resolveWorkerInits, workerInitsHeldHere } from './worker-init.js';
import type { WorkerInit } from './worker-init.js';
import { WorkerSet, within } from './worker-set.js';
import { DEFAULT_WORKER_YOUNG_GENERATION_MB, defaultWorkerCount, workerEntryPath, workerEntryUrl } from './worker-defaults.js';
import type { PrestartedWorkers } from './prestarted-workers.js';

export { DEFAULT_WORKER_YOUNG_GENERATION_MB, defaultWorkerCount, workerEntryUrl };

/** Options of {@link createWorkerPool}. */
export interface WorkerPoolOptions {
  /** Every task the pool may run. Names must be unique. */
  tasks: readonly TaskDefinition[];
  /**
   * Per-thread setup of the use cases (the init hook): each worker imports every module and awaits
   * its `initWorker(data)`, in order, before it takes its first task; `data` is cloned once per
   * worker. A hook that fails counts as a worker that cannot start. Default: none.
   */
  init?: readonly WorkerInit[];
  /**
   * Worker threads; default {@link defaultWorkerCount}: the number of CPUs less one, at least one.
   * `0`: no thread at all — every task runs on the calling thread, after the init hooks ran there,
   * `callerThread.maxTasks` at a time (default {@link DEFAULT_THREADLESS_TASKS_PER_TURN}), with
   * admission, deadlines, signals and `close()` as with workers (the layout of `certsmith serve`'s
   * worker processes, ADR 0004).
   */
  size?: number;
  /**
   * Tasks allowed to wait for a free worker; default `max(size, 1) * 64`. `0` means no waiting at
   * all (a pool of size 0 then takes one task at a time: the calling thread counts as one lane).
   */
  maxQueue?: number;
  /** Value of `Retry-After` (seconds) when the queue is full; default 1. */
  retryAfterSeconds?: number;
  /**
   * Longest a task may wait and run before it is abandoned with a 503 (a worker still running it is
   * stopped and replaced); default 120 000 ms. Checked on a timer of at most a second (an eighth of
   * the limit), so a task fails up to that much later. A safety net: CFSSL has no limit at all.
   */
  taskTimeoutMs?: number;
  /** How long `close()` waits for accepted tasks before stopping the workers; default 10 000 ms. */
  closeTimeoutMs?: number;
  /** Receives pool-level failures (a worker that crashed, went silent or cannot start); default: ignored. */
  onError?: (error: unknown) => void;
  /** V8 young generation limit per worker (MiB); default {@link DEFAULT_WORKER_YOUNG_GENERATION_MB}. */
  maxYoungGenerationSizeMb?: number;
  /**
   * Most waiting tasks one message to a worker carries; default `defaultMaxTasksPerMessage(size)`
   * (8 shared by the workers, at least 2); `1` sends every task alone. When a worker frees up it
   * takes its share of the waiting tasks (all of them split over the free workers, at most this
   * many) and starts them together. A task still waiting on I/O one turn later (an AIA fetch) is
   * answered on its own when it settles, so it never holds the others of its message.
   */
  maxTasksPerMessage?: number;
  /**
   * How long a worker that owes tasks may stay silent before it counts as stuck; default
   * {@link DEFAULT_MESSAGE_TIMEOUT_MS} (at least three heartbeats). Every worker posts a heartbeat
   * from a timer every `heartbeatIntervalMs`; one not heard from has an event loop that does not run
   * (a native block; nothing certsmith runs computes for seconds without an await). The stuck worker
   * is replaced and its tasks go to another worker once (a second time they fail with 503). A task
   * that is merely long (RSA-8192 primes, a slow AIA server) on a worker that keeps its heartbeat is
   * left alone. See `docs/performance.md` ("A stuck worker").
   */
  messageTimeoutMs?: number;
  /** Interval of the workers' heartbeats, ms; default 2 000 (tests shorten it). */
  heartbeatIntervalMs?: number;
  /**
   * Let the calling thread (the server's event loop) run waiting tasks too while every worker is
   * busy; default: never. See {@link CallerThreadOptions}. With `size: 0` the calling thread runs
   * every task whatever this says; `maxTasks` is then how many it runs per turn, and `tasks` must
   * not be given (a task it could not run would never run).
   */
  callerThread?: CallerThreadOptions;
  /**
   * Threads started earlier with the pool's settings (`prestartWorkers`): the pool takes them
   * instead of starting its own (as many as it needs; the others are stopped).
   */
  prestarted?: PrestartedWorkers;
  /**
   * The module every worker thread starts on (a file path or `file:` URL of built JavaScript);
   * default {@link workerEntryUrl}. A bundle of the pool's worker code and the task and init modules
   * gives its own: it registers its modules (`registerBundledModules`) and then calls
   * `runWorkerThread` (`@certsmith/worker-pool/worker-thread`). Prestarted threads are taken only
   * when they were started on the same entry.
   */
  workerEntry?: string | URL;
}

/**
 * The calling thread as an extra lane ({@link WorkerPoolOptions.callerThread}): while every worker
 * is busy and tasks wait, it runs up to `maxTasks` of them at a time at the end of its turn, with
 * worker semantics (input and result cloned, errors as payloads), after running the init hooks
 * once. A task that crashes or blocks its thread takes the whole process with it there: list only
 * tasks that cannot.
 */
export interface CallerThreadOptions {
  /** Most tasks the calling thread runs at a time (a positive integer). */
  maxTasks: number;
  /** The tasks it may run; default every task of the pool. */
  tasks?: readonly TaskDefinition[];
}

/**
 * Tasks a pool of size 0 runs per event-loop turn by default (`callerThread.maxTasks`): between two
 * such batches the thread reads and answers its I/O, so the bound keeps a turn to a few ms of tasks
 * (32 bundles or ECDSA newcerts: 2–4 ms). Smaller batches cost CPU per request — each turn has its
 * own overhead: with `certsmith serve --workers 0` at 64 clients, 8 per turn took 0.180 ms of CPU
 * per bundle, 16 took 0.154–0.163, 32 and 64 0.145 (docs/performance.md, "Thread-less pool pass").
 */
export const DEFAULT_THREADLESS_TASKS_PER_TURN = 32;

/** Default {@link WorkerPoolOptions.messageTimeoutMs}. */
export const DEFAULT_MESSAGE_TIMEOUT_MS = 15_000;

/** Longest `close()` waits for the pool's first workers to finish starting before stopping them. */
const STARTING_WORKERS_WAIT_MS = 5_000;

/** A running pool. */
export interface WorkerPool extends TaskRunner {
  /** Number of worker threads (0: every task runs on the calling thread). */
  readonly size: number;
  /** Maximum number of waiting tasks. */
  readonly maxQueue: number;
  /** Tasks accepted and not yet settled (running + waiting). */
  readonly pending: number;
  /** Tasks waiting for a worker now. */
  readonly queued: number;
  /** Names of the tasks this pool can run. */
  readonly taskNames: readonly string[];
  /**
   * Resolves once every worker the pool started with can take tasks (its init hooks have run),
   * rejects when a worker cannot start; with size 0, once the init hooks ran on the calling thread
   * (rejects with their `WorkerInitError`). Tasks run before that wait in the queue.
   */
  ready(): Promise<void>;
}

/**
 * Start a pool of `size` workers for `tasks` (none with `size: 0`: see {@link WorkerPoolOptions.size}).
 * Fails fast when the built worker entry is missing (run `npm run build` first: workers cannot run
 * TypeScript; a pool of size 0 still imports the built task modules).
 */
export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  const size = options.size ?? defaultWorkerCount();
  if (!Number.isInteger(size) || size < 0) throw new RangeError(`worker pool size must be a non-negative integer, got ${size}`);
  // No worker thread: the calling thread is the pool's only lane, and counts as one for the defaults.
  const threadless = size === 0;
  const lanes = Math.max(size, 1);
  const maxQueue = options.maxQueue ?? lanes * 64;
  if (!Number.isInteger(maxQueue) || maxQueue < 0) throw new RangeError(`worker pool maxQueue must be a non-negative integer, got ${maxQueue}`);
  const maxTasksPerMessage = options.maxTasksPerMessage ?? defaultMaxTasksPerMessage(lanes);
  positiveInteger('maxTasksPerMessage', maxTasksPerMessage);
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const messageTimeoutMs = options.messageTimeoutMs ?? DEFAULT_MESSAGE_TIMEOUT_MS;
  const taskTimeoutMs = options.taskTimeoutMs ?? 120_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  for (const [name, value] of Object.entries({ heartbeatIntervalMs, messageTimeoutMs, taskTimeoutMs })) {
    if (!(value > 0)) throw new RangeError(`worker pool ${name} must be positive, got ${value}`);
  }
  // Checked before any thread starts: a pool that throws here leaves none behind.
  const callerThread = threadless ? { maxTasks: DEFAULT_THREADLESS_TASKS_PER_TURN, ...options.callerThread } : options.callerThread;
  if (callerThread !== undefined) positiveInteger('callerThread.maxTasks', callerThread.maxTasks);
  if (threadless && callerThread?.tasks !== undefined) {
    throw new TypeError('worker pool callerThread.tasks cannot be given with size 0: the calling thread runs every task');
  }
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;
  const onError = options.onError ?? (() => undefined);

  const registered = new Map<string, TaskDefinition>();
  const taskModules: Record<string, string> = {};
  for (const task of options.tasks) {
    const existing = registered.get(task.name);
    if (existing !== undefined && existing !== task) throw new TypeError(`two different tasks are named "${task.name}"`);
    registered.set(task.name, task);
    taskModules[task.name] = resolveBuiltModule(task.module);
  }
  const filename = workerEntryPath(options.workerEntry);
  if (!existsSync(filename)) throw new Error(`worker entry ${filename} does not exist; build the workspace first (npm run build)`);
  const setup: WorkerSetup = { taskModules, inits: resolveWorkerInits(options.init), heartbeatIntervalMs };
  const start: WorkerStart = {
    filename,
    setup,
    execArgv: workerExecArgv(process.execArgv),
    maxYoungGenerationSizeMb: options.maxYoungGenerationSizeMb ?? DEFAULT_WORKER_YOUNG_GENERATION_MB,
  };

  const queue = new TaskQueue(lanes + maxQueue);
  const endOfTurn = new EndOfTurn(dispatch);
  let closing: Promise<void> | null = null;
  let lastTaskId = 0;
  /** Set when a pool of size 0 cannot run its init hooks: every task fails with it. */
  let laneFailure: Error | null = null;
  /** Resolves `close()`'s wait once no task is pending. */
  let drained: (() => void) | null = null;

  const workers = new WorkerSet(size, start, {
    free: () => dispatch(),
    answered(items, outcomes) {
      for (let index = 0; index < items.length; index += 1) {
        const item = items[index]!;
        const outcome = outcomes[index];
        if (outcome !== null && outcome !== undefined) settle(item, outcome);
        // Still running (waiting on I/O or libuv's thread pool): its outcome comes on its own.
        else if (item.state === 'sent') item.state = 'late';
      }
    },
    late: (item, outcome) => settle(item, outcome),
    exited: (handle, owed, cause) => recovery.workerExited(handle, owed, cause),
    startFailed(error, owed) {
      for (const item of owed) fail(item, error);
      failWaiting(error);
    },
    report: onError,
  }, options.prestarted);
  const recovery = new Recovery({
    retryAfterSeconds,
    taskTimeoutMs,
    closing: () => closing !== null,
    fail,
    requeue(items) {
      for (const item of items) {
        item.state = 'waiting';
        item.owner = null;
      }
      queue.unshift(items);
      dispatch();
    },
    retire: (handle) => workers.retire(handle),
    report: onError,
  });
  const callerMayRun = callerThread?.tasks === undefined ? null : new Set(callerThread.tasks.map((task) => task.name));
  /**
   * Whether the calling thread may run `item`: a listed task, and never one sent again after a
   * worker crashed or went silent with it — it may be the task that did it, and there it would take
   * the whole process along.
   */
  const mayRunOnCaller = (item: PooledTask): boolean => !item.resent && (callerMayRun === null || callerMayRun.has(item.name));
  // The calling thread holds the task definitions it was given; with every init hook's own function
  // too, it runs both as they are instead of importing their modules by URL (WorkerInit.initWorker).
  const heldInits = callerThread === undefined ? null : workerInitsHeldHere(options.init);
  const callerLane =
    callerThread !== undefined
      ? new CallerThreadLane(taskModules, heldInits ?? setup.inits, {
          settled: (item, outcome) => settle(item, outcome),
          free: () => dispatch(),
          failed(error) {
            onError(error);
            // With workers, they carry on without the lane; without, nothing could ever run a task.
            if (!threadless) return;
            laneFailure = error instanceof Error ? error : new Error(String(error));
            failWaiting(laneFailure);
          },
        }, heldInits === null ? undefined : registered)
      : null;
  // A pool of size 0 is ready when its calling thread is: the init hooks run now, not on demand.
  const ready = threadless ? callerLane!.start() : workers.ready;
  // Nobody may ever ask: an unobserved rejection must not end the process.
  ready.catch(() => undefined);

  // One timer watches deadlines and silent workers.
  const silenceMs = Math.max(messageTimeoutMs, 3 * heartbeatIntervalMs);
  const monitor = setInterval(
    () => {
      const now = performance.now();
      expireTasks(now);
      recovery.checkSilence(workers.workers(), now, silenceMs, messageTimeoutMs, 3 * heartbeatIntervalMs);
    },
    Math.max(10, Math.min(heartbeatIntervalMs, 1_000, taskTimeoutMs / 8)),
  );
  monitor.unref();

  /** Tasks whose deadline has passed fail with 503; waiting ones are oldest first. */
  function expireTasks(now: number): void {
    for (const item of queue) {
      if (item.deadline > now) break;
      queue.remove(item);
      recovery.timeOut(item);
    }
    const owners: Iterable<{ readonly owed: Iterable<PooledTask> }> = callerLane === null ? workers.owners() : [...workers.owners(), callerLane];
    for (const owner of owners) {
      for (const item of [...owner.owed]) if (item.deadline <= now) recovery.timeOut(item);
    }
  }

  /** Send waiting tasks to free workers, each its share (see `batching.ts`). */
  function dispatch(): void {
    while (queue.length > 0) {
      const free = workers.free();
      if (free.length === 0) {
        // Every worker is busy: the calling thread takes a few itself (docs/performance.md, "Worker
        // pool pass": on 2 cores the hand-offs leave part of a core idle).
        if (callerLane !== null && (threadless || workers.started) && callerLane.available()) {
          const items = queue.take(callerThread!.maxTasks, mayRunOnCaller);
          if (items.length > 0) callerLane.take(items);
        }
        return;
      }
      const items = queue.take(batchShare(queue.length, free.length, maxTasksPerMessage));
      if (items.length === 0) return;
      try {
        free[0]!.send(items);
      } catch (error) {
        // An input that cannot be cloned: a caller's bug. Only these tasks fail.
        for (const item of items) fail(item, error);
      }
    }
  }

  function settle(item: PooledTask, outcome: TaskOutcome): void {
    if (!finish(item)) return;
    if (outcome.ok) return item.resolve(outcome.result);
    // The task's error rebuilt on this thread: same `code`, `name` and `message`.
    const error = fromErrorPayload(outcome.error);
    if (outcome.stack !== undefined) error.stack = outcome.stack;
    item.reject(error);
  }

  function fail(item: PooledTask, error: unknown): void {
    if (finish(item)) item.reject(error);
  }

  /** Fail every waiting task with `error`, and forget it (no lane may take it later). */
  function failWaiting(error: unknown): void {
    for (const item of [...queue]) {
      queue.remove(item);
      fail(item, error);
    }
  }

  function finish(item: PooledTask): boolean {
    if (item.state === 'settled') return false;
    if (item.owner !== null) item.owner.owed.delete(item);
    item.state = 'settled';
    item.owner = null;
    queue.release();
    if (queue.pending === 0) {
      workers.reference(false);
      drained?.();
    }
    return true;
  }

  function enqueue<TOutput>(task: TaskDefinition, input: unknown, signal: AbortSignal | undefined): Promise<TOutput> {
    if (!queue.admit()) throw new ServiceUnavailableError('server is busy: the worker queue is full, retry later', retryAfterSeconds);
    workers.reference(true);
    lastTaskId += 1;
    let item!: PooledTask;
    const result = new Promise<TOutput>((resolve, reject) => {
      item = new PooledTask(lastTaskId, task.name, input, taskTimeoutMs, performance.now(), resolve as (result: unknown) => void, reject);
    });
    queue.push(item);
    endOfTurn.schedule();
    if (signal !== undefined) abortWith(item, signal, result);
    return result;
  }

  /**
   * A caller's signal: a task still waiting leaves the queue; one already sent is answered at once
   * with the signal's reason and its outcome is dropped when it comes (its worker is not stopped:
   * that would fail the tasks sent with it).
   */
  function abortWith(item: PooledTask, signal: AbortSignal, outcome: Promise<unknown>): void {
    const abort = (): void => {
      if (item.state === 'waiting') queue.remove(item);
      fail(item, signal.reason);
    };
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    const forget = (): void => signal.removeEventListener('abort', abort);
    outcome.then(forget, forget);
  }

  return {
    size,
    maxQueue,
    get pending() {
      return queue.pending;
    },
    get queued() {
      return queue.length;
    },
    taskNames: [...registered.keys()],
    ready: () => ready,
    run<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput, runOptions?: RunTaskOptions): Promise<TOutput> {
      try {
        if (registered.get(task.name) === undefined) throw new UnknownTaskError(task.name, [...registered.keys()]);
        if (closing !== null) throw new ServiceUnavailableError('server is shutting down', retryAfterSeconds);
        if (workers.startFailure !== null) throw workers.startFailure;
        if (laneFailure !== null) throw laneFailure;
        return enqueue<TOutput>(task, input, runOptions?.signal);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    close() {
      closing ??= (async () => {
        // Accepted tasks (running and waiting) are answered first, as long as closeTimeoutMs allows.
        if (queue.pending > 0) await within(new Promise<void>((resolve) => (drained = resolve)), closeTimeoutMs);
        clearInterval(monitor);
        const shuttingDown = new ServiceUnavailableError('server is shutting down', retryAfterSeconds);
        failWaiting(shuttingDown);
        // A task still running on the calling thread cannot be stopped; its outcome is dropped.
        if (callerLane !== null) for (const item of [...callerLane.owed]) fail(item, shuttingDown);
        // What the workers still owe fails as they exit (Recovery: the pool is closing).
        await workers.stop(STARTING_WORKERS_WAIT_MS);
      })();
      return closing;
    },
  };
}

function positiveInteger(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`worker pool ${name} must be a positive integer, got ${value}`);
}
