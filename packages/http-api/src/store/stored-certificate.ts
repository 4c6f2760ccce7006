/**
 * How the inventory endpoints show a row of the certificate store: CFSSL's certdb column names
 * (`serial_number`, `authority_key_identifier`, `ca_label`…, as certadd takes them), times in RFC
 * 3339 UTC, and `null` for "not revoked" and for times CFSSL 1.2.0 did not record.
 */
import type { CertificateRecord } from '@certsmith/cert-store';
import * as z from 'zod';
import { schemaMatches } from '../schema-types.js';
import type { SameShape } from '../schema-types.js';
import { formatRfc3339 } from './rfc3339.js';

/** One stored certificate as the API returns it. */
export interface StoredCertificate {
  serial_number: string;
  authority_key_identifier: string;
  ca_label: string;
  status: string;
  reason: number;
  expiry: string | null;
  revoked_at: string | null;
  issued_at: string | null;
  not_before: string | null;
  common_name: string | null;
  sans: string[];
  metadata: unknown;
  /** Present when asked for (`include_pem=true` on the list; always on a single certificate). */
  pem?: string;
}

/** The list result. */
export interface CertificateListResult {
  certificates: StoredCertificate[];
  /** Pass as `cursor` for the next page; `null` on the last page. */
  next_cursor: string | null;
}

const time = z.string().nullable();

/** Schema of {@link StoredCertificate} (OpenAPI). */
export const storedCertificateSchema = z.object({
  serial_number: z.string().describe('decimal, as CFSSL stores it'),
  authority_key_identifier: z.string().describe('lower-case hex without colons (empty in rows CFSSL 1.2.0 wrote)'),
  ca_label: z.string().describe('the label of the signer that issued it (`default` for requests without a label); `""` for rows without one'),
  status: z.string().describe('`good`, `revoked` or `unknown`'),
  reason: z.number().int().describe('RFC 5280 CRLReason code when revoked'),
  expiry: time.describe('notAfter, RFC 3339 UTC'),
  revoked_at: time.describe('when it was revoked; null when not revoked'),
  issued_at: time.describe('when the row was written; null for rows without it'),
  not_before: time.describe('notBefore; null for rows without it'),
  common_name: z.string().nullable().describe('subject CN'),
  sans: z.array(z.string()).describe('DNS names, as CFSSL records them'),
  metadata: z.unknown().describe('the row\'s metadata JSON (null from issuing)'),
  pem: z.string().optional().describe('the certificate'),
});

/** Schema of {@link CertificateListResult} (OpenAPI). */
export const certificateListResultSchema = z.object({
  certificates: z.array(storedCertificateSchema),
  next_cursor: z.string().nullable().describe('opaque; give it as `cursor` with the same filters for the next page; null on the last page'),
});

schemaMatches<SameShape<z.output<typeof storedCertificateSchema>, StoredCertificate>>(true);
schemaMatches<SameShape<z.output<typeof certificateListResultSchema>, CertificateListResult>>(true);

const timeText = (date: Date | null): string | null => (date === null ? null : formatRfc3339(date));

/** The API form of a store row; the PEM only when `withPem`. */
export function toStoredCertificate(record: CertificateRecord, withPem: boolean): StoredCertificate {
  return {
    serial_number: record.serial,
    authority_key_identifier: record.authorityKeyId,
    ca_label: record.label,
    status: record.status,
    reason: record.reason,
    expiry: timeText(record.expiry),
    revoked_at: timeText(record.revokedAt),
    issued_at: timeText(record.issuedAt),
    not_before: timeText(record.notBefore),
    common_name: record.commonName,
    sans: record.sans,
    metadata: record.metadata,
    ...(withPem ? { pem: record.pem } : {}),
  };
}
