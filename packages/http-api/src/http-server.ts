/**
 * The Node HTTP(S) server around the Koa app: JSON envelopes even for requests Node rejects before Koa
 * sees them (malformed HTTP, unknown methods, oversized headers), optional TLS with client
 * certificates and the CFSSL `-mutual-tls-cn` check, listening, and graceful close.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { Server as TlsServer } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { createClientCnGuard } from './client-auth.js';
import { errorEnvelope, serializeEnvelope } from './envelope.js';
import { LINGER_MS } from './lingering-close.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './request-body.js';
import { checkTlsConfig, toHttpsServerOptions } from './tls-options.js';
import type { ApiTlsConfig } from './tls-options.js';

/** The API server: plain HTTP, or HTTPS when TLS is configured. */
export type ApiServer = Server | HttpsServer;

/** Options of {@link createHttpServer}. */
export interface HttpServerOptions {
  /** Serve HTTPS with this configuration (checked first: {@link checkTlsConfig} errors are thrown). */
  tls?: ApiTlsConfig;
  /** Where refused clients (`Invalid CN`) and failed TLS handshakes are logged; default: nowhere. */
  logger?: Logger;
  /**
   * How long a client may take to send the request line and headers, in ms, counted from the
   * connection's first byte (or from the connection itself); over it the client gets 408 and the
   * connection is closed. Default {@link DEFAULT_HEADERS_TIMEOUT_MS}.
   */
  headersTimeoutMs?: number;
  /**
   * The app's body timeout (`AppOptions.bodyTimeoutMs`), in ms: the server's own backstop for a
   * whole request is set beyond headers + body + linger, so that the app answers a stalled body
   * with 408 first. Default {@link DEFAULT_BODY_TIMEOUT_MS}.
   */
  bodyTimeoutMs?: number;
  /**
   * Most connections open at once; a connection over it is closed as soon as it is accepted.
   * Default {@link DEFAULT_MAX_CONNECTIONS}; 0 = no limit.
   */
  maxConnections?: number;
}

/** How long an idle keep-alive connection stays open (see {@link createHttpServer}). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Default time to receive the request line and headers: 10 s. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;

/** Default cap on open connections. */
export const DEFAULT_MAX_CONNECTIONS = 1024;

/**
 * How often Node checks for requests over their header or request deadline (its default, 30 s,
 * would let a stalled client hold its connection up to 30 s past the deadline).
 */
const CONNECTIONS_CHECKING_INTERVAL_MS = 1_000;

/**
 * The response to a socket's latest request: a timeout tells by its request whether headers were
 * received, and a client error waits for it so that earlier (pipelined) requests are answered.
 */
const latestResponse = Symbol('certsmith.latestResponse');

/** A socket as the server sees it, with the response to its latest request. */
type ServedSocket = Socket & { [latestResponse]?: ServerResponse };

/** Create an HTTP server for `app` (not yet listening); HTTPS when `options.tls` is given. */
export function createHttpServer(app: Koa): Server;
export function createHttpServer(app: Koa, options: HttpServerOptions): ApiServer;
export function createHttpServer(app: Koa, options: HttpServerOptions = {}): ApiServer {
  const tls = options.tls;
  const logger = options.logger;
  const headersTimeoutMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  for (const [name, value] of [['headersTimeoutMs', headersTimeoutMs], ['bodyTimeoutMs', bodyTimeoutMs], ['maxConnections', maxConnections]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
  const callback = app.callback();
  let listener: (request: IncomingMessage, response: ServerResponse) => void = (request, response) => {
    (request.socket as ServedSocket)[latestResponse] = response;
    void callback(request, response);
  };
  if (tls?.clientCa !== undefined && tls.clientCn !== undefined) {
    const guard = createClientCnGuard(tls.clientCn);
    listener = (request, response) => {
      (request.socket as ServedSocket)[latestResponse] = response;
      const { allowed, commonName } = guard.check(request);
      if (allowed) {
        void callback(request, response);
        return;
      }
      logger?.warn(
        { method: request.method, path: request.url?.split('?')[0], clientCn: commonName, status: 403 },
        'client certificate CN does not match --mutual-tls-cn; request refused (Invalid CN)',
      );
      guard.reject(response);
    };
  }
  // Node's own deadlines: headers from the first byte, and a backstop for the whole request well
  // beyond the app's body timeout plus the lingering close after its 408 (the app answers first, in
  // the envelope, and logs it; the backstop only cuts requests whose body no handler reads).
  const timeouts = {
    headersTimeout: headersTimeoutMs,
    requestTimeout: headersTimeoutMs === 0 || bodyTimeoutMs === 0 ? 0 : headersTimeoutMs + bodyTimeoutMs + LINGER_MS + CONNECTIONS_CHECKING_INTERVAL_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS,
  };
  let server: ApiServer;
  if (tls === undefined) {
    server = createServer(timeouts, listener);
  } else {
    checkTlsConfig(tls);
    // The TLS handshake comes before any header: a client stalling in it is cut after the same time
    // (Node's own default is 120 s).
    const handshakeTimeout = headersTimeoutMs === 0 ? 120_000 : headersTimeoutMs;
    const httpsServer = createHttpsServer({ ...toHttpsServerOptions(tls), ...timeouts, handshakeTimeout }, listener);
    httpsServer.on('secureConnection', (socket: TLSSocket) => {
      // Client-initiated renegotiation (TLS 1.2) only costs the server CPU; nothing here needs it.
      socket.disableRenegotiation();
    });
    httpsServer.on('tlsClientError', (error: NodeJS.ErrnoException, socket: TLSSocket) => {
      // A handshake that fails (no or untrusted client certificate, old protocol version, plain
      // HTTP on the TLS port) has no HTTP response to send: log it and drop the connection.
      logger?.debug({ err: { code: error.code, message: error.message }, remoteAddress: socket.remoteAddress }, 'TLS handshake failed');
      socket.destroy();
    });
    server = httpsServer;
  }
  // Node closes idle keep-alive connections after 5 s; a client or load balancer that keeps them
  // longer (undici, most proxies: 60 s) then sends a request on a socket the server is closing and
  // gets a reset instead of an answer. CFSSL (Go) never closes idle connections; 65 s outlasts the
  // usual 60 s of load balancers while still reaping abandoned sockets. (Since Node 18 the headers
  // deadline runs from a request's first byte, not from the end of the previous response, so it
  // need not outlast the idle time.)
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.maxConnections = maxConnections === 0 ? Infinity : maxConnections;
  // Refused connections are logged at most every 10 s, with their count: a flood must not flood the log.
  let dropped = 0;
  let lastDropLog = -Infinity;
  server.on('drop', () => {
    dropped++;
    const now = performance.now();
    if (now - lastDropLog < 10_000) return;
    logger?.warn({ refused: dropped, maxConnections }, 'connections refused: the connection limit is reached');
    dropped = 0;
    lastDropLog = now;
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: ServedSocket) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const request = socket[latestResponse]?.req;
      if (request !== undefined && !request.complete) {
        // The request's headers arrived and its handler answered (or is answering) without its
        // whole body: the backstop deadline. Nothing more to say on this connection.
        socket.destroy();
        return;
      }
      // Nothing came, or the request line and headers did not arrive in time.
      logger?.debug({ remoteAddress: socket.remoteAddress, headersTimeoutMs }, 'request headers not received in time (408)');
      answerAndClose(socket, 408, 'Request Timeout', `request headers were not received within ${headersTimeoutMs} ms`);
      return;
    }
    // Node's parser rejects unknown methods (e.g. `FOO`) and malformed requests before any handler
    // runs, with a bare 400; answer in the envelope like every other error — after the answers to
    // the requests that came before it on this connection (pipelined), which are still on their way.
    const answer = (): void => {
      if (error.code === 'HPE_HEADER_OVERFLOW') answerAndClose(socket, 431, 'Request Header Fields Too Large', 'request header fields too large');
      else answerAndClose(socket, 400, 'Bad Request', 'malformed HTTP request');
    };
    const pending = socket[latestResponse];
    if (pending !== undefined && !pending.writableFinished && !pending.destroyed) pending.once('finish', answer);
    else answer();
  });
  return server;
}

/**
 * Answer on a socket no request handler owns, in the envelope, and close it. The close lingers for
 * a moment (see `lingering-close.ts`), so that bytes the client is still sending do not reset the
 * connection before it has read this answer.
 */
function answerAndClose(socket: Socket, status: number, reason: string, message: string): void {
  const body = serializeEnvelope(errorEnvelope(status, message));
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(timer));
  // Node's parser keeps reading (and dropping) what else comes; the client's FIN ends the linger.
  socket.once('end', () => socket.destroy());
}

/** Where a server listens. */
export interface ListeningAddress {
  address: string;
  port: number;
  /** `http://<address>:<port>`, `https://…` for a TLS server (IPv6 addresses in brackets). */
  url: string;
}

/** Listen on `host:port` (`port` 0 picks a free port) and report the bound address. */
export async function listen(server: ApiServer, port: number, host: string): Promise<ListeningAddress> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const hostPart = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  const scheme = server instanceof TlsServer ? 'https' : 'http';
  return { address: bound.address, port: bound.port, url: `${scheme}://${hostPart}:${bound.port}` };
}

/** Options of {@link closeHttpServer}. */
export interface CloseHttpServerOptions {
  /** How long in-flight requests may take to finish before their connections are cut; default 10 000 ms. */
  timeoutMs?: number;
}

/**
 * Stop accepting connections, let in-flight requests finish, then resolve. Idle keep-alive
 * connections are closed at once and again as requests finish; after `timeoutMs` every remaining
 * connection is cut. Resolves `true` when everything finished in time.
 */
export async function closeHttpServer(server: ApiServer, options: CloseHttpServerOptions = {}): Promise<boolean> {
  if (!server.listening) return true;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  const deadline = Date.now() + timeoutMs;
  let done = false;
  void closed.then(() => {
    done = true;
  });
  server.closeIdleConnections();
  // Bounded polling: a keep-alive connection becomes idle when its last request finishes.
  while (!done && Date.now() < deadline) {
    await Promise.race([closed, delay(50)]);
    server.closeIdleConnections();
  }
  if (done) return true;
  server.closeAllConnections();
  await closed;
  return false;
}
