/**
 * The Node HTTP server around the Koa app: JSON envelopes even for requests Node rejects before Koa
 * sees them (malformed HTTP, unknown methods, oversized headers), listening, and graceful close.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import type Koa from 'koa';
import { errorEnvelope, serializeEnvelope } from './envelope.js';

/** Create an HTTP server for `app` (not yet listening). */
export function createHttpServer(app: Koa): Server {
  const server = createServer(app.callback());
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
  /** `http://<address>:<port>` (IPv6 addresses in brackets). */
  url: string;
}

/** Listen on `host:port` (`port` 0 picks a free port) and report the bound address. */
export async function listen(server: Server, port: number, host: string): Promise<ListeningAddress> {
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
  return { address: bound.address, port: bound.port, url: `http://${hostPart}:${bound.port}` };
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
export async function closeHttpServer(server: Server, options: CloseHttpServerOptions = {}): Promise<boolean> {
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
