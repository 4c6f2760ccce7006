/**
 * A Piscina worker-thread pool that runs {@link TaskDefinition}s, with a bounded queue: when every
 * worker is busy and `maxQueue` tasks already wait, `run` fails at once with
 * {@link ServiceUnavailableError} (HTTP 503 + `Retry-After`) instead of letting latency grow without
 * bound. CFSSL runs everything on goroutines and has no such limit.
 *
 * Tasks that wait go to the next free worker together, several in one message (see
 * {@link WorkerPoolOptions.maxTasksPerMessage}): a thread hop costs ≈50–150 µs of CPU (waking a
 * sleeping thread is a system call on both sides, plus Piscina's bookkeeping), as much as a whole
 * bundle, and under load it was paid once per request. An idle pool sends the tasks of one
 * event-loop turn together at the end of that turn, so a lone request waits only microseconds.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { fromErrorPayload } from '@certsmith/x509-core';
import { Piscina } from 'piscina';
import { ServiceUnavailableError, WorkerCrashedError } from './errors.js';
import { UnknownTaskError, resolveBuiltModule, resolveWorkerInits } from '@certsmith/worker-pool';
import type { TaskDefinition, RunTaskOptions, TaskRunner, WorkerInit } from '@certsmith/worker-pool';
import { WORKER_HEARTBEAT, WORKER_HEARTBEAT_INTERVAL_MS, isDirectBatchAnswer, isLateOutcomePortAnnouncement } from './worker-protocol.js';
import type { DirectBatchAnswer, DirectBatchRequest, LateOutcome, TaskOutcome, TaskRequest, WorkerSetup } from './worker-protocol.js';

/** Options of {@link createWorkerPool}. */
export interface WorkerPoolOptions {
  /** Every task the pool may run. Names must be unique. */
  tasks: readonly TaskDefinition[];
  /** Worker threads; default {@link defaultWorkerCount}: the number of CPUs less one, at least one. */
  size?: number;
  /** Tasks allowed to wait for a free worker; default `size * 64`. `0` means no waiting at all. */
  maxQueue?: number;
  /** Value of `Retry-After` (seconds) when the queue is full; default 1. */
  retryAfterSeconds?: number;
  /**
   * Longest a task may wait and run before it is abandoned with a 503 (a running task's worker is
   * terminated and replaced); default 120 000 ms. A safety net: CFSSL has no limit at all.
   */
  taskTimeoutMs?: number;
  /** How long `close()` waits for running tasks before terminating workers; default 10 000 ms. */
  closeTimeoutMs?: number;
  /** Receives pool-level failures (a worker that cannot start); default: ignored. */
  onError?: (error: unknown) => void;
  /** V8 young generation limit per worker (MiB); default {@link DEFAULT_WORKER_YOUNG_GENERATION_MB}. */
  maxYoungGenerationSizeMb?: number;
  /**
   * Per-thread setup of the use cases (the init hook): each worker imports every module and awaits
   * its `initWorker(data)`, in order, before it takes its first task; `data` is cloned once per
   * worker. A hook that fails counts as a worker that cannot start. Default: none.
   */
  init?: readonly WorkerInit[];
  /**
   * Most waiting tasks one message to a worker carries; default {@link defaultMaxTasksPerMessage}
   * (8 shared by the workers, at least 2), `1` sends every task alone. When a worker frees up, it
   * takes its share of the waiting tasks (all of them split over the free workers, at most this
   * many). The worker starts them together; each task's answer waits for the slowest of its
   * message (a few hundred microseconds for CPU-bound tasks; a bundle that chases AIA holds its
   * companions until its fetch ends, as it held its whole worker before).
   */
  maxTasksPerMessage?: number;
  /**
   * How long a message may stay unanswered while some worker has gone silent before that worker
   * counts as stuck; default {@link DEFAULT_MESSAGE_TIMEOUT_MS}. Every worker posts a heartbeat from
   * a timer every `heartbeatIntervalMs`; one not heard from for three intervals has an event loop
   * that does not run (a native block; nothing certsmith runs computes for seconds without an
   * await). The stuck worker is replaced and the tasks of the unanswered message go to another
   * worker once (a second time they fail with 503). A message that is merely long (RSA-8192
   * primes, a slow AIA server) while every worker keeps its heartbeat is left alone. See
   * `docs/performance.md` ("A stuck worker").
   */
  messageTimeoutMs?: number;
  /** Interval of the workers' heartbeats, ms; default {@link WORKER_HEARTBEAT_INTERVAL_MS} (tests shorten it). */
  heartbeatIntervalMs?: number;
}

/** Default {@link WorkerPoolOptions.messageTimeoutMs}. */
export const DEFAULT_MESSAGE_TIMEOUT_MS = 15_000;

/**
 * Tasks the default message limit aims to keep in the messages of all workers together; see
 * {@link defaultMaxTasksPerMessage}.
 */
export const DEFAULT_MAX_TASKS_PER_MESSAGE = 8;

/**
 * Default {@link WorkerPoolOptions.maxTasksPerMessage} for a pool of `size` workers:
 * {@link DEFAULT_MAX_TASKS_PER_MESSAGE} shared by the workers, at least 2. A worker answers a message
 * once all its tasks are done, so one message must not take every waiting task while another
 * worker is about to free up: newcert at 16 clients, measured side by side on 2 cores, did best with
 * messages of 8 for one worker and of 4 for two (8 left the second worker idle; 2–3 cost more
 * thread wake-ups than they saved).
 */
export function defaultMaxTasksPerMessage(size: number): number {
  return Math.max(2, Math.ceil(DEFAULT_MAX_TASKS_PER_MESSAGE / size));
}

/**
 * Default {@link WorkerPoolOptions.size}: one worker per CPU but one, at least one. The event loop
 * needs a core of its own (it parses and answers every request, and hands work to the workers);
 * with as many workers as CPUs the three busy threads of a 2-core machine contended for two cores:
 * newcert at 16 clients took ≈10% more CPU per request with two workers than with one, and bundle
 * ≈10% more, for no more requests per second, and each worker holds its own trust data.
 */
export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism() - 1);
}


/** Default young generation limit of each worker thread, MiB (semi-spaces of 4 MiB). */
export const DEFAULT_WORKER_YOUNG_GENERATION_MB = 12;

/** A running pool. */
export interface WorkerPool extends TaskRunner {
  /** Number of worker threads. */
  readonly size: number;
  /** Maximum number of waiting tasks. */
  readonly maxQueue: number;
  /** Tasks accepted and not yet settled (running + waiting). */
  readonly pending: number;
  /** Names of the tasks this pool can run. */
  readonly taskNames: readonly string[];
  /**
   * Resolves once every worker the pool started with can take tasks (it has announced its port),
   * rejects when a worker cannot start. Tasks run before that wait in the queue, and those that
   * arrive together may travel to the first worker together.
   */
  ready(): Promise<void>;
}

/**
 * Location of the worker entry. Always the built `dist/worker.js`: under vitest this module is
 * `src/worker-pool.ts`, and {@link resolveBuiltModule} maps the sibling `src/worker.ts` to it.
 */
export function workerEntryUrl(): string {
  return resolveBuiltModule(new URL(import.meta.url.endsWith('.ts') ? './worker.ts' : './worker.js', import.meta.url).href);
}

/**
 * Node flags for workers: the parent's, minus `--conditions`/`-C`. Workers run the built `dist/`
 * files; a parent started with the `@certsmith/source` condition (vitest does this) would otherwise
 * make workers resolve workspace packages to TypeScript sources, which Node 20 cannot load.
 */
export function withoutResolveConditions(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const arg = execArgv[i]!;
    if (arg === '--conditions' || arg === '-C') i += 1;
    else if (!arg.startsWith('--conditions=') && !(arg.startsWith('-C') && arg.length > 2)) kept.push(arg);
  }
  return kept;
}

/**
 * Node flags a worker thread can take: {@link withoutResolveConditions}, minus the per-process flags
 * Node refuses in a Worker's `execArgv` (`--perf-basic-prof`, `--max-semi-space-size`, `--trace-gc`,
 * `--v8-pool-size`…). Those already apply to the whole process, workers included; passed again they
 * would make every worker fail to start (`ERR_WORKER_INVALID_EXEC_ARGV`), so `node
 * --perf-basic-prof certsmith serve` could not serve. Node has no API that lists them: the list is
 * tried once on a Worker that is stopped at once, and the flags its error names are dropped. Most
 * servers run with no flags, and then nothing is tried.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const kept = withoutResolveConditions(execArgv);
  if (kept.length === 0) return kept;
  // The answer depends on the flags only: probe once per distinct list (tests create many pools).
  const key = JSON.stringify(kept);
  let accepted = acceptedExecArgv.get(key);
  if (accepted === undefined) {
    accepted = probeWorkerExecArgv(kept);
    acceptedExecArgv.set(key, accepted);
  }
  return [...accepted];
}

/** {@link workerExecArgv}'s answers, by flag list. */
const acceptedExecArgv = new Map<string, readonly string[]>();

function probeWorkerExecArgv(kept: string[]): string[] {
  try {
    const probe = new Worker('', { eval: true, execArgv: kept, stdout: true, stderr: true });
    void probe.terminate();
    return kept;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    // Node's text: `Initiated Worker with invalid execArgv flags: --a, --b`.
    const listed = /flags: (.*)$/.exec((error as Error).message)?.[1]?.split(', ') ?? [];
    // Anything else in the text (`--cpu-prof-dir must be used with --cpu-prof`) is a real mistake.
    if (listed.length === 0 || !listed.every((flag) => kept.includes(flag))) throw error;
    const refused = new Set(listed);
    return kept.filter((arg) => !refused.has(arg));
  }
}

/**
 * Start a pool of `size` workers for `tasks`. Fails fast when the built worker entry is missing
 * (run `npm run build` first: workers cannot run TypeScript).
 */
export function createWorkerPool(options: WorkerPoolOptions): WorkerPool {
  const size = options.size ?? defaultWorkerCount();
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`worker pool size must be a positive integer, got ${size}`);
  const maxQueue = options.maxQueue ?? size * 64;
  if (!Number.isInteger(maxQueue) || maxQueue < 0) {
    throw new RangeError(`worker pool maxQueue must be a non-negative integer, got ${maxQueue}`);
  }
  const retryAfterSeconds = options.retryAfterSeconds ?? 1;

  const taskModules: Record<string, string> = {};
  const registered = new Map<string, TaskDefinition>();
  for (const task of options.tasks) {
    const existing = registered.get(task.name);
    if (existing !== undefined && existing !== task) throw new TypeError(`two different tasks are named "${task.name}"`);
    registered.set(task.name, task);
    taskModules[task.name] = resolveBuiltModule(task.module);
  }

  const entry = workerEntryUrl();
  const filename = fileURLToPath(entry);
  if (!existsSync(filename)) {
    throw new Error(`worker entry ${filename} does not exist; build the workspace first (npm run build)`);
  }
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? WORKER_HEARTBEAT_INTERVAL_MS;
  if (!(heartbeatIntervalMs > 0)) throw new RangeError(`worker pool heartbeatIntervalMs must be positive, got ${heartbeatIntervalMs}`);
  const workerData: WorkerSetup = {
    taskModules,
    heartbeatIntervalMs,
    inits: resolveWorkerInits(options.init),
  };
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const piscina = new Piscina({
    filename,
    minThreads: size,
    maxThreads: size,
    // Admission is decided below, synchronously and exactly; Piscina's own queue limit also counts
    // workers that are still starting, which would make the limit depend on timing.
    maxQueue: Infinity,
    closeTimeout: closeTimeoutMs,
    workerData,
    // Tasks reach workers as plain messages. With Piscina's default ('sync': an idle worker parks in
    // Atomics.wait and drains its port itself) a task now and then was never picked up under
    // sustained load (newcert at c=16: one in ~10,000 stuck until the task timeout, and with it
    // the worker); 'disabled' never lost one in the same runs, costs no measurable CPU, and lets an
    // idle worker's event loop run, which the key pool needs to refill between tasks.
    atomics: 'disabled',
    // Piscina's run/wait-time histograms are not exported anywhere; recording them is wasted work.
    recordTiming: false,
    execArgv: workerExecArgv(process.execArgv),
    // A small young generation: tasks make short-lived garbage, and loading the trust data makes a
    // lot of it at once; V8's default (up to 16 MiB per semi-space) would keep ~20 MB more RSS per
    // worker committed for no measurable speed-up (scavenges of a few MiB are sub-millisecond).
    resourceLimits: { maxYoungGenerationSizeMb: options.maxYoungGenerationSizeMb ?? DEFAULT_WORKER_YOUNG_GENERATION_MB },
  });
  // When workers fail while bootstrapping (a broken build, a task module that cannot be resolved),
  // Piscina rejects one task, stops respawning and leaves later tasks waiting forever. Until some task
  // has completed, treat a pool error as that case and fail new tasks at once.
  let startupFailure: unknown = null;
  let workersProven = false;
  piscina.on('error', (error: unknown) => {
    if (!workersProven) {
      startupFailure = error;
      markFailed(error);
      // Tasks waiting for a worker that cannot start would wait for their timeout.
      for (const item of waiting.take(waiting.length)) fail(item, error);
    }
    options.onError?.(error);
  });
  const taskTimeoutMs = options.taskTimeoutMs ?? 120_000;
  const maxTasksPerMessage = options.maxTasksPerMessage ?? defaultMaxTasksPerMessage(size);
  if (!Number.isInteger(maxTasksPerMessage) || maxTasksPerMessage < 1) {
    throw new RangeError(`worker pool maxTasksPerMessage must be a positive integer, got ${maxTasksPerMessage}`);
  }

  let pending = 0;
  let closing: Promise<void> | null = null;
  /** Tasks waiting for a free worker, oldest first. */
  const waiting = new TaskQueue();
  const messageTimeoutMs = options.messageTimeoutMs ?? DEFAULT_MESSAGE_TIMEOUT_MS;
  if (!(messageTimeoutMs > 0)) throw new RangeError(`worker pool messageTimeoutMs must be positive, got ${messageTimeoutMs}`);
  let lastTaskId = 0;
  /**
   * Tasks a worker owes an answer for (sent to it, or answered late), by worker thread. No map or
   * set keyed by task: see {@link OwedTasks}.
   */
  const lateByWorker = new Map<number, OwedTasks>();
  /** Each worker's late-outcome port, by thread id: referenced (keeps the process up) while it owes outcomes. */
  const latePorts = new Map<number, MessagePort>();

  /** When each worker was last heard from (any message on its late-outcome port, heartbeats included). */
  const lastHeard = new Map<number, number>();
  // Three missed heartbeats: see messageTimeoutMs.
  const silenceMs = 3 * heartbeatIntervalMs;

  // Each worker announces the port its late outcomes come back on (see worker.ts).
  piscina.on('message', (message: unknown) => {
    if (isLateOutcomePortAnnouncement(message)) watchLateOutcomes(message.threadId, message.port);
  });
  // A worker is gone (crash, timeout, shutdown): what it still owed will never come. Counted on the
  // thread's 'exit', which Piscina handles first (it listened first): a task retried at once is not
  // sent to the thread that is going away, as it could be on the port's 'close'.
  // Workers that finished starting (Piscina's 'workerCreate' comes once a worker is ready).
  let started = 0;
  let allStarted: () => void = () => undefined;
  const initialWorkersStarted = new Promise<void>((resolve) => (allStarted = resolve));
  piscina.on('workerCreate', (created: { id: number }) => {
    started += 1;
    if (started >= size) allStarted();
    const worker = created.id;
    const thread = piscina.threads.find((candidate) => candidate.threadId === worker);
    thread?.once('exit', () => {
      const owed = lateByWorker.get(worker);
      lateByWorker.delete(worker);
      outstanding.delete(worker);
      lastHeard.delete(worker);
      latePorts.get(worker)?.close();
      latePorts.delete(worker);
      if (stoppedSilent.delete(worker)) resendOnce(owed ?? []);
      else failOrRetryAfterExit(owed ?? [], new Error(`worker thread ${worker} exited`));
    });
  });

  /** Whether a task a worker owed may be sent to another worker (once). */
  function mayResend(item: PooledTask): boolean {
    return !item.resent && closing === null && !item.timedOut;
  }

  /** Put a task that a worker owed back at the front of the queue, marked as sent once already. */
  function requeue(item: PooledTask, resend: PooledTask[]): void {
    item.resent = true;
    item.state = 'waiting';
    item.direct = false;
    item.cancellation = null;
    resend.push(item);
  }

  /** Send tasks again, once, ahead of the queue; those already sent twice fail with 503. */
  function resendOnce(items: Iterable<PooledTask>): void {
    const resend: PooledTask[] = [];
    for (const item of items) {
      if (item.state === 'settled') continue;
      if (mayResend(item)) requeue(item, resend);
      else fail(item, new ServiceUnavailableError(`task ${item.name} was sent to two workers that both stopped answering; retry later`, retryAfterSeconds));
    }
    waiting.unshift(resend);
    dispatch();
  }

  /**
   * A worker exited while it owed tasks. When it owed one, that task is the one that stopped it: it
   * fails (see {@link lostTaskError}). When it owed several (a message's tasks travel together), the
   * pool cannot tell which one stopped it, so each is sent again once, alone: the innocent ones
   * complete, the guilty one stops a second worker and then fails. Tasks stopped with a worker on
   * purpose (a task timeout, shutdown) fail as before.
   */
  function failOrRetryAfterExit(owed: Iterable<PooledTask>, error: Error): void {
    const open = [...owed].filter((item) => item.state !== 'settled');
    const crashed = open.length > 1 && open.every((item) => mayResend(item) && item.cancellation?.stoppedBy === undefined);
    if (!crashed) {
      for (const item of open) fail(item, lostTaskError(item, error));
      return;
    }
    options.onError?.(new WorkerCrashedError(open.map((item) => item.name).join(', '), { cause: error }));
    const resend: PooledTask[] = [];
    for (const item of open) {
      requeue(item, resend);
      item.alone = true;
    }
    waiting.unshift(resend);
    dispatch();
  }

  /**
   * Stop a worker that has gone silent and send what it owed as late outcomes again once it has
   * exited (sent earlier, Piscina could still hand them to the exiting thread). It is forgotten
   * until heard from again: a thread blocked in native code never exits, and must not make every
   * later long message look stuck.
   */
  const stoppedSilent = new Set<number>();
  function stopSilentWorker(worker: number): void {
    if (stoppedSilent.has(worker)) return;
    stoppedSilent.add(worker);
    lastHeard.delete(worker);
    void piscina.threads.find((thread) => thread.threadId === worker)?.terminate();
    // Such a thread may never exit: then send its tasks on after a while anyway (if Piscina hands
    // them to that thread, the message watchdog removes it).
    setTimeout(() => {
      const owed = lateByWorker.get(worker);
      lateByWorker.delete(worker);
      if (owed !== undefined) resendOnce(owed);
    }, silenceMs).unref();
  }

  // Tasks answered late belong to no message, so no message watchdog covers them: a worker silent
  // for messageTimeoutMs while it owes late outcomes is stopped the same way.
  const monitor = setInterval(() => {
    const now = performance.now();
    for (const [worker, owed] of lateByWorker) {
      const heard = lastHeard.get(worker);
      if (owed.size === 0 || heard === undefined || now - heard <= Math.max(messageTimeoutMs, silenceMs)) continue;
      options.onError?.(new WorkerStuckError([...owed].map((item) => item.name), messageTimeoutMs));
      stopSilentWorker(worker);
    }
  }, heartbeatIntervalMs);
  monitor.unref();

  /** Workers that have announced their port (the pool is ready once `size` have). */
  let announced = 0;
  let markReady: () => void = () => undefined;
  let markFailed: (error: unknown) => void = () => undefined;
  const readiness = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    markFailed = reject;
  });
  // Nobody may ever ask: an unobserved rejection must not end the process.
  readiness.catch(() => undefined);

  function watchLateOutcomes(worker: number, port: MessagePort): void {
    announced += 1;
    if (announced >= size) markReady();
    lastHeard.set(worker, performance.now());
    port.on('message', (late: LateOutcome | DirectBatchAnswer | typeof WORKER_HEARTBEAT) => {
      lastHeard.set(worker, performance.now());
      if (late === WORKER_HEARTBEAT) return;
      if (isDirectBatchAnswer(late)) return answerDirect(worker, late);
      // A late outcome may even come before its message's answer: the task is owed from the start.
      const item = lateByWorker.get(worker)?.find(late.id);
      if (item !== undefined) settle(item, late.outcome);
    });
    port.unref();
    latePorts.set(worker, port);
    // Tasks may be waiting for the first worker to come up.
    dispatch();
  }

  function settle(item: PooledTask, outcome: TaskOutcome): void {
    if (finish(item)) item.resolve(outcome);
  }

  function fail(item: PooledTask, error: unknown): void {
    if (finish(item)) item.reject(error);
  }

  function finish(item: PooledTask): boolean {
    if (item.state === 'settled') return false;
    if (item.state === 'late' || item.direct) {
      const owed = lateByWorker.get(item.worker);
      owed?.delete(item);
      if (owed?.size === 0) latePorts.get(item.worker)?.unref();
    }
    item.state = 'settled';
    clearTimeout(item.timer);
    return true;
  }

  /** The task timeout: a task counts from the moment it is queued, as when every task went alone. */
  function timeOut(item: PooledTask): void {
    item.timedOut = true;
    const error = new ServiceUnavailableError(`task ${item.name} did not finish within ${taskTimeoutMs} ms`, retryAfterSeconds);
    if (item.state === 'waiting') {
      // It never reached a worker: only the queue forgets it.
      waiting.remove(item);
      fail(item, error);
    } else if (item.state === 'sent') {
      // Answered now, not when its worker has gone: then stop the worker (it may be stuck in this
      // very task); the tasks sent with it fail on its exit, naming this one.
      fail(item, error);
      item.cancellation?.abort(new DOMException(`task ${item.name} timed out`, 'TimeoutError'), item.name);
    } else {
      // Late: its message was answered and the worker serves others; drop the answer when it comes.
      fail(item, error);
    }
  }

  /** How a task that did not come back from its worker fails. */
  function lostTaskError(item: { readonly name: string; readonly timedOut: boolean; readonly cancellation?: TaskCancellation | null }, error: unknown): unknown {
    if (item.timedOut) return new ServiceUnavailableError(`task ${item.name} did not finish within ${taskTimeoutMs} ms`, retryAfterSeconds);
    const stoppedBy = item.cancellation?.stoppedBy;
    if (stoppedBy !== undefined) {
      return new ServiceUnavailableError(
        `task ${item.name} was stopped with its worker: task ${stoppedBy}, sent with it, did not finish within ${taskTimeoutMs} ms`,
        retryAfterSeconds,
      );
    }
    if (closing !== null) return new ServiceUnavailableError('server is shutting down', retryAfterSeconds);
    // The worker entry never throws (failures come back as outcomes), so a rejection here means the
    // thread itself stopped mid-task (`worker exited with code: N`, an uncaught exception). Piscina
    // has already replaced it; fail only its tasks, with a code, and log.
    const crashed = new WorkerCrashedError(item.name, { cause: error });
    options.onError?.(crashed);
    return crashed;
  }

  /**
   * Send waiting tasks to free workers: each free worker gets its share, up to the message limit,
   * straight to the worker on its own port (see `sendDirect`). A worker can take work once it has
   * announced its port (at start-up, once its entry module has loaded); until then tasks wait.
   */
  function dispatch(): void {
    while (waiting.length > 0) {
      const free = freeDirectWorkers();
      if (free.length === 0) break;
      const items = waiting.take(Math.min(maxTasksPerMessage, Math.ceil(waiting.length / free.length)));
      if (items.length === 0) break;
      sendDirect(free[0]!, items);
    }
  }

  let dispatchScheduled = false;
  /**
   * A new task waits for the end of this event-loop turn before it is sent: the requests a client
   * burst makes readable together are parsed in one turn, and then travel to an idle worker in one
   * message. Sent at once, the first went alone and the rest waited for it (bundle at 16 clients, one
   * worker: a third of the messages carried a single task; with this, seven in ten carry eight, and
   * the event loop and the worker each spend ≈7% less CPU per request). A lone request waits only
   * for the rest of its turn: a few microseconds.
   */
  function dispatchAtEndOfTurn(): void {
    if (dispatchScheduled) return;
    dispatchScheduled = true;
    setImmediate(() => {
      dispatchScheduled = false;
      dispatch();
    });
  }

  /**
   * Messages sent straight to a worker and not yet answered: at most one per worker, so that what
   * waits travels to the first worker that frees up. By worker thread id; `null` once answered (an
   * entry is removed only when its worker exits: see {@link OwedTasks} for why not per message).
   */
  const outstanding = new Map<number, DirectMessage | null>();
  let lastMessageId = 0;
  /** Where the search for a free worker starts, so that work spreads over the workers. */
  let nextWorker = 0;

  /** Workers with a port, not being stopped, and no message of ours unanswered; round-robin order. */
  function freeDirectWorkers(): number[] {
    const free: number[] = [];
    for (const worker of latePorts.keys()) {
      if (!outstanding.get(worker) && !stoppedSilent.has(worker) && !stopping.has(worker)) free.push(worker);
    }
    if (free.length > 1) {
      nextWorker = (nextWorker + 1) % free.length;
      return [...free.slice(nextWorker), ...free.slice(0, nextWorker)];
    }
    return free;
  }

  /**
   * Send tasks to a worker on its own port, not through Piscina. Why: Piscina makes, for every
   * message, objects whose per-call getters give V8 a new hidden class each time (its `interface`
   * objects); the young-generation GC keeps those alive through the hidden classes' transition
   * trees, and with them the message's task, promise and closures: under load ≈1 MB of every
   * 3–4 MB scavenged on the event loop was promoted to the old generation, which then swung between
   * 20 and 80 MB. The tasks are owed by the worker from the start (`lateByWorker`): its exit fails
   * them (or resends them once when it was stopped for going silent), a task timeout stops the
   * worker as Piscina's abort did, and the silent-worker watch covers them.
   */
  function sendDirect(worker: number, items: PooledTask[]): void {
    const port = latePorts.get(worker)!;
    lastMessageId += 1;
    const message = new DirectMessage(lastMessageId, items, new TaskCancellation());
    // A task of this message timed out: stop its worker (its exit fails the others, naming it).
    message.cancellation.once('abort', () => stopWorker(worker));
    const batch: DirectBatchRequest['batch'] = [];
    let owed = lateByWorker.get(worker);
    if (owed === undefined) lateByWorker.set(worker, (owed = new OwedTasks()));
    for (const item of items) {
      item.state = 'sent';
      item.direct = true;
      item.worker = worker;
      item.cancellation = message.cancellation;
      owed.add(item);
      batch.push({ id: item.id, task: item.name, input: item.input });
    }
    try {
      port.postMessage({ direct: message.id, batch } satisfies DirectBatchRequest);
    } catch (error) {
      // An input that cannot be cloned: a caller's bug. Only these tasks fail.
      for (const item of items) fail(item, error);
      return;
    }
    outstanding.set(worker, message);
    // Tasks owed keep the process up, as Piscina's port does for a running message.
    port.ref();
  }

  function answerDirect(worker: number, answer: DirectBatchAnswer): void {
    const message = outstanding.get(worker);
    if (!message || message.id !== answer.direct) return;
    outstanding.set(worker, null);
    workersProven = true;
    message.items.forEach((item, index) => {
      const outcome = answer.outcomes[index];
      if (outcome !== null && outcome !== undefined) settle(item, outcome);
      // Still running (waiting on I/O or libuv's thread pool): its outcome comes on its own.
      else if (item.state === 'sent') item.state = 'late';
    });
    dispatch();
  }

  /** Workers being terminated by us (a task timeout): no new work goes to them. */
  const stopping = new Set<number>();
  function stopWorker(worker: number): void {
    stopping.add(worker);
    const thread = piscina.threads.find((candidate) => candidate.threadId === worker);
    if (thread === undefined) return void stopping.delete(worker);
    thread.once('exit', () => stopping.delete(worker));
    void thread.terminate();
  }

  /** A task with its own abort signal goes alone, straight to Piscina (aborting it stops only its worker). */
  async function runAlone(name: string, request: TaskRequest, outer: AbortSignal): Promise<TaskOutcome> {
    const signal = new TaskCancellation();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signal.abort(new DOMException(`task ${name} timed out`, 'TimeoutError'));
    }, taskTimeoutMs);
    timer.unref();
    const forward = (): void => signal.abort(outer.reason);
    if (outer.aborted) forward();
    else outer.addEventListener('abort', forward, { once: true });
    try {
      const outcome = (await piscina.run(request, { signal })) as TaskOutcome;
      workersProven = true;
      return outcome;
    } catch (error) {
      if (timedOut) throw new ServiceUnavailableError(`task ${name} did not finish within ${taskTimeoutMs} ms`, retryAfterSeconds);
      // The client went away: nobody reads the answer; keep Piscina's AbortError.
      if (outer.aborted) throw error;
      throw lostTaskError({ name, timedOut: false, cancellation: null }, error);
    } finally {
      clearTimeout(timer);
      outer.removeEventListener('abort', forward);
    }
  }

  return {
    size,
    maxQueue,
    get pending() {
      return pending;
    },
    taskNames: [...registered.keys()],
    ready: () => readiness,
    async run<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput, runOptions?: RunTaskOptions) {
      if (registered.get(task.name) === undefined) throw new UnknownTaskError(task.name, [...registered.keys()]);
      if (closing !== null) throw new ServiceUnavailableError('server is shutting down', retryAfterSeconds);
      if (startupFailure !== null) throw startupFailure;
      if (pending >= size + maxQueue) {
        throw new ServiceUnavailableError('server is busy: the worker queue is full, retry later', retryAfterSeconds);
      }
      pending += 1;
      try {
        const request: TaskRequest = { task: task.name, input };
        let outcome: TaskOutcome;
        if (runOptions?.signal !== undefined) {
          outcome = await runAlone(task.name, request, runOptions.signal);
        } else {
          outcome = await new Promise<TaskOutcome>((resolve, reject) => {
            lastTaskId += 1;
            const item = new PooledTask(lastTaskId, task.name, input, resolve, reject);
            item.timer = setTimeout(() => timeOut(item), taskTimeoutMs);
            item.timer.unref();
            waiting.push(item);
            dispatchAtEndOfTurn();
          });
        }
        if (outcome.ok) return outcome.result as TOutput;
        const error = fromErrorPayload(outcome.error);
        if (outcome.stack !== undefined) error.stack = outcome.stack;
        throw error;
      } finally {
        pending -= 1;
      }
    },
    close() {
      clearInterval(monitor);
      closing ??= (async () => {
        // A worker is not terminated in the middle of starting (module evaluation, its late-outcome
        // port in transfer): the likely cause of one SIGABRT at shutdown right after start-up in CI
        // (not reproduced locally). One that never starts (a broken build) is waited for briefly.
        let wait: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([initialWorkersStarted, new Promise<void>((resolve) => (wait = setTimeout(resolve, STARTING_WORKERS_WAIT_MS)))]);
        clearTimeout(wait);
        // Tasks sent straight to workers are not Piscina's to wait for: let them finish first (as
        // long as Piscina would wait for its own), so a graceful stop answers them.
        const deadline = performance.now() + closeTimeoutMs;
        while ([...lateByWorker.values()].some((owed) => owed.size > 0) && performance.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await piscina.close();
      })();
      return closing;
    },
  };
}

/** Longest `close()` waits for the pool's first workers to finish starting before stopping them. */
const STARTING_WORKERS_WAIT_MS = 5_000;


/**
 * Reported through `onError` (the server logs it) when a worker stopped answering (see
 * `messageTimeoutMs`): the worker is replaced and its tasks are sent to another one.
 */
export class WorkerStuckError extends Error {
  constructor(
    readonly taskNames: readonly string[],
    readonly timeoutMs: number,
  ) {
    super(`a worker thread stopped answering for ${timeoutMs} ms (tasks: ${taskNames.join(', ')}); it was replaced and its tasks were sent to another worker`);
    this.name = 'WorkerStuckError';
  }
}

/**
 * One task on its way through the pool: `waiting` in the queue, `sent` in a message to a worker,
 * `late` when that message was answered before it finished (it still runs in the worker and its
 * outcome comes on the worker's late-outcome port), then `settled`.
 */
class PooledTask {
  state: 'waiting' | 'sent' | 'late' | 'settled' = 'waiting';
  timedOut = false;
  /** Already sent once to a worker that never answered (see messageTimeoutMs). */
  resent = false;
  timer: ReturnType<typeof setTimeout> | undefined = undefined;
  /** Stops the message this task was sent in. */
  cancellation: TaskCancellation | null = null;
  /** Thread id of the worker that owes this task's late outcome (or its direct message's answer). */
  worker = 0;
  /** Sent straight to its worker's port (see `sendDirect`): owed by that worker from the start. */
  direct = false;
  /** Travels in a message of its own (sent again after a worker it shared died; see `failOrRetryAfterExit`). */
  alone = false;

  constructor(
    readonly id: number,
    readonly name: string,
    readonly input: unknown,
    readonly resolve: (outcome: TaskOutcome) => void,
    readonly reject: (error: unknown) => void,
  ) {}
}

/**
 * The tasks one worker owes, in an array. Not a Set, and no Map keyed by task id either: a
 * long-lived Map or Set whose entries come and go at the request rate keeps each obsolete hash table
 * linked to the next one (V8 keeps the link for live iterators), and once one of those tables has
 * been promoted to the old generation it keeps every later table, and the tasks in them, alive
 * through young-generation GCs. Measured: the pool alone (echo tasks from 16 loops) promoted
 * ≈0.5–1 MB per scavenge on the event loop, and the server under bundle load swung its old
 * generation between ≈17 and ≈75 MB. A worker owes a message's tasks plus its late ones, a few at a
 * time, so scanning the array costs less than hashing.
 */
class OwedTasks implements Iterable<PooledTask> {
  private readonly items: PooledTask[] = [];

  get size(): number {
    return this.items.length;
  }

  add(item: PooledTask): void {
    this.items.push(item);
  }

  delete(item: PooledTask): boolean {
    const index = this.items.indexOf(item);
    if (index === -1) return false;
    this.items.splice(index, 1);
    return true;
  }

  find(id: number): PooledTask | undefined {
    return this.items.find((item) => item.id === id);
  }

  [Symbol.iterator](): Iterator<PooledTask> {
    return this.items[Symbol.iterator]();
  }
}

/** A message sent straight to a worker's port (see `sendDirect`). */
class DirectMessage {
  constructor(
    readonly id: number,
    readonly items: readonly PooledTask[],
    /** Stops the message's worker when one of its tasks times out. */
    readonly cancellation: TaskCancellation,
  ) {}
}

/**
 * The waiting tasks, oldest first: an array consumed from a moving head (`shift` on a long array
 * copies it), compacted when the consumed part dominates.
 */
class TaskQueue {
  private items: (PooledTask | null)[] = [];
  private head = 0;
  private removed = 0;

  get length(): number {
    return this.items.length - this.head - this.removed;
  }

  push(item: PooledTask): void {
    this.items.push(item);
  }

  /** Put tasks back at the front, in their order. */
  unshift(items: readonly PooledTask[]): void {
    if (items.length === 0) return;
    this.items = [...items, ...this.items.slice(this.head)];
    this.head = 0;
  }

  /** Take up to `count` tasks from the front; a task marked `alone` is taken only by itself. */
  take(count: number): PooledTask[] {
    const taken: PooledTask[] = [];
    while (taken.length < count && this.head < this.items.length) {
      const item = this.items[this.head]!;
      if (item !== null && item.alone && taken.length > 0) break;
      this.items[this.head] = null;
      this.head += 1;
      if (item === null) this.removed -= 1;
      else {
        taken.push(item);
        if (item.alone) break;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return taken;
  }

  /** Forget a waiting task (it timed out in the queue). */
  remove(item: PooledTask): void {
    const index = this.items.indexOf(item, this.head);
    if (index === -1) return;
    this.items[index] = null;
    this.removed += 1;
  }
}

/**
 * The abort signal Piscina gets for one task: the EventEmitter-like form Piscina accepts (`aborted`,
 * `reason`, `once`/`off`/`removeListener` of `abort`), with one listener at most — Piscina adds
 * exactly one per task. Far cheaper than an AbortController on this hot path.
 */
class TaskCancellation {
  aborted = false;
  reason: unknown = undefined;
  /** Name of the task whose timeout aborted this message, when one did. */
  stoppedBy: string | undefined = undefined;
  private listener: (() => void) | null = null;

  once(_event: 'abort', listener: () => void): void {
    this.listener = listener;
  }

  off(_event: 'abort', listener: () => void): void {
    if (this.listener === listener) this.listener = null;
  }

  removeListener(event: 'abort', listener: () => void): void {
    this.off(event, listener);
  }

  abort(reason: unknown, stoppedBy?: string): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.stoppedBy = stoppedBy;
    const listener = this.listener;
    this.listener = null;
    listener?.();
  }
}
