/**
 * Messages between the pool (main thread) and the worker entry (`worker.ts`). Plain data only: they
 * cross threads by structured clone.
 */
import type { ErrorPayload } from '@certsmith/x509-core';
import type { WorkerSignerSpec } from './issue/worker-signers.js';

/** `workerData` of every worker: which module defines each task, by task name. */
export interface WorkerSetup {
  /** Task name → module URL or specifier (already mapped to built files). */
  taskModules: Record<string, string>;
  /** Signers the workers recreate for themselves (see `issue/worker-signers.ts`). */
  signers?: readonly WorkerSignerSpec[];
  /** This worker's share of the server's key pool (`--key-pool`), per key spec name. */
  keyPool?: Record<string, number>;
}

/** One task to run. */
export interface TaskRequest {
  task: string;
  input: unknown;
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
