/**
 * Errors of the worker pool. Those a client may see carry CFSSL's convention for HTTP-level errors
 * (`errors/http.go`: the code is the HTTP status); the others are wiring or start-up mistakes and
 * have no code (HTTP 500 if they ever reach a response).
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/**
 * The pool cannot take the task now (code 503): its queue is full, it is shutting down, or the
 * task did not finish in time. Answered with `Retry-After: retryAfterSeconds`.
 */
export class ServiceUnavailableError extends CertsmithError {
  /** Seconds a client should wait before retrying. */
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterSeconds: number) {
    super(ErrorCode.ServiceUnavailable, message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * The worker thread running a task stopped before answering (`process.exit` in task code, an
 * uncaught exception outside the task's promise, a native crash of the thread, out of memory). Only
 * that task fails: code 500, with this generic message (the cause goes to the server log, never to
 * the client); the pool replaces the worker and later tasks are served as usual.
 */
export class WorkerCrashedError extends CertsmithError {
  /** The task whose worker stopped (several, comma-separated, when reported for a whole message). */
  readonly taskName: string;

  constructor(taskName: string, options?: { cause?: unknown }) {
    super(500, `the worker thread running task "${taskName}" stopped before answering; the worker was replaced, the request can be retried`, options);
    this.taskName = taskName;
  }
}

/**
 * Reported through `onError` (the server logs it) when a worker stopped answering (see
 * `messageTimeoutMs`): the worker is replaced and its tasks are sent to another one.
 */
export class WorkerStuckError extends Error {
  constructor(
    /** The tasks the silent worker owed. */
    readonly taskNames: readonly string[],
    /** How long it had been silent, at least. */
    readonly timeoutMs: number,
  ) {
    super(`a worker thread stopped answering for ${timeoutMs} ms (tasks: ${taskNames.join(', ')}); it was replaced and its tasks were sent to another worker`);
    this.name = 'WorkerStuckError';
  }
}

/**
 * A worker task was requested that the pool was not created with. This is a wiring mistake, not a
 * client error, so it deliberately has no CFSSL code and surfaces as HTTP 500.
 */
export class UnknownTaskError extends Error {
  /** The task name that was asked for. */
  readonly taskName: string;

  constructor(taskName: string, known: readonly string[]) {
    super(`unknown worker task "${taskName}"; registered tasks: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownTaskError';
    this.taskName = taskName;
  }
}

/**
 * A module named by a `WorkerInit` could not be imported, has no `initWorker` function, or its
 * `initWorker` threw. A wiring or start-up mistake, not a client error: no CFSSL code.
 */
export class WorkerInitError extends Error {
  /** The module that failed. */
  readonly module: string;
  /** What went wrong, without the module. */
  readonly detail: string;

  constructor(module: string, detail: string, options?: { cause?: unknown }) {
    super(`worker init ${module}: ${detail}`, options);
    this.name = 'WorkerInitError';
    this.module = module;
    this.detail = detail;
  }
}

/**
 * A worker thread could not start: its entry or a task module failed to load, or it exited before
 * it was ready. The pool fails its tasks with this until a worker has started once.
 */
export class WorkerStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WorkerStartError';
  }
}
