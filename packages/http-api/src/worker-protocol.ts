/**
 * Messages between the pool (main thread) and the worker entry (`worker.ts`). Plain data only: they
 * cross threads by structured clone.
 */
import type { MessagePort } from 'node:worker_threads';
import type { ErrorPayload } from '@certsmith/x509-core';
import type { ResolvedWorkerInit } from '@certsmith/worker-pool';

/** `workerData` of every worker: which module defines each task, by task name. */
export interface WorkerSetup {
  /** Task name → module URL or specifier (already mapped to built files). */
  taskModules: Record<string, string>;
  /** The use cases' per-thread setup, run in order before the worker takes tasks. */
  inits: readonly ResolvedWorkerInit[];
  /** Interval of this worker's heartbeat on its late-outcome port, ms (default {@link WORKER_HEARTBEAT_INTERVAL_MS}). */
  heartbeatIntervalMs?: number;
}

/** One task to run. */
export interface TaskRequest {
  task: string;
  input: unknown;
}

/**
 * Tasks in one message (the pool sends what waits for a worker together): the worker starts them
 * together. `id` names each task in the pool, for outcomes that come back late.
 */
export interface TaskBatchRequest {
  batch: (TaskRequest & { id: number })[];
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

/**
 * The answer to a {@link TaskBatchRequest}, in its order: `null` for a task still running when the
 * others had settled (waiting on I/O or libuv's thread pool), whose {@link LateOutcome} the worker
 * posts on its late-outcome port when it settles.
 */
export interface TaskBatchOutcome {
  outcomes: (TaskOutcome | null)[];
  /** Thread id of the worker that answered. */
  worker: number;
}

/** A task's outcome posted after its message was answered. */
export interface LateOutcome {
  id: number;
  outcome: TaskOutcome;
}

/**
 * Posted by every worker on its late-outcome port from a timer: the pool tells a worker whose event
 * loop no longer runs (stuck) from one busy with a long task.
 */
export const WORKER_HEARTBEAT = 'certsmith.heartbeat';

/** Default interval of the heartbeat, ms. */
export const WORKER_HEARTBEAT_INTERVAL_MS = 2_000;

/** Key of the message by which a worker hands the pool its late-outcome port (on `parentPort`). */
export const LATE_OUTCOME_PORT = 'certsmith.lateOutcomePort';

/** What a worker posts on `parentPort` at start: the port its late outcomes come on. */
export interface LateOutcomePortAnnouncement {
  [LATE_OUTCOME_PORT]: true;
  port: MessagePort;
  threadId: number;
}

/** Whether a message from a worker is its {@link LateOutcomePortAnnouncement}. */
export function isLateOutcomePortAnnouncement(message: unknown): message is LateOutcomePortAnnouncement {
  return typeof message === 'object' && message !== null && (message as Record<string, unknown>)[LATE_OUTCOME_PORT] === true;
}

/**
 * A batch sent straight to a worker on its late-outcome port, not through Piscina (see
 * `sendDirect` in worker-pool.ts). The worker answers with a {@link DirectBatchAnswer} on the same
 * port; tasks still waiting on I/O are answered `null` there and post a {@link LateOutcome} later.
 */
export interface DirectBatchRequest {
  direct: number;
  batch: (TaskRequest & { id: number })[];
}

/** A worker's answer to a {@link DirectBatchRequest}, outcomes in the request's order. */
export interface DirectBatchAnswer {
  direct: number;
  outcomes: (TaskOutcome | null)[];
}

export function isDirectBatchRequest(message: unknown): message is DirectBatchRequest {
  return typeof message === 'object' && message !== null && typeof (message as Record<string, unknown>)['direct'] === 'number' && Array.isArray((message as Record<string, unknown>)['batch']);
}

export function isDirectBatchAnswer(message: unknown): message is DirectBatchAnswer {
  return typeof message === 'object' && message !== null && typeof (message as Record<string, unknown>)['direct'] === 'number' && Array.isArray((message as Record<string, unknown>)['outcomes']);
}
