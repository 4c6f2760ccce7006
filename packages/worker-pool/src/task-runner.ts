/**
 * The interface operations use to run tasks, and an in-thread implementation of it. Operations call
 * `context.runTask(task, input)` and never know whether a pool or the main thread runs it.
 */
import { fromErrorPayload, toErrorPayload } from '@certsmith/x509-core';
import { UnknownTaskError } from './errors.js';
import type { TaskDefinition } from './task.js';

/** Per-call options. */
export interface RunTaskOptions {
  /**
   * Abort the task: one still waiting for a thread leaves the queue; one already running is answered
   * at once with the signal's reason and its outcome is dropped when it comes (the thread running it
   * is not stopped). Either way `run` rejects with `signal.reason`.
   */
  signal?: AbortSignal;
}

/** Runs tasks: the worker pool in servers, {@link createInlineTaskRunner} in tests and embedding. */
export interface TaskRunner {
  /** Run `task` with `input`; rejects with the task's error rebuilt (same `code`, `name`, `message`). */
  run<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput, options?: RunTaskOptions): Promise<TOutput>;
  /** Let running tasks finish, then release resources. */
  close(): Promise<void>;
}

/** Options of {@link createInlineTaskRunner}. */
export interface InlineTaskRunnerOptions {
  /** When given, only these tasks may run (as with a pool); otherwise any task definition runs. */
  tasks?: readonly TaskDefinition[];
}

/**
 * A {@link TaskRunner} that runs tasks on the calling thread but with worker semantics: input and
 * result are structured-cloned and errors travel as payloads, so an operation that works inline works
 * on the pool too. Meant for unit tests of operations (no build needed) and single-threaded embedding.
 */
export function createInlineTaskRunner(options: InlineTaskRunnerOptions = {}): TaskRunner {
  const allowed = options.tasks ? new Set(options.tasks.map((task) => task.name)) : null;
  return {
    async run<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput, runOptions?: RunTaskOptions) {
      if (allowed !== null && !allowed.has(task.name)) throw new UnknownTaskError(task.name, [...allowed]);
      runOptions?.signal?.throwIfAborted();
      let result: TOutput;
      try {
        result = await task.run(structuredClone(input));
      } catch (error) {
        const rebuilt = fromErrorPayload(toErrorPayload(error));
        // Keep where it happened for the server log; the client only ever sees code and message.
        if (error instanceof Error && error.stack !== undefined) rebuilt.stack = error.stack;
        throw rebuilt;
      }
      return structuredClone(result);
    },
    async close() {},
  };
}
