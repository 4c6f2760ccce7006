/**
 * The certificate inventory, beyond CFSSL (which has no way to list what it issued):
 *
 * - `GET /api/v1/certsmith/certificates` — filtered by label, status, name (subject CN or a DNS
 *   SAN), issuer (AKI) and expiry window; pages of `limit` (default 100, at most 1000) in a stable
 *   order (expiry, then serial, then AKI) with an opaque `cursor` (keyset pagination: a page deep
 *   in the listing costs what the first does, and rows added meanwhile never shift a page);
 * - `GET /api/v1/certsmith/certificates/{aki}/{serial}` — one certificate with its PEM, looked up
 *   as certinfo looks up (AKI in either case, colons allowed; decimal serial).
 *
 * Both only read, through the server's store.
 */
import type { ListCertificatesOptions, Store } from '@certsmith/cert-store';
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import { JsonText } from '../envelope.js';
import { NotFoundError } from '../errors.js';
import { defineOperation } from '../operation.js';
import { parseRfc3339 } from './rfc3339.js';
import { certificateListResultSchema, storedCertificateSchema, toStoredCertificate } from './stored-certificate.js';
import type { StoredCertificate } from './stored-certificate.js';

/** Where the inventory is served. */
export const CERTIFICATES_PATH = '/api/v1/certsmith/certificates';

/** Default and largest page (the store's). */
const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** A filter value that is text: non-empty, at most `max` characters. */
const text = (name: string, max: number) =>
  z.string().check(z.refine((value) => value !== '' && value.length <= max, `${name} must be 1 to ${max} characters`));

/** A timestamp filter: RFC 3339, e.g. `2027-01-01T00:00:00Z`. */
const timestamp = (name: string) =>
  z.string().transform((value, context) => {
    const parsed = parseRfc3339(value);
    if (parsed === null) {
      context.addIssue({ code: 'custom', message: `${name} must be an RFC 3339 time such as 2027-01-01T00:00:00Z, got ${JSON.stringify(value.slice(0, 64))}` });
      return z.NEVER;
    }
    return parsed.date;
  });

/** An authority key identifier as certinfo takes it: hex in either case, colons allowed. */
const authorityKeyId = (name: string) =>
  z.string().transform((value, context) => {
    const normalised = value.toLowerCase().replaceAll(':', '');
    if (!/^(?:[0-9a-f]{2}){1,64}$/.test(normalised)) {
      context.addIssue({ code: 'custom', message: `${name} must be the hex of a key identifier (colons allowed), got ${JSON.stringify(value.slice(0, 140))}` });
      return z.NEVER;
    }
    return normalised;
  });

/** Query of the list. */
export const listCertificatesQuerySchema = z.strictObject(
  {
    label: text('label', 128).optional().describe('the issuing signer label (`ca_label`)'),
    status: z.enum(['good', 'revoked', 'unknown']).optional().describe('`good`, `revoked` or `unknown`'),
    name: text('name', 253).optional().describe('the subject CN or one of the DNS SANs, exactly'),
    authority_key_id: authorityKeyId('authority_key_id').optional().describe('the issuer: the certificates\' AKI (hex; colons and either case accepted)'),
    expires_after: timestamp('expires_after').optional().describe('only certificates expiring after this RFC 3339 time (e.g. now: the unexpired ones)'),
    expires_before: timestamp('expires_before').optional().describe('only certificates expiring at or before this RFC 3339 time'),
    limit: z
      .string()
      .transform((value, context) => {
        const limit = /^\d{1,4}$/.test(value) ? Number(value) : NaN;
        if (!(limit >= 1 && limit <= MAX_LIMIT)) {
          context.addIssue({ code: 'custom', message: `limit must be an integer from 1 to ${MAX_LIMIT}, got ${JSON.stringify(value.slice(0, 32))}` });
          return z.NEVER;
        }
        return limit;
      })
      .optional()
      .describe(`page size, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT})`),
    cursor: text('cursor', 1024).optional().describe('the `next_cursor` of the previous page (same filters)'),
    include_pem: z.enum(['true', 'false']).optional().describe('`true` adds each certificate\'s PEM'),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown query parameter${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((key) => JSON.stringify(key.slice(0, 64))).join(', ')}` : undefined) },
);

/** Path parameters of a single certificate. */
export const getCertificateQuerySchema = z.strictObject(
  {
    aki: authorityKeyId('aki').describe('the authority key identifier (hex; colons and either case accepted)'),
    serial: z
      .string()
      .check(z.refine((value) => /^\d{1,80}$/.test(value), 'serial must be the decimal serial number'))
      .describe('the serial number in decimal, as certinfo shows it'),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown query parameter${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((key) => JSON.stringify(key.slice(0, 64))).join(', ')}` : undefined) },
);

/** Options of the inventory operations. */
export interface CertificatesOperationOptions {
  /** The server's store (as `storeForRequests` gives it: 503 when unreachable). */
  store: Store;
}

/** `GET /api/v1/certsmith/certificates`. */
export function createListCertificatesOperation(options: CertificatesOperationOptions) {
  const { store } = options;
  return defineOperation({
    name: 'certificates',
    method: 'GET',
    path: CERTIFICATES_PATH,
    query: listCertificatesQuerySchema,
    summary: 'List recorded certificates: filter by label, status, name, issuer and expiry window; pages in expiry order',
    result: certificateListResultSchema,
    // The result is a CertificateListResult (certificateListResultSchema), as JSON text.
    async handle(query): Promise<JsonText> {
      if (query.expires_after !== undefined && query.expires_before !== undefined && query.expires_before < query.expires_after) {
        throw new BadRequestError('expires_before must not be earlier than expires_after');
      }
      const filters: ListCertificatesOptions = { limit: query.limit ?? DEFAULT_LIMIT };
      if (query.label !== undefined) filters.label = query.label;
      if (query.status !== undefined) filters.status = query.status;
      if (query.name !== undefined) filters.name = query.name;
      if (query.authority_key_id !== undefined) filters.authorityKeyId = query.authority_key_id;
      if (query.expires_after !== undefined) filters.expiresAfter = query.expires_after;
      if (query.expires_before !== undefined) filters.expiresBefore = query.expires_before;
      if (query.cursor !== undefined) filters.cursor = query.cursor;
      // The rows come as JSON text made where they are read, without PEMs unless asked for
      // (docs/performance.md, "Inventory pages without their PEMs", "Inventory pages as JSON text").
      const page = await store.listCertificatesJson(filters, query.include_pem === 'true');
      return new JsonText(`{"certificates":${page.certificatesJson},"next_cursor":${JSON.stringify(page.nextCursor)}}`);
    },
  });
}

/** `GET /api/v1/certsmith/certificates/{aki}/{serial}`. */
export function createGetCertificateOperation(options: CertificatesOperationOptions) {
  const { store } = options;
  return defineOperation({
    name: 'certificate',
    method: 'GET',
    path: `${CERTIFICATES_PATH}/{aki}/{serial}`,
    query: getCertificateQuerySchema,
    mayAnswerNotFound: true,
    summary: 'One recorded certificate, with its PEM, by authority key identifier and serial number',
    result: storedCertificateSchema,
    async handle(query): Promise<StoredCertificate> {
      const record = await store.findCertificate(query.serial, query.aki);
      if (record === null) throw new NotFoundError(`no certificate with serial ${query.serial} and authority key identifier ${query.aki}`);
      return toStoredCertificate(record, record.pem);
    },
  });
}
