/**
 * `POST /api/v1/cfssl/revoke` (CFSSL `api/revoke/revoke.go`, lifecycle spec §3.1): mark a certificate
 * of the store revoked. CFSSL's body — `serial` (decimal), `authority_key_id` (lower-case hex, matched
 * as stored), `reason` (a CRLReason name in any case, or a code) — and CFSSL's answers: 400 `Unable to
 * parse revocation request`, `serial number is required but not provided`, `Invalid reason code`;
 * 11200 `failed to revoke the certificate: certificate not found`; success `{}`.
 *
 * Unlike CFSSL's, the revocation reaches OCSP and the CRL at once: the server signs the certificate's
 * revoked OCSP response and renews its CA's CRL before answering (the `revoke` port does it).
 *
 * CFSSL's revoke has no authentication at all (#916). The operator can require:
 * - an auth key: the body is then `{"token", "request"}` as for `authsign` — `request` the base64 of
 *   the revoke JSON, `token` the base64 HMAC-SHA256 of those bytes under the key — otherwise 400
 *   `authentication required` / `invalid token`;
 * - a client certificate whose subject CN matches a pattern (the server's mutual TLS verified it),
 *   otherwise 403 `Invalid CN`.
 * Deliberate difference: reasons are the CRLReason codes 0–6 and 8–10 (CFSSL: 1–9).
 */
import { parseRevocationReason } from '@certsmith/revocation';
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { goMember, protectedRequest } from './request-protection.js';
import type { RequestProtection } from './request-protection.js';

/** CFSSL's text for a body that is not a revoke request. */
export const REVOKE_PARSE_MESSAGE = 'Unable to parse revocation request';

/** The revoke body (or its authenticated wrapper); types are checked with CFSSL's message. */
export const revokeRequestSchema = z
  .looseObject({
    serial: z.unknown().optional().describe('serial number, decimal, as stored (required)'),
    authority_key_id: z.unknown().optional().describe('AKI of the certificate: lower-case hex without colons, as stored'),
    reason: z.unknown().optional().describe('CRLReason name (`keyCompromise`, any case) or code (0–6, 8–10); default `unspecified`'),
    token: z.unknown().optional().describe('with an auth key: base64 HMAC-SHA256 of the `request` bytes'),
    request: z.unknown().optional().describe('with an auth key: base64 of the JSON revoke request'),
  })
  .describe('CFSSL revoke request');

/** Result schema (OpenAPI): an empty object, as CFSSL. */
export const revokeResultSchema = z.object({}).describe('empty on success');

/** What the revoke operation needs. */
export interface RevokeOperationOptions extends RequestProtection {
  /**
   * Revoke (serial, AKI) with `reason` in the store and update OCSP and CRLs.
   * @throws 11200 when no row has exactly that serial and AKI; 503 when the store is unavailable.
   */
  revoke(serial: string, authorityKeyId: string, reason: number): Promise<void>;
}

function goString(body: Record<string, unknown>, name: string): string {
  const value = goMember(body, name);
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new BadRequestError(REVOKE_PARSE_MESSAGE);
  return value;
}

function decodeRevokeRequest(body: unknown): { serial: string; authorityKeyId: string; reason: number } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new BadRequestError(REVOKE_PARSE_MESSAGE);
  const fields = body as Record<string, unknown>;
  const serial = goString(fields, 'serial');
  const authorityKeyId = goString(fields, 'authority_key_id');
  const reasonText = goString(fields, 'reason');
  if (serial === '') throw new BadRequestError('serial number is required but not provided');
  return { serial, authorityKeyId, reason: parseRevocationReason(reasonText) };
}

/** Build the revoke operation. */
export function createRevokeOperation(options: RevokeOperationOptions) {
  return defineOperation({
    name: 'revoke',
    method: 'POST',
    body: revokeRequestSchema,
    invalidBodyMessage: REVOKE_PARSE_MESSAGE,
    summary: (options.authKeys?.length ?? 0) > 0 ? 'Revoke a certificate of the store (authenticated: {token, request})' : 'Revoke a certificate of the store',
    result: revokeResultSchema,
    async handle(body, context): Promise<Record<string, never>> {
      const request = protectedRequest(body, context, options, REVOKE_PARSE_MESSAGE);
      const { serial, authorityKeyId, reason } = decodeRevokeRequest(request);
      await options.revoke(serial, authorityKeyId, reason);
      return {};
    },
  });
}
