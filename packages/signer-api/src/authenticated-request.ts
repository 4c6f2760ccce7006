/**
 * CFSSL's authenticated requests (`auth/auth.go`, behaviour doc 4.4): `{"timestamp": <unix s>,
 * "token": base64(T), "request": base64(R)}` with T = HMAC-SHA256(key, R) over the *exact* request
 * bytes (the standard provider has no additional data). Verification recomputes the HMAC over the
 * decoded bytes and compares in constant time; `prev_auth_key` is accepted too so keys can rotate.
 * Timestamp and remote address are not checked, as in CFSSL.
 *
 * Part of the contract because both ends speak it: a remote-signer plugin authenticates the sign
 * requests it forwards (`/authsign` of multirootca, CFSSL or certsmith), and the issuer checks the
 * tokens of `/authsign` requests it receives.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The JSON object sent to `/authsign`. */
export interface AuthenticatedRequest {
  timestamp: number;
  /** base64 of the remote address; omitted when empty. */
  remote_address?: string;
  /** base64 HMAC-SHA256 token. */
  token: string;
  /** base64 of the SignRequest JSON bytes. */
  request: string;
}

const encoder = new TextEncoder();

function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === 'string' ? encoder.encode(value) : value;
}

function fromBase64(value: string | Uint8Array): Uint8Array {
  if (typeof value !== 'string') return value;
  const buffer = Buffer.from(value, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/** HMAC-SHA256 of `request` under `key` (the standard provider's `Token`). */
export function computeAuthToken(request: Uint8Array, key: Uint8Array): Uint8Array {
  const digest = createHmac('sha256', key).update(request).digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.byteLength);
}

/**
 * Build an authenticated request for `requestJson` (a string is UTF-8 encoded; pass bytes to sign
 * exactly those). `timestamp` defaults to now.
 */
export function createAuthenticatedRequest(
  requestJson: string | Uint8Array,
  key: Uint8Array,
  options: { timestamp?: number; remoteAddress?: string } = {},
): AuthenticatedRequest {
  const request = toBytes(requestJson);
  const out: AuthenticatedRequest = {
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    token: Buffer.from(computeAuthToken(request, key)).toString('base64'),
    request: Buffer.from(request).toString('base64'),
  };
  if (options.remoteAddress) out.remote_address = Buffer.from(options.remoteAddress).toString('base64');
  return out;
}

/**
 * True when `token` is the HMAC of the decoded `request` bytes under one of `keys` (current and
 * previous key). `token`/`request` are base64 text as on the wire, or already decoded bytes.
 * Every key is tried (no early exit) and compared with `timingSafeEqual`.
 */
export function verifyAuthenticatedRequest(
  authenticated: { token: string | Uint8Array; request: string | Uint8Array; timestamp?: number },
  keys: Uint8Array | readonly (Uint8Array | null | undefined)[],
): boolean {
  const token = fromBase64(authenticated.token);
  const request = fromBase64(authenticated.request);
  const candidates = keys instanceof Uint8Array ? [keys] : keys;
  let valid = false;
  for (const key of candidates) {
    if (!key) continue;
    const expected = computeAuthToken(request, key);
    if (expected.length === token.length && timingSafeEqual(expected, token)) valid = true;
  }
  return valid;
}

/** The decoded SignRequest bytes of an authenticated request (to parse after verification). */
export function decodeAuthenticatedRequestBody(authenticated: { request: string | Uint8Array }): Uint8Array {
  return fromBase64(authenticated.request);
}
