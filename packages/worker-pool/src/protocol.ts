/**
 * Messages between the pool (main thread) and a worker thread (`worker-entry.ts`), on the worker's
 * own `parentPort`. Plain data only: they cross threads by structured clone.
 */
import type { ErrorPayload } from '@certsmith/x509-core';
import type { MessagePort } from 'node:worker_threads';
import type { ResolvedWorkerInit } from './worker-init.js';

/** `workerData` of every worker. */
export interface WorkerSetup {
  /** Task name → module URL or specifier (already mapped to built files). */
  readonly taskModules: Readonly<Record<string, string>>;
  /** The use cases' per-thread setup, run in order before the worker takes tasks. */
  readonly inits: readonly ResolvedWorkerInit[];
  /** Interval of the worker's heartbeat, ms. */
  readonly heartbeatIntervalMs: number;
}

/**
 * `workerData` of a thread started before its pool (`prestartWorkers`): it imports `preload`, then
 * waits for a {@link SetupMessage}.
 */
export interface PrestartData {
  readonly prestart: true;
  readonly preload: readonly string[];
  /** A task to run once `preload` is imported, its outcome posted on `task.port` (first thread only). */
  readonly task?: PrestartTaskData;
}

/** The task a prestarted thread runs while it waits for its pool (`PrestartOptions.task`). */
export interface PrestartTaskData {
  /** URL or specifier of a module that exports the task's definition. */
  readonly module: string;
  readonly name: string;
  readonly input: unknown;
  /** Where the thread posts the task's {@link TaskOutcome} (its own channel: not the pool's). */
  readonly port: MessagePort;
}

/** The pool's first message to a prestarted thread: what it would otherwise get as `workerData`. */
export interface SetupMessage {
  readonly type: 'setup';
  readonly setup: WorkerSetup;
}

/** One task to run; `id` names it in the pool (for outcomes that come back late). */
export interface TaskRequest {
  readonly id: number;
  readonly task: string;
  readonly input: unknown;
}

/**
 * The outcome of a task. Errors are returned, not thrown: a thrown value would be structured-cloned
 * by the thread boundary, which keeps `message` but drops own properties such as `code`.
 */
export type TaskOutcome =
  | { ok: true; result: unknown }
  | {
      ok: false;
      error: ErrorPayload;
      /** Worker-side stack, for the server log only (never sent to clients). */
      stack?: string;
    };

/** Pool → worker: tasks that travel together. The worker starts them together. */
export interface BatchMessage {
  readonly type: 'batch';
  readonly batch: number;
  readonly tasks: readonly TaskRequest[];
}

/**
 * Worker → pool: the answer to a {@link BatchMessage}, outcomes in its order; `null` for a task still
 * running when the others had settled (waiting on I/O or libuv's thread pool), whose
 * {@link LateOutcomeMessage} follows when it settles.
 */
export interface BatchAnswerMessage {
  readonly type: 'answer';
  readonly batch: number;
  readonly outcomes: readonly (TaskOutcome | null)[];
}

/** Worker → pool: a task's outcome after its batch was answered. */
export interface LateOutcomeMessage {
  readonly type: 'late';
  readonly id: number;
  readonly outcome: TaskOutcome;
}

/** Worker → pool: its init hooks have run; it takes tasks from now on. */
export interface ReadyMessage {
  readonly type: 'ready';
}

/** Worker → pool: an init hook failed; the worker ends itself after posting this. */
export interface InitFailedMessage {
  readonly type: 'init-failed';
  /** The hook's module (`''` when the failure was not a hook's). */
  readonly module: string;
  /** What went wrong, without the module (see `WorkerInitError`). */
  readonly detail: string;
  /** The whole message. */
  readonly message: string;
}

/**
 * Worker → pool, from a timer every `heartbeatIntervalMs`: tells a worker whose event loop no longer
 * runs (stuck) from one busy with a long task.
 */
export interface HeartbeatMessage {
  readonly type: 'heartbeat';
}

/** Everything a worker posts. */
export type WorkerMessage = BatchAnswerMessage | LateOutcomeMessage | ReadyMessage | InitFailedMessage | HeartbeatMessage;

/** Default interval of the heartbeat, ms. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 2_000;
