/**
 * authsign's request check (CFSSL `api/signhandler` `AuthHandler`, behaviour doc 4.4, 4.5): decode
 * the outer `auth.AuthenticatedRequest`, verify the HMAC token over the exact inner bytes with the
 * selected profile's `auth_key` (or `prev_auth_key`), and hand back the inner sign request.
 */
import { verifyAuthenticatedRequest } from '@certsmith/signer-api';
import { BadRequestError } from '@certsmith/x509-core';

import type { SignBody } from './certificate-request.js';
import { decodeSignRequest } from './certificate-request.js';
import type { GoType } from './go-json.js';
import { decodeGo, goBytes } from './go-json.js';
import { parseGoJson } from './go-json-text.js';
import type { SigningPolicy } from './signing-policy.js';
import { selectProfile } from './signing-policy.js';

const authenticatedRequestType: GoType = {
  kind: 'struct',
  goName: 'auth.AuthenticatedRequest',
  structName: 'AuthenticatedRequest',
  fields: [
    { json: 'timestamp', prop: 'timestamp', type: { kind: 'int', goName: 'int64' } },
    { json: 'remote_address', prop: 'remoteAddress', type: goBytes },
    { json: 'token', prop: 'token', type: goBytes },
    { json: 'request', prop: 'request', type: goBytes },
  ],
};

/**
 * authsign: decode and verify an authenticated request (behaviour doc 4.4, 4.5) and return the
 * inner sign request, ready for {@link signCertificateRequest}. Errors, in CFSSL's order: outer
 * body → 400 Go JSON text; inner → 400 `Unable to parse authenticated sign request`; profile
 * without auth key → 400 `no authentication provider`; bad token (neither `auth_key` nor
 * `prev_auth_key`) → 400 `invalid token`; no CSR → 400 `missing parameter 'certificate_request'`.
 * An unknown profile → 5400 (certsmith's stricter rule).
 */
export function authenticateSignRequest(body: unknown, policy: SigningPolicy): SignBody {
  const outer = decodeGo(body, authenticatedRequestType, {}, { structName: 'AuthenticatedRequest', path: [] }) as {
    token?: Uint8Array | null;
    request?: Uint8Array | null;
  };
  const requestBytes = outer.request ?? new Uint8Array();
  let inner: unknown;
  try {
    // Read as Go reads it: exact number literals, duplicate keys refused (go-json-text.ts).
    inner = parseGoJson(new TextDecoder().decode(requestBytes));
  } catch (cause) {
    throw new BadRequestError('Unable to parse authenticated sign request', { cause });
  }
  const signBody = decodeSignRequest(inner, { invalidMessage: 'Unable to parse authenticated sign request', requireCsr: false });
  const profile = selectProfile(policy, signBody.profile);
  if (!profile.authKey) throw new BadRequestError('no authentication provider');
  if (!verifyAuthenticatedRequest({ token: outer.token ?? new Uint8Array(), request: requestBytes }, [profile.authKey, profile.prevAuthKey])) {
    throw new BadRequestError('invalid token');
  }
  if (signBody.certificate_request === '') throw new BadRequestError("missing parameter 'certificate_request'");
  return signBody;
}

/**
 * The `label` and `profile` inside an authenticated request's base64 `request`, read before the
 * token is checked: the token must be checked against the keys of that label's policy (a key of
 * one label must not sign for another, CFSSL issue #950), and the request log names them (never the
 * token or the CSR). Anything unreadable gives `null`: the full decoding reports it with CFSSL's text.
 */
export function peekAuthenticatedSignRequest(body: unknown): { label: string | undefined; profile: string | undefined } | null {
  try {
    const outer = decodeGo(body, authenticatedRequestType, {}, { structName: 'AuthenticatedRequest', path: [] }) as { request?: Uint8Array | null };
    const inner = decodeSignRequest(JSON.parse(new TextDecoder().decode(outer.request ?? new Uint8Array())), { requireCsr: false });
    return { label: inner.label, profile: inner.profile };
  } catch {
    return null;
  }
}
