/**
 * What the primary process of `certsmith serve --processes N` and its worker processes say to each
 * other over node:cluster's IPC channel (`serve-primary.ts` ↔ `serve-worker.ts`). Every message
 * carries {@link SERVE_CHANNEL} in `channel`: the same channel carries the store's messages
 * (`serveStore`/`connectStore`, tagged their own way) and node:cluster's, and each side keeps only its own.
 */
import type { DbConfig, MigrationMode } from '@certsmith/cert-store';
import type { MetricsSnapshot } from '@certsmith/http-api';
import type { TrustSnapshot } from '@certsmith/bundler';

/** The tag of this protocol's messages. */
export const SERVE_CHANNEL = 'certsmith-serve';

/**
 * The environment variable that tells a worker process whether it runs the store-wide background
 * work (`1`) or not (`0`): set by the primary at the fork, so the worker starts without waiting for a message.
 */
export const BACKGROUND_WORK_ENV = 'CERTSMITH_SERVE_BACKGROUND_WORK';

type Tagged<T> = T & { channel: typeof SERVE_CHANNEL };

/** From the primary to a worker process. */
export type PrimaryMessage = Tagged<PrimaryMessageBody>;
/** From a worker process to the primary. */
export type WorkerMessage = Tagged<WorkerMessageBody>;

/** A {@link PrimaryMessage} without its tag. */
export type PrimaryMessageBody =
  /** The store asked for is open and served on this channel. */
  | { type: 'store-opened' }
  /** The store could not be opened: `code` a certsmith error code, or null. */
  | { type: 'store-failed'; code: number | null; message: string }
  /** Send this process's metrics for the collection `id`. */
  | { type: 'snapshot-metrics'; id: number }
  /** Every serving process's metrics, for the collection `id` this process asked for. */
  | { type: 'metrics-collected'; id: number; snapshots: MetricsSnapshot[] }
  /** The trust files the command line names, read by the primary; `null`: read them yourself. */
  | { type: 'trust-snapshot'; snapshot: TrustSnapshot | null }
  /** Stop accepting, finish in-flight requests, close, exit. */
  | { type: 'stop' };

/** A {@link WorkerMessage} without its tag. */
export type WorkerMessageBody =
  /** Send the trust snapshot (the primary answers when it has read the files). */
  | { type: 'trust-request' }
  /** Open (once for all workers) and serve the store `config` names, with `migrations`. */
  | { type: 'open-store'; config: DbConfig; migrations: MigrationMode }
  /** The server listens at `url`. */
  | { type: 'listening'; url: string }
  /** Start-up failed: what one process would print on stderr, and its exit code. */
  | { type: 'failed'; stderr: string; exitCode: number }
  /** Collect every serving process's metrics (a `/metrics` request arrived here); answer with `id`. */
  | { type: 'collect-metrics'; id: number }
  /** This process's metrics for the primary's collection `id` (`null`: they could not be read). */
  | { type: 'metrics-snapshot'; id: number; snapshot: MetricsSnapshot | null };

/** True for a message of this protocol (node:cluster's own and the store's are not). */
export function isServeMessage(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { channel?: unknown }).channel === SERVE_CHANNEL;
}
