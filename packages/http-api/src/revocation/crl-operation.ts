/**
 * CRLs over HTTP:
 *
 * - `GET /api/v1/cfssl/crl[?expiry=…][&label=…]` — CFSSL's (`api/crl/crl.go`, lifecycle spec §3.2):
 *   the CRL as base64 DER in the envelope's `result`. certsmith adds `label` (default `default`): one
 *   CRL per CA, where CFSSL lists every CA's revocations in one CRL signed by `-ca`.
 * - `GET /api/v1/certsmith/crl/{label}` — the same CRL as raw DER, `Content-Type:
 *   application/pkix-crl`, for use as a CRL distribution point (CFSSL has none, #1417).
 *
 * CRLs are signed when a revocation happens and when the cached one is due for renewal, never per
 * request: CFSSL's `expiry` (a Go duration: nextUpdate = now + expiry) cannot be honoured without
 * signing on demand, so a valid `expiry` other than the configured validity is answered with the
 * current CRL and a message saying so; an invalid one is 400 with Go's text (CFSSL: 500, code 0).
 */
import type { Crl } from '@certsmith/revocation';
import { parseGoDuration } from '@certsmith/issuer';
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { RawResponse } from '../raw-response.js';

/** What the CRL operations need. */
export interface CrlOperationOptions {
  /**
   * The current CRL of a signer label (`undefined` → `default`).
   * @throws 5200 for an unknown label, 2000 for a signer that cannot sign CRLs, 503 store unavailable.
   */
  crlFor(label: string | undefined): Promise<Crl>;
  /** nextUpdate − thisUpdate of the CRLs (for the `expiry` message). */
  validityMs: number;
}

const crlQuerySchema = z
  .looseObject({
    expiry: z.string().optional().describe('CFSSL: a Go duration for nextUpdate; certsmith serves the CA\'s current CRL (see `messages`)'),
    label: z.string().optional().describe('signer label of the CA (default `default`)'),
  })
  .describe('CRL query');

/** Result schema (OpenAPI): base64 of the DER CRL. */
export const crlResultSchema = z.string().describe('base64 of the DER CRL');

/** `GET /api/v1/cfssl/crl`: CFSSL's JSON form. */
export function createCrlOperation(options: CrlOperationOptions) {
  return defineOperation({
    name: 'crl',
    method: 'GET',
    query: crlQuerySchema,
    summary: 'The current CRL of a CA, base64 DER (one CRL per signer label)',
    result: crlResultSchema,
    async handle(request, context): Promise<string> {
      if (request.expiry !== undefined && request.expiry !== '') {
        let ms: number;
        try {
          ms = parseGoDuration(request.expiry);
        } catch (cause) {
          throw new BadRequestError((cause as Error).message, { cause });
        }
        if (ms !== options.validityMs) {
          context.addMessage({
            code: 400,
            message: `expiry ${request.expiry} not applied: CRLs are signed on revocation and renewal, not per request; this one is valid ${options.validityMs / 3_600_000}h from its thisUpdate (revocation.crl.validity)`,
          });
        }
      }
      const crl = await options.crlFor(request.label);
      return Buffer.from(crl.der).toString('base64');
    },
  });
}

/** Where the raw DER CRL of a label is served. */
export const CRL_FILE_PATH = '/api/v1/certsmith/crl/{label}';

const crlFileSchema = z.object({ label: z.string().min(1).describe('signer label of the CA') }).describe('CRL path parameters');

/** `GET /api/v1/certsmith/crl/{label}`: the raw DER (a CRL distribution point). */
export function createCrlFileOperation(options: CrlOperationOptions) {
  return defineOperation({
    name: 'crl_der',
    path: CRL_FILE_PATH,
    method: 'GET',
    query: crlFileSchema,
    summary: 'The current CRL of a CA as DER (application/pkix-crl), for a CRL distribution point',
    rawContentType: 'application/pkix-crl',
    async handle(request): Promise<RawResponse> {
      const crl = await options.crlFor(request.label);
      const etag = `"${crl.issuerKeyId}-${crl.crlNumber.toString(16)}"`;
      return new RawResponse(crl.der, 'application/pkix-crl', {
        'Last-Modified': crl.thisUpdate.toUTCString(),
        Expires: crl.nextUpdate.toUTCString(),
        ETag: etag,
        // Short: a revocation renews the CRL at once, and caches should notice within a minute.
        'Cache-Control': 'public, max-age=60, no-transform',
      });
    },
  });
}
