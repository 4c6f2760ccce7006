/**
 * Where a server's connections come from when it does not listen on its own
 * (`StartServerOptions.connections`): the processes of `serve --processes N` share one listening
 * socket, which the first process owns and whose connections it hands out (cluster/shared-listener.ts).
 */
import type { ApiServer, ListeningAddress } from '@certsmith/http-api';

/** A server's connections from elsewhere than its own `listen`. */
export interface ConnectionSource {
  /**
   * Start giving `server` its connections, in place of listening on `host:port`; resolves with the
   * address clients connect to, or rejects with the listen error (`listen EADDRINUSE: …`).
   */
  attach(server: ApiServer, port: number, host: string): Promise<ListeningAddress>;
  /**
   * Give `server` no new connection, let its in-flight requests finish (up to `timeoutMs`), then cut
   * what is left. Resolves true when everything finished in time.
   */
  detach(server: ApiServer, timeoutMs: number): Promise<boolean>;
  /** False: `--metrics-address` is served by another process of the same server, not by this one. */
  readonly servesMetricsAddress: boolean;
}
