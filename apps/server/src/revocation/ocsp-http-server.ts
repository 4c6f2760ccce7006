/**
 * A stand-alone OCSP responder on node:http (what `certsmith ocspserve` runs): the
 * transport-independent `OcspResponder` behind `createOcspRequestListener` (bodies capped at 64 KiB),
 * with the same connection limits as `serve` — request line and headers within 10 s, the whole
 * request within 20 s, at most 1024 connections, idle keep-alive connections closed after 65 s (past
 * the 60 s of common load balancers) — and a graceful close.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { OcspResponder } from '@certsmith/revocation';
import { createOcspRequestListener } from '@certsmith/revocation';

/** A listening responder. */
export interface OcspHttpServer {
  /** `http://127.0.0.1:8888` (the port actually bound). */
  readonly url: string;
  readonly port: number;
  /** Stop accepting, let in-flight requests finish (up to `timeoutMs`, default 5 s), then resolve. */
  close(timeoutMs?: number): Promise<void>;
}

/** Listen with `responder` on `address`:`port` (0 = any free port). */
export async function startOcspHttpServer(responder: OcspResponder, address: string, port: number): Promise<OcspHttpServer> {
  const server: Server = createServer(
    { keepAliveTimeout: 65_000, headersTimeout: 10_000, requestTimeout: 20_000 },
    createOcspRequestListener(responder),
  );
  server.maxConnections = 1024;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host}:${bound.port}`,
    port: bound.port,
    close(timeoutMs = 5_000) {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const socket of sockets) socket.destroy();
        }, timeoutMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
