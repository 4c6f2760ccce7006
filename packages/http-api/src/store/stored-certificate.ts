/**
 * How the inventory endpoints show a row of the certificate store: CFSSL's certdb column names
 * (`serial_number`, `authority_key_identifier`, `ca_label`…, as certadd takes them), times in RFC
 * 3339 UTC, and `null` for "not revoked" and for times CFSSL 1.2.0 did not record.
 */
import { certificateRecordJson } from '@certsmith/cert-store';
import type { CertificateRecordJson, CertificateSummary } from '@certsmith/cert-store';
import * as z from 'zod';
import { schemaMatches } from '../schema-types.js';
import type { SameShape } from '../schema-types.js';

/** One stored certificate as the API returns it (the store's JSON form of a row). */
export type StoredCertificate = CertificateRecordJson;

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

/** The API form of a store row; with `pem` when one is given. */
export function toStoredCertificate(record: CertificateSummary, pem?: string): StoredCertificate {
  return certificateRecordJson(record, pem);
}
