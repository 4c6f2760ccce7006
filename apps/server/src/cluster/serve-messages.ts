/**
 * What the first process of `certsmith serve --processes N` (the leader, `serve-leader.ts`) and the
 * other serving processes (`serve-worker.ts`) say to each other over their IPC channel. Every
 * message carries {@link SERVE_CHANNEL} in `channel`: the same channel carries the store's messages
 * (`serveStore`/`connectStore`, tagged their own way) and node's own, and each side keeps only its own.
 */
import type { DbConfig, MigrationMode } from '@certsmith/cert-store';
import type { MetricsSnapshot } from '@certsmith/http-api';

/** The tag of this protocol's messages. */
export const SERVE_CHANNEL = 'certsmith-serve';

/**
 * The environment variable that tells a worker process where the server listens (its
 * `ListeningAddress` as JSON): the leader owns the socket, the worker reports the same URL.
 */
export const LISTENING_ADDRESS_ENV = 'CERTSMITH_SERVE_LISTENING';

type Tagged<T> = T & { channel: typeof SERVE_CHANNEL };

/** From the leader to a worker process. */
export type LeaderMessage = Tagged<LeaderMessageBody>;
/** From a worker process to the leader. */
export type WorkerMessage = Tagged<WorkerMessageBody>;

/** A {@link LeaderMessage} without its tag. */
export type LeaderMessageBody =
  /** The store asked for is open and served on this channel. */
  | { type: 'store-opened' }
  /** The store could not be served: `code` a certsmith error code, or null. */
  | { type: 'store-failed'; code: number | null; message: string }
  /** A connection to serve: the socket travels with the message (paused, as accepted). */
  | { type: 'connection' }
  /** Send this process's metrics for the collection `id`. */
  | { type: 'snapshot-metrics'; id: number }
  /** Every serving process's metrics, for the collection `id` this process asked for. */
  | { type: 'metrics-collected'; id: number; snapshots: MetricsSnapshot[] }
  /** Stop serving, finish in-flight requests, close, exit. */
  | { type: 'stop' };

/** A {@link WorkerMessage} without its tag. */
export type WorkerMessageBody =
  /** Serve the store `config` names, with `migrations` (the leader's: it opened it before listening). */
  | { type: 'open-store'; config: DbConfig; migrations: MigrationMode }
  /** The server is ready for connections. */
  | { type: 'listening' }
  /** Start-up failed: what one process would print on stderr, and its exit code. */
  | { type: 'failed'; stderr: string; exitCode: number }
  /** A connection the leader handed here closed (the leader counts the server's open connections). */
  | { type: 'connection-closed' }
  /** Collect every serving process's metrics (a `/metrics` request arrived here); answer with `id`. */
  | { type: 'collect-metrics'; id: number }
  /** This process's metrics for the leader's collection `id` (`null`: they could not be read). */
  | { type: 'metrics-snapshot'; id: number; snapshot: MetricsSnapshot | null };

/** True for a message of this protocol (node's own and the store's are not). */
export function isServeMessage(message: unknown): boolean {
  return typeof message === 'object' && message !== null && (message as { channel?: unknown }).channel === SERVE_CHANNEL;
}
