/**
 * `POST /api/v1/cfssl/certadd` (CFSSL `api/certadd/insert.go`, lifecycle spec §3.5): add a
 * certificate issued elsewhere to the store. The body is CFSSL's `AddRequest`, decoded with Go's
 * rules and checked in CFSSL's order with CFSSL's messages (serial, AKI and expiry must match the
 * PEM); the row keeps the values as given. Success is `{}` (CFSSL's serve has no OCSP signer for
 * certadd either). A duplicate (serial, AKI) is 11000 with the driver's text, as CFSSL.
 */
import type { CertificateRowInput, Store } from '@certsmith/cert-store';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { CERTADD_PARSE_MESSAGE, checkAddRequest, decodeAddRequest } from './certadd-request.js';

const rfc3339 = 'RFC 3339 time, e.g. 2027-11-25T23:22:00Z';

/** Body of certadd (decoded with Go's rules: keys case-insensitive, unknown keys ignored). */
export const certaddRequestSchema = z
  .looseObject({
    serial_number: z.unknown().optional().describe('decimal serial number of `pem` (required)'),
    authority_key_identifier: z.unknown().optional().describe('hex of the AKI of `pem` (required); stored as given, so send it lower-case without colons'),
    ca_label: z.unknown().optional().describe('label to record (default "")'),
    status: z.unknown().optional().describe('`good`, `revoked` or `unknown` (required)'),
    reason: z.unknown().optional().describe('CRLReason code, 0–6 or 8–10, for a revoked certificate'),
    expiry: z.unknown().optional().describe(`notAfter of \`pem\` as an ${rfc3339} — with \`Z\`, as CFSSL requires (required)`),
    revoked_at: z.unknown().optional().describe(`${rfc3339} (required when revoked)`),
    pem: z.unknown().optional().describe('the certificate, one PEM block (required)'),
    issued_at: z.unknown().optional().describe(rfc3339),
    not_before: z.unknown().optional().describe(rfc3339),
    metadata: z.unknown().optional().describe('any JSON (default {})'),
    sans: z.unknown().optional().describe('any JSON, conventionally the DNS SANs (default {})'),
    common_name: z.unknown().optional(),
  })
  .describe('CFSSL certadd request (AddRequest)');

/** certadd's result: CFSSL's empty map (`ocsp_response` is never set by serve). */
export const certaddResultSchema = z.object({}).describe('empty on success');

/** Options of {@link createCertaddOperation}. */
export interface CertaddOperationOptions {
  /** The server's store (as `storeForRequests` gives it: 503 when unreachable). */
  store: Store;
  /**
   * Called with the row once it is stored, before answering (the server signs its OCSP response
   * here, so an added certificate is answered by the OCSP responder at once).
   */
  afterInsert?(row: CertificateRowInput): Promise<void>;
}

/** The certadd operation over `store`. */
export function createCertaddOperation(options: CertaddOperationOptions) {
  const { store } = options;
  return defineOperation({
    name: 'certadd',
    method: 'POST',
    body: certaddRequestSchema,
    invalidBodyMessage: CERTADD_PARSE_MESSAGE,
    summary: 'Add a certificate issued elsewhere to the certificate store (CFSSL certadd)',
    result: certaddResultSchema,
    async handle(body): Promise<Record<string, never>> {
      const row = checkAddRequest(decodeAddRequest(body as Record<string, unknown>));
      await store.insertCertificate(row);
      await options.afterInsert?.(row);
      return {};
    },
  });
}
