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
import { setTimeout as delay } from 'node:timers/promises';
import { Server as TlsServer } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { createClientCnGuard } from './client-auth.js';
import { errorEnvelope, serializeEnvelope } from './envelope.js';
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
}

/** How long an idle keep-alive connection stays open (see {@link createHttpServer}). */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Create an HTTP server for `app` (not yet listening); HTTPS when `options.tls` is given. */
export function createHttpServer(app: Koa): Server;
export function createHttpServer(app: Koa, options: HttpServerOptions): ApiServer;
export function createHttpServer(app: Koa, options: HttpServerOptions = {}): ApiServer {
  const tls = options.tls;
  const logger = options.logger;
  const callback = app.callback();
  let listener: (request: IncomingMessage, response: ServerResponse) => void = callback;
  if (tls?.clientCa !== undefined && tls.clientCn !== undefined) {
    const guard = createClientCnGuard(tls.clientCn);
    listener = (request, response) => {
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
  let server: ApiServer;
  if (tls === undefined) {
    server = createServer(listener);
  } else {
    checkTlsConfig(tls);
    const httpsServer = createHttpsServer(toHttpsServerOptions(tls), listener);
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
  // usual 60 s of load balancers while still reaping abandoned sockets. Headers must be allowed a
  // little longer than the idle time, as Node requires.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Node's parser rejects unknown methods (e.g. `FOO`) and malformed requests before any handler
    // runs, with a bare 400; answer in the envelope like every other error.
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
    const message = status === 431 ? 'request header fields too large' : 'malformed HTTP request';
    const body = serializeEnvelope(errorEnvelope(status, message));
    socket.end(
      `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
        'Content-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
  return server;
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
