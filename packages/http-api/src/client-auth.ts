/**
 * Client-certificate CN check of `cfssl serve -mutual-tls-cn REGEX` (behaviour doc 5): with mutual
 * TLS, a request is served only when the subject CN of the client's certificate matches the
 * expression (Go's `regexp.MatchString`: unanchored); otherwise it is answered 403 `Invalid CN`
 * before any route runs — for every path, `health` included, as CFSSL wraps its whole mux. certsmith
 * sends the JSON envelope (`{"code":403,"message":"Invalid CN"}`) where CFSSL sends the plain text.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TLSSocket } from 'node:tls';
import { errorEnvelope, serializeEnvelope } from './envelope.js';
import type { ClientCnMatcher } from './tls-options.js';

/** HTTP status and envelope code of a refused client (CFSSL `http.StatusForbidden`). */
const FORBIDDEN = 403;

/** CFSSL's message for a client certificate whose CN does not match. */
export const INVALID_CN_MESSAGE = 'Invalid CN';

/**
 * The subject CN of the peer certificate of a TLS connection, `''` when the certificate has none,
 * `null` without a TLS peer certificate. With several CN attributes the last one counts, as Go's
 * `pkix.Name.CommonName`.
 */
export function clientCommonName(socket: unknown): string | null {
  if (!(socket instanceof TLSSocket)) return null;
  const certificate = socket.getPeerCertificate(false);
  if (certificate === null || typeof certificate !== 'object' || Object.keys(certificate).length === 0) return null;
  const cn = (certificate.subject as unknown as Record<string, string | string[] | undefined> | undefined)?.['CN'];
  if (Array.isArray(cn)) return cn.at(-1) ?? '';
  return cn ?? '';
}

/** Decides per request whether the client's certificate CN is allowed. */
export interface ClientCnGuard {
  /**
   * Whether the request may be served, and the CN of its client certificate (`null` without one,
   * for the log line of a refusal).
   */
  check(request: IncomingMessage): { allowed: boolean; commonName: string | null };
  /** Answer a refused request: 403 envelope `Invalid CN`. */
  reject(response: ServerResponse): void;
}

/** A guard for `pattern` (see {@link ClientCnGuard}). Requests without a client certificate are refused. */
export function createClientCnGuard(pattern: ClientCnMatcher): ClientCnGuard {
  // A global or sticky RegExp keeps `lastIndex` between calls; matching must not depend on history.
  const expression = pattern instanceof RegExp && (pattern.global || pattern.sticky) ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, '')) : pattern;
  return {
    check(request) {
      const commonName = clientCommonName(request.socket);
      return { allowed: commonName !== null && expression.test(commonName), commonName };
    },
    reject(response) {
      const body = serializeEnvelope(errorEnvelope(FORBIDDEN, INVALID_CN_MESSAGE));
      response.writeHead(FORBIDDEN, {
        'Content-Type': 'application/json',
        'Content-Length': Buffer.byteLength(body),
        'X-Content-Type-Options': 'nosniff',
      });
      response.end(body);
    },
  };
}
