/**
 * A stand-alone OCSP responder (what `certsmith ocspserve` runs): the transport-independent
 * `OcspResponder` behind `@certsmith/http1-server` — node:net, not node:http, for the answer rate
 * (docs/performance.md, "The OCSP responder against `cfssl ocspserve`") — with the limits `serve`
 * has: request line and headers within 10 s, a body within 20 s, at most 1024 connections, idle
 * keep-alive connections closed after 65 s (past the 60 s of common load balancers), 64 KiB bodies,
 * and a graceful close.
 */
import type { AddressInfo } from 'node:net';
import type { Http1Handler, Http1ListenTarget, Http1Server } from '@certsmith/http1-server';
import { createHttp1Server } from '@certsmith/http1-server';
import type { OcspResponder } from '@certsmith/revocation';

/** Connection limits of a responder (each defaults as in `serve`). */
export interface OcspHttpLimits {
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  maxConnections?: number;
  /** Called with a responder failure that escaped it (answered 500). */
  onError?: (error: unknown) => void;
}

/** A listening responder. */
export interface OcspHttpServer {
  /** `http://127.0.0.1:8888` (the port actually bound). */
  readonly url: string;
  readonly port: number;
  /** The listening socket, for a responder thread to share (`listen({ fd })`); `null` once closed. */
  readonly fd: number | null;
  /** Stop accepting, let in-flight requests finish (up to `timeoutMs`, default 5 s), then resolve. */
  close(timeoutMs?: number): Promise<void>;
}

/** Largest OCSP request body read: a request is a few hundred bytes (CFSSL reads without a bound). */
export const OCSP_MAX_BODY_BYTES = 64 * 1024;

/**
 * The HTTP handler of a responder: the request as the responder sees it, its answer as is — without
 * a promise when the source needs none (a responses file).
 */
export function ocspHttpHandler(responder: OcspResponder): Http1Handler {
  return (request) => responder.respond({ method: request.method, path: request.target, headers: request.headers, body: request.body });
}

function urlOf(bound: AddressInfo): string {
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  return `http://${host}:${bound.port}`;
}

/** Listen with `responder` on `target` (`{ port, host }`, port 0 = any free port, or a shared `{ fd }`). */
export async function startOcspHttpServer(responder: OcspResponder, target: Http1ListenTarget, limits: OcspHttpLimits = {}): Promise<OcspHttpServer> {
  const server: Http1Server = createHttp1Server(ocspHttpHandler(responder), {
    maxBodyBytes: OCSP_MAX_BODY_BYTES,
    headersTimeoutMs: limits.headersTimeoutMs,
    bodyTimeoutMs: limits.bodyTimeoutMs,
    keepAliveTimeoutMs: limits.keepAliveTimeoutMs,
    maxConnections: limits.maxConnections,
    onHandlerError: limits.onError,
  });
  const bound = await server.listen(target);
  return {
    url: urlOf(bound),
    port: bound.port,
    get fd() {
      return server.fd;
    },
    close: (timeoutMs) => server.close(timeoutMs),
  };
}
