/**
 * An HTTP(S) server that serves connections handed to it instead of listening (`serve --processes
 * N`: the first process accepts every connection, cluster/shared-listener.ts): each arrives as a
 * paused socket, is given to the server as its own listening socket would (`'connection'`), and
 * then read. Closing such a server is this module's too: `closeHttpServer` waits for a listening
 * socket, and there is none.
 */
import type { Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type { ApiServer } from '@certsmith/http-api';

/** How often a closing server closes the keep-alive connections that became idle (as `closeHttpServer`). */
const IDLE_CHECK_MS = 50;

/** The connections handed to one server. */
export class HandedConnections {
  readonly #server: ApiServer;
  readonly #sockets = new Set<Socket>();
  #allClosed: (() => void) | null = null;
  #closed = false;

  constructor(server: ApiServer) {
    this.#server = server;
    // Node starts a server's connection tracking — the headers and request deadlines, and what
    // closeIdleConnections sees — on 'listening' (setupConnectionsTracking in node's _http_server);
    // a server that never listens would otherwise serve without them.
    server.emit('listening');
  }

  /** Open connections. */
  get size(): number {
    return this.#sockets.size;
  }

  /** Serve `socket` (paused, as accepted); `onClose` runs when it closes. A closed server drops it. */
  accept(socket: Socket, onClose?: () => void): void {
    if (onClose !== undefined) socket.once('close', onClose);
    if (this.#closed) {
      socket.destroy();
      return;
    }
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#sockets.delete(socket);
      if (this.#sockets.size === 0) this.#allClosed?.();
    });
    this.#server.emit('connection', socket);
    socket.resume();
  }

  /**
   * Take no more connections, close idle keep-alive ones at once and the others as their requests
   * finish; after `timeoutMs` cut the rest. Resolves true when everything finished in time.
   */
  async close(timeoutMs: number): Promise<boolean> {
    this.#closed = true;
    // Not listening: this closes the idle connections and stops the deadline checks (no listening socket to close).
    this.#server.close();
    const closed = new Promise<void>((resolve) => {
      this.#allClosed = resolve;
      if (this.#sockets.size === 0) resolve();
    });
    const deadline = Date.now() + timeoutMs;
    // Bounded: until every connection closed or the deadline.
    while (this.#sockets.size > 0 && Date.now() < deadline) {
      await Promise.race([closed, delay(IDLE_CHECK_MS)]);
      this.#server.closeIdleConnections();
    }
    if (this.#sockets.size === 0) return true;
    for (const socket of this.#sockets) socket.destroy();
    return false;
  }
}
