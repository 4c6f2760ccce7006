/**
 * How `revoke` and `ocspsign` can be protected (CFSSL protects neither, #916): an auth key — the body
 * is then an `authsign`-style `{"token", "request"}`, `request` the base64 of the JSON request and
 * `token` the base64 HMAC-SHA256 of those bytes under the key — and/or a client certificate whose
 * subject CN matches a pattern (verified by the server's mutual TLS).
 */
import { verifyAuthenticatedRequest } from '@certsmith/signer-api';
import { BadRequestError, CertsmithError } from '@certsmith/x509-core';
import { INVALID_CN_MESSAGE } from '../client-auth.js';
import type { OperationContext } from '../operation.js';
import type { ClientCnMatcher } from '../tls-options.js';

/** The protection of one endpoint (nothing given: open, as CFSSL's). */
export interface RequestProtection {
  /** Keys an authenticated request's token may be made with; absent or empty: no token needed. */
  authKeys?: readonly Uint8Array[];
  /** The client certificate CN must match; absent: no client certificate needed. */
  clientCn?: ClientCnMatcher;
}

/** A member as Go's decoder finds it: the exact name, else the first case-insensitive match. */
export function goMember(body: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(body, name)) return body[name];
  const key = Object.keys(body).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : body[key];
}

/**
 * Check `protection` for a request and return the request to decode: the body itself, or the JSON
 * inside an authenticated body.
 * @throws 403 `Invalid CN`; 400 `authentication required`, `invalid token`, or `parseMessage` when the
 *   authenticated request is not JSON.
 */
export function protectedRequest(body: Record<string, unknown>, context: OperationContext, protection: RequestProtection, parseMessage: string): unknown {
  if (protection.clientCn !== undefined) {
    const commonName = context.clientCommonName;
    if (commonName === null || !protection.clientCn.test(commonName)) throw new CertsmithError(403, INVALID_CN_MESSAGE);
  }
  const keys = protection.authKeys ?? [];
  if (keys.length === 0) return body;
  const token = goMember(body, 'token');
  const request = goMember(body, 'request');
  if (typeof token !== 'string' || token === '' || typeof request !== 'string') throw new BadRequestError('authentication required');
  let valid = false;
  try {
    valid = verifyAuthenticatedRequest({ token, request }, keys);
  } catch {
    valid = false;
  }
  if (!valid) throw new BadRequestError('invalid token');
  try {
    return JSON.parse(Buffer.from(request, 'base64').toString('utf8')) as unknown;
  } catch (cause) {
    throw new BadRequestError(parseMessage, { cause });
  }
}
