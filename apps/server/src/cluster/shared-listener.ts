/**
 * The one listening socket of `serve --processes N` (docs/adr/0004-http-threads.md): the first
 * process listens and hands each new connection, in turn, to one of the serving processes that are
 * ready — itself included — which is what node:cluster's round-robin does inside, here with public
 * API (Node 20 has no `reusePort`). The connection is accepted paused (`pauseOnConnect`), so no byte
 * is read before the process that serves it has it.
 *
 * `maxConnections` is the whole server's: the connections open in every process count, since a
 * process's own limit (`net.Server.maxConnections`) does not see connections emitted to it.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';

/** Where a connection can go: this process's server, or another process. */
export interface ConnectionTarget {
  /**
   * Take `socket` (paused). False when the target cannot take it any more (its process is gone):
   * the listener gives it to the next target instead.
   */
  take(socket: Socket): boolean;
}

/** Options of {@link SharedListener}. */
export interface SharedListenerOptions {
  /** Most connections open at once over every target; one over it is closed as soon as it is accepted. 0: no limit. */
  maxConnections: number;
  /** A connection was refused because of {@link SharedListenerOptions.maxConnections}. */
  onDrop?: () => void;
}

/** A listening socket that hands its connections to targets round-robin, counting the open ones. */
export class SharedListener {
  readonly #server: Server;
  readonly #maxConnections: number;
  readonly #onDrop: () => void;
  /** The targets in turn order, with their open connections. */
  readonly #targets = new Map<ConnectionTarget, { open: number }>();
  #order: ConnectionTarget[] = [];
  #next = 0;
  #open = 0;

  constructor(options: SharedListenerOptions) {
    if (!Number.isSafeInteger(options.maxConnections) || options.maxConnections < 0) throw new RangeError(`maxConnections must be a non-negative integer, got ${options.maxConnections}`);
    this.#maxConnections = options.maxConnections;
    this.#onDrop = options.onDrop ?? (() => undefined);
    this.#server = createServer({ pauseOnConnect: true }, (socket) => this.#hand(socket));
  }

  /** Connections open now, over every target. */
  get connections(): number {
    return this.#open;
  }

  /** Listen on `host:port` (0: a free port); rejects with the listen error (`listen EADDRINUSE: …`). */
  async listen(port: number, host: string): Promise<AddressInfo> {
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    return this.#server.address() as AddressInfo;
  }

  /** Give `target` a turn from the next connection on. */
  add(target: ConnectionTarget): void {
    if (this.#targets.has(target)) return;
    this.#targets.set(target, { open: 0 });
    this.#order = [...this.#targets.keys()];
  }

  /**
   * `target` gets no more connections. With `gone`, its process has ended: the connections it had
   * are closed with it and no longer count.
   */
  remove(target: ConnectionTarget, { gone = false }: { gone?: boolean } = {}): void {
    const state = this.#targets.get(target);
    if (state === undefined) return;
    if (gone) this.#open -= state.open;
    else this.#detached.set(target, state);
    this.#targets.delete(target);
    this.#order = [...this.#targets.keys()];
  }

  /** Targets removed while their connections are still open (a process that is stopping). */
  readonly #detached = new Map<ConnectionTarget, { open: number }>();

  /** One of `target`'s connections closed. */
  released(target: ConnectionTarget): void {
    const state = this.#targets.get(target) ?? this.#detached.get(target);
    if (state === undefined || state.open === 0) return;
    state.open--;
    this.#open--;
  }

  /** Stop accepting connections (the ones handed out stay with their targets). Safe to call more than once. */
  close(): void {
    // Not waiting for 'close': node's net.Server waits there for every socket it sent to another
    // process to close (its `_workers` bookkeeping), which happens only once those processes stop.
    if (this.#server.listening) this.#server.close();
  }

  #hand(socket: Socket): void {
    if (this.#maxConnections > 0 && this.#open >= this.#maxConnections) {
      socket.destroy();
      this.#onDrop();
      return;
    }
    // Bounded: each target is tried once; one that cannot take it is skipped.
    for (let tries = 0; tries < this.#order.length; tries++) {
      const target = this.#order[this.#next++ % this.#order.length]!;
      this.#next %= this.#order.length;
      const state = this.#targets.get(target)!;
      state.open++;
      this.#open++;
      if (target.take(socket)) return;
      state.open--;
      this.#open--;
    }
    // No target (none added yet, or every one gone): nothing can serve it.
    socket.destroy();
  }
}
