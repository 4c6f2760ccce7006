/**
 * `POST /api/v1/cfssl/ocspsign` (CFSSL `api/ocsp/ocspsign.go`, lifecycle spec §3.4): sign an OCSP
 * response for a certificate with the status the request gives. CFSSL's body, checks, codes and
 * messages — `Unable to parse sign request`, `Malformed certificate`, `Malformed revocation time`,
 * `Unsupported hash algorithm in request`, 8100 `Certificate not issued by this issuer`, 8200
 * `Invalid revocation status` — and, as CFSSL, the database is not touched.
 *
 * CFSSL signs with the one `-ca`/`-responder` pair it was started with; certsmith signs with the
 * OCSP signer of the CA that issued the certificate (its AKI, else its issuer name), among every CA
 * the server revokes for: the CA itself through its signer (an HSM key works) or its delegated
 * responder. A certificate none of them issued is 8100, as CFSSL answers for a foreign one.
 */
import type { OcspSigningIdentity } from '@certsmith/revocation';
import { OcspIssuerMismatchError, decodeOcspSignRequest, signOcspRequest } from '@certsmith/revocation';
import type { Certificate } from '@certsmith/x509-core';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { protectedRequest } from './request-protection.js';
import type { RequestProtection } from './request-protection.js';

/** CFSSL's text for a body that is not a sign request. */
export const OCSPSIGN_PARSE_MESSAGE = 'Unable to parse sign request';

/** The ocspsign body: CFSSL's member names; types are checked by the decoder with CFSSL's message. */
export const ocspsignRequestSchema = z
  .looseObject({
    certificate: z.unknown().optional().describe('PEM of the certificate the response is about (required)'),
    status: z.unknown().optional().describe('`good` (default), `revoked` or `unknown`'),
    reason: z.unknown().optional().describe('CRLReason code (integer) of a `revoked` status: 0–6 or 8–10'),
    revoked_at: z.unknown().optional().describe('`YYYY-MM-DD` (midnight UTC) or `now` (default) for a `revoked` status'),
    issuer_hash: z.unknown().optional().describe('CertID hash: `SHA1` (default), `SHA256`, `SHA384` or `SHA512`'),
    token: z.unknown().optional().describe('with an auth key: base64 HMAC-SHA256 of the `request` bytes'),
    request: z.unknown().optional().describe('with an auth key: base64 of the JSON ocspsign request'),
  })
  .describe('CFSSL OCSP sign request');

/** The ocspsign result: `{ ocspResponse: <base64 DER OCSPResponse> }`. */
export interface OcspsignResult {
  ocspResponse: string;
}

/** Result schema (OpenAPI). */
export const ocspsignResultSchema = z.object({ ocspResponse: z.string().describe('base64 of the DER OCSPResponse') });

/** What the ocspsign operation needs. */
export interface OcspsignOperationOptions extends RequestProtection {
  /** The OCSP signer of the CA that issued `certificate`, or `undefined` when the server has none. */
  identityFor(certificate: Certificate): OcspSigningIdentity | undefined;
  /** Validity of the responses (CFSSL `-interval`), in ms. */
  intervalMs: number;
}

/** Build the ocspsign operation. */
export function createOcspsignOperation(options: OcspsignOperationOptions) {
  return defineOperation({
    name: 'ocspsign',
    method: 'POST',
    body: ocspsignRequestSchema,
    invalidBodyMessage: OCSPSIGN_PARSE_MESSAGE,
    summary: 'Sign an OCSP response for a certificate with the given status (the store is not changed)',
    result: ocspsignResultSchema,
    async handle(body, context): Promise<OcspsignResult> {
      const request = decodeOcspSignRequest(protectedRequest(body, context, options, OCSPSIGN_PARSE_MESSAGE));
      const identity = options.identityFor(request.certificate);
      if (identity === undefined) throw new OcspIssuerMismatchError();
      const response = await signOcspRequest(identity, request, { intervalMs: options.intervalMs });
      return { ocspResponse: Buffer.from(response.der).toString('base64') };
    },
  });
}
