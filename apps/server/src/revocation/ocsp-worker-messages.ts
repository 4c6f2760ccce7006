/**
 * What `certsmith ocspserve` and its worker processes say to each other over node:cluster's IPC
 * channel (`ocsp-worker-cluster.ts` ↔ `ocsp-worker-process.ts`).
 */
import type { OcspResponderPlan } from './ocsp-responder-runtime.js';

/** From the command's process to a worker. */
export type OcspPrimaryMessage = { type: 'start'; plan: OcspResponderPlan } | { type: 'stop'; timeoutMs: number };

/** From a worker to the command's process. */
export type OcspWorkerMessage =
  /** The worker listens for messages: messages sent before this one would be lost. */
  | { type: 'ready' }
  | { type: 'listening'; url: string }
  /** `code`: a certsmith error code; `errno`: a system error's (`EADDRINUSE`). */
  | { type: 'failed'; code: number | null; errno: string | null; message: string }
  | { type: 'warn'; message: string };
