/**
 * A small HTTP/1.1 server on node:net for services whose whole request and answer are a few hundred
 * bytes (certsmith's OCSP responder): the same limits node:http enforces — head size, URL length,
 * body size, headers, body and keep-alive timeouts, connection count — with keep-alive, HTTP/1.0,
 * pipelining, `Expect: 100-continue`, chunked request bodies and a graceful close, at about twice
 * node:http's rate for such answers. Why it is hand-written rather than node:http: the benchmark in
 * `tools/bench/ocsp-http/` and docs/performance.md ("The OCSP responder against `cfssl ocspserve`").
 *
 * Each connection's answers are written once per event-loop turn (all connections with answers
 * ready are flushed from one `setImmediate`), so pipelined answers leave in one write.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';

import type { ConnectionContext, Http1Handler, Http1Timeouts } from './http1-connection.js';
import { Http1Connection } from './http1-connection.js';
import type { Http1Limits } from './request-parser.js';

/** Options of {@link createHttp1Server}; every one has a default. */
export interface Http1ServerOptions {
  /** Request line and header fields, in bytes; default 16 KiB (431 above, as node:http's default). */
  maxHeaderBytes?: number;
  /** Request target, in bytes; default 8 KiB (414 above). */
  maxUrlBytes?: number;
  /** Request body, in bytes; default 64 KiB (413 above). */
  maxBodyBytes?: number;
  /** Time for a request's line and headers; default 10,000 ms (408 and close). */
  headersTimeoutMs?: number;
  /** Time for a request's body once its head is in; default 20,000 ms (408 and close). */
  bodyTimeoutMs?: number;
  /** Idle keep-alive connections close after this; default 65,000 ms (past common load balancers' 60 s). */
  keepAliveTimeoutMs?: number;
  /** After its last answer, how long a connection may keep sending before it is destroyed; default 5,000 ms. */
  lingerMs?: number;
  /** Connections open at once; more are closed on accept. Default 1024. */
  maxConnections?: number;
  /** Requests read ahead of their answers on one connection; default 32 (reading pauses there). */
  maxPipelinedRequests?: number;
  /** Called with a handler's throw or rejection (the request was answered 500). */
  onHandlerError?: (error: unknown) => void;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

/** Where to listen: a port (0 = any free port) and address, or an already listening socket. */
export type Http1ListenTarget = { port: number; host: string } | { fd: number };

/** A server made by {@link createHttp1Server}. */
export interface Http1Server {
  /** Listen; resolves with the bound address once listening. */
  listen(target: Http1ListenTarget): Promise<AddressInfo>;
  /**
   * The listening socket's file descriptor, for another thread of this process to listen on the
   * same socket (`listen({ fd })`); `null` before listening. Both servers then hold the same
   * descriptor number, and each closes it on `close()`: the caller must make sure only one does.
   */
  readonly fd: number | null;
  /** Connections open now. */
  readonly connectionCount: number;
  /**
   * Stop accepting; idle connections close at once, busy ones after the answers they owe; after
   * `timeoutMs` (default 5,000) the rest are destroyed. Resolves when every connection is closed.
   */
  close(timeoutMs?: number): Promise<void>;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < 1) throw new RangeError(`${name} must be a positive integer, got ${String(value)}`);
  return result;
}

/** Create a server answering every request with `handler`. */
export function createHttp1Server(handler: Http1Handler, options: Http1ServerOptions = {}): Http1Server {
  const limits: Http1Limits = {
    maxHeaderBytes: positive('maxHeaderBytes', options.maxHeaderBytes, 16 * 1024),
    maxUrlBytes: positive('maxUrlBytes', options.maxUrlBytes, 8 * 1024),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes, 64 * 1024),
  };
  const timeouts: Http1Timeouts = {
    headersTimeoutMs: positive('headersTimeoutMs', options.headersTimeoutMs, 10_000),
    bodyTimeoutMs: positive('bodyTimeoutMs', options.bodyTimeoutMs, 20_000),
    keepAliveTimeoutMs: positive('keepAliveTimeoutMs', options.keepAliveTimeoutMs, 65_000),
    lingerMs: positive('lingerMs', options.lingerMs, 5_000),
  };
  const now = options.now ?? Date.now;
  const onHandlerError = options.onHandlerError ?? (() => {});
  const connections = new Set<Http1Connection>();
  let dirty: Http1Connection[] = [];
  let flushScheduled = false;
  let closing: Promise<void> | null = null;
  let allClosed: (() => void) | null = null;

  const flushAll = (): void => {
    flushScheduled = false;
    const batch = dirty;
    dirty = [];
    for (const connection of batch) connection.flush();
  };

  const context: ConnectionContext = {
    handler,
    limits,
    timeouts,
    maxPipelinedRequests: positive('maxPipelinedRequests', options.maxPipelinedRequests, 32),
    now,
    onHandlerError,
    scheduleFlush(connection) {
      dirty.push(connection);
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flushAll);
      }
    },
    closed(connection) {
      connections.delete(connection);
      if (connections.size === 0) allClosed?.();
    },
  };

  const server: Server = createServer({ noDelay: true });
  server.maxConnections = positive('maxConnections', options.maxConnections, 1024);
  server.on('connection', (socket) => {
    if (closing !== null) {
      socket.destroy();
      return;
    }
    connections.add(new Http1Connection(socket, context));
  });
  // Accept errors (EMFILE and the like) must not crash the process; the listener keeps going.
  server.on('error', () => {});

  // One sweep over the connections replaces a timer per request; its period bounds how late a
  // timeout fires (a quarter of the shortest, at most a second).
  const shortest = Math.min(timeouts.headersTimeoutMs, timeouts.bodyTimeoutMs, timeouts.keepAliveTimeoutMs, timeouts.lingerMs);
  let sweeper: NodeJS.Timeout | null = null;
  const sweep = (): void => {
    const at = now();
    for (const connection of connections) if (connection.deadline <= at) connection.onDeadline();
  };

  return {
    get fd() {
      // The handle's descriptor is not public API; it is how another thread shares the socket.
      const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
      return typeof fd === 'number' && fd >= 0 ? fd : null;
    },
    get connectionCount() {
      return connections.size;
    },
    listen(target) {
      return new Promise<AddressInfo>((resolve, reject) => {
        const failed = (error: Error): void => reject(error);
        server.once('error', failed);
        const listening = (): void => {
          server.off('error', failed);
          sweeper = setInterval(sweep, Math.max(5, Math.min(1_000, Math.floor(shortest / 4))));
          sweeper.unref();
          resolve(server.address() as AddressInfo);
        };
        if ('fd' in target) server.listen({ fd: target.fd }, listening);
        else server.listen(target.port, target.host, listening);
      });
    },
    close(timeoutMs = 5_000) {
      closing ??= new Promise<void>((resolve) => {
        let serverClosed = false;
        const finish = (): void => {
          if (!serverClosed || connections.size > 0) return;
          clearTimeout(timer);
          if (sweeper !== null) clearInterval(sweeper);
          resolve();
        };
        allClosed = finish;
        const timer = setTimeout(() => {
          for (const connection of connections) connection.destroy();
        }, timeoutMs);
        timer.unref();
        server.close(() => {
          serverClosed = true;
          finish();
        });
        for (const connection of [...connections]) connection.shutdown();
      });
      return closing;
    },
  };
}
