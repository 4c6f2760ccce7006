/**
 * zod schema of the certinfo result (`CertinfoResult`), for the OpenAPI document; tied to the type
 * at compile time.
 */
import * as z from 'zod';
import type { CertinfoName, CertinfoResult } from '@certsmith/x509-core';
import { schemaMatches } from './schema-types.js';
import type { SameShape } from './schema-types.js';

/** certinfo's `Name` (Go `omitempty` fields are absent when empty). */
export const certinfoNameSchema = z.object({
  common_name: z.string().optional(),
  serial_number: z.string().optional(),
  country: z.string().optional(),
  organization: z.string().optional(),
  organizational_unit: z.string().optional(),
  locality: z.string().optional(),
  province: z.string().optional(),
  street_address: z.string().optional(),
  postal_code: z.string().optional(),
  names: z.array(z.string()).optional(),
});

/** The `result` of certinfo. */
export const certinfoResultSchema = z.object({
  subject: certinfoNameSchema,
  issuer: certinfoNameSchema,
  serial_number: z.string().optional().describe('decimal'),
  sans: z.array(z.string()).optional(),
  not_before: z.string(),
  not_after: z.string(),
  sigalg: z.string(),
  authority_key_id: z.string(),
  subject_key_id: z.string(),
  pem: z.string(),
});

schemaMatches<SameShape<z.output<typeof certinfoNameSchema>, CertinfoName>>(true);
schemaMatches<SameShape<z.output<typeof certinfoResultSchema>, CertinfoResult>>(true);
