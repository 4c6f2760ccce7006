/**
 * A handler mounted at a path prefix that speaks its own protocol over HTTP rather than CFSSL's JSON
 * envelope — the OCSP responder inside `serve` (RFC 6960: DER requests in the POST body or the GET
 * path, DER answers). It sees the raw method, path, headers and body and answers status, headers and
 * bytes; the app still logs the request, counts it in the metrics and applies the body limits.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The request a {@link MountedHandler} receives. */
export interface MountedRequest {
  method: string;
  /** The request path as sent (not decoded), without the query string. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body of a POST (empty for other methods). */
  body: Uint8Array;
}

/** What a {@link MountedHandler} answers. */
export interface MountedResponse {
  status: number;
  headers: Readonly<Record<string, string>>;
  body: Uint8Array;
}

/** A handler served for a path and everything below it. */
export interface MountedHandler {
  /** For logs and metrics (`operation` / `endpoint`), e.g. `ocsp`. */
  readonly name: string;
  /** The mount path, e.g. `/ocsp`: that path and every path below it (`/ocsp/…`). */
  readonly path: string;
  /** Largest POST body read (default: the app's `maxBodyBytes`). */
  readonly maxBodyBytes?: number;
  /** Answer one request; rejecting answers the envelope's 500. */
  handle(request: MountedRequest): Promise<MountedResponse>;
}

/** True when `path` is `mount` or below it (`/ocsp`, `/ocsp/`, `/ocsp/MEIw…`). */
export function isUnderMount(path: string, mount: string): boolean {
  const prefix = mount.endsWith('/') ? mount.slice(0, -1) : mount;
  return path === prefix || path.startsWith(`${prefix}/`);
}
