/**
 * A hook the issuing workers run on every certificate they sign, before it leaves the worker: work
 * that belongs with the certificate and needs the worker's copy of the signer (a certificate store's
 * first OCSP response, signed with the CA key the worker holds) or is plain CPU work on it (the
 * fields of the store's row) is then done beside the signature instead of on the event loop.
 *
 * The issuer knows nothing of what the hook does: a use case names a module that exports
 * `createIssuedHook(data)` ({@link CreateWorkerIssuedHook}); {@link workerIssuedHookInit} turns that
 * into the pool's init hook, every thread that runs the issuer's tasks imports the module once, and
 * the hook's `attachment` travels back with the certificate to the record port
 * (`IssuedCertificateRecord.attachment`). Certificates signed on the calling thread (HSMs) or by a
 * remote CA never run it.
 */
import type { Signer } from '@certsmith/signer-api';
import { importWorkerModule, resolveBuiltModule } from '@certsmith/worker-pool';
import type { WorkerInit } from '@certsmith/worker-pool';

/** A certificate a worker has just signed, as the hook receives it. */
export interface WorkerIssuedCertificate {
  /** The configured label of the signer that signed it. */
  readonly label: string;
  readonly certificateDer: Uint8Array;
  /** PEM with trailing newline, as returned to the caller. */
  readonly certificatePem: string;
  /**
   * The worker's copy of the label's signer (the same object for every certificate of the label in
   * this thread, so a hook may prepare what it needs for it once).
   */
  readonly signer: Signer;
}

/** What a hook gives back for one certificate. */
export interface WorkerIssuedHookResult {
  /** Plain data (it crosses threads by structured clone) for the record port. */
  readonly attachment: unknown;
  /**
   * Seconds each signature the hook made with {@link WorkerIssuedCertificate.signer} took: counted
   * in the signer metrics of the main thread as the certificate's own signature is.
   */
  readonly signSeconds: readonly number[];
}

/** The hook: runs in the worker after the signature, before the certificate is returned. A throw fails the request with its error. */
export type WorkerIssuedHook = (issued: WorkerIssuedCertificate) => WorkerIssuedHookResult | Promise<WorkerIssuedHookResult>;

/** What the hook's module must export as `createIssuedHook`: called once per thread with the spec's `data`. */
export type CreateWorkerIssuedHook = (data: unknown) => WorkerIssuedHook | Promise<WorkerIssuedHook>;

/** Names the hook: a module (URL or package specifier) exporting `createIssuedHook`, and its data. */
export interface WorkerIssuedHookSpec {
  module: string | URL;
  /** Passed to `createIssuedHook`; plain data only (cloned once per thread). */
  data?: unknown;
  /**
   * The module's own `createIssuedHook`, for the thread that already holds the module (the pool's
   * calling thread): it calls this instead of importing `module` (`WorkerInit.initWorker` of
   * `@certsmith/worker-pool`). Worker threads import `module`.
   */
  createIssuedHook?: CreateWorkerIssuedHook;
}

interface HookInitData {
  module: string;
  data: unknown;
}

/** The pool's init hook that installs `spec`'s hook in every thread running the issuer's tasks. */
export function workerIssuedHookInit(spec: WorkerIssuedHookSpec): WorkerInit {
  const data: HookInitData = { module: resolveBuiltModule(String(spec.module)), data: spec.data };
  const create = spec.createIssuedHook;
  if (create === undefined) return { module: import.meta.url, data };
  // A thread that holds both modules already makes the hook without importing either (WorkerInit.initWorker).
  return { module: import.meta.url, data, initWorker: async (given) => provideWorkerIssuedHook(await create((given as HookInitData).data)) };
}

let installed: WorkerIssuedHook | null = null;

/** The init hook (see {@link workerIssuedHookInit}): import the module and make this thread's hook. */
export async function initWorker(data: unknown): Promise<void> {
  const init = data as HookInitData;
  // From the thread's bundle when it holds the module (`importWorkerModule`), as the pool's own imports.
  const exports = (await importWorkerModule(init.module)) as { createIssuedHook?: unknown };
  if (typeof exports.createIssuedHook !== 'function') throw new TypeError(`${init.module} does not export a function named createIssuedHook`);
  provideWorkerIssuedHook(await (exports.createIssuedHook as CreateWorkerIssuedHook)(init.data));
}

/** Install `hook` on this thread (what the init hook does; tests and inline embedding call it directly). `null` removes it. */
export function provideWorkerIssuedHook(hook: WorkerIssuedHook | null): void {
  installed = hook;
}

/**
 * Run this thread's hook on `issued`; `null` when none is installed. The hook's own answer is
 * returned as it is (a value, or its promise) rather than wrapped in another promise: the caller
 * awaits it once (one certificate's hook runs on the event loop with `--processes`).
 */
export function runWorkerIssuedHook(issued: WorkerIssuedCertificate): WorkerIssuedHookResult | Promise<WorkerIssuedHookResult> | null {
  return installed === null ? null : installed(issued);
}
