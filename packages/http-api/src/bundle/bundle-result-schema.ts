/**
 * zod schema of the bundle result (`BundleResult`), for the OpenAPI document. Tied to the
 * TypeScript type at compile time; the e2e tests validate live responses against the document.
 */
import * as z from 'zod';
import { schemaMatches } from '../schema-types.js';
import type { SameShape } from '../schema-types.js';
import type { BundleResult, BundleStatus } from '@certsmith/bundler';

/** `status` of a bundle (CFSSL `bundler.BundleStatus`, key order as CFSSL). */
export const bundleStatusSchema = z.object({
  rebundled: z.boolean().describe('the returned chain differs from the input'),
  expiring_SKIs: z.array(z.string()).nullable().describe('SKIs (upper-case hex) of certificates expiring within 30 days'),
  untrusted_root_stores: z.array(z.string()).nullable().describe('platforms that would not trust the chain'),
  messages: z.array(z.string()).nullable().describe('expiry, hash-function, ECDSA and ubiquity warnings'),
  code: z.number().int().describe('bit 1: expiring; bit 2: not ubiquitous'),
});

/** The bundle JSON (CFSSL `bundler.Bundle.MarshalJSON`, keys alphabetical). */
export const bundleResultSchema = z.object({
  bundle: z.string().describe('the chain as PEM, leaf first, without the root'),
  crl_support: z.boolean(),
  crt: z.string().describe('the leaf as PEM'),
  expires: z.string().describe('earliest NotAfter of the chain (RFC 3339)'),
  hostnames: z.array(z.string()),
  issuer: z.string(),
  key: z.string().describe('`private_key` of the request re-encoded as PEM, `""` without one'),
  key_size: z.number().int(),
  key_type: z.string(),
  leaf_expires: z.string(),
  ocsp: z.array(z.string()).nullable(),
  ocsp_support: z.boolean(),
  root: z.string().describe('the trusted root as PEM (`""` for the force flavor)'),
  signature: z.string(),
  status: bundleStatusSchema,
  subject: z.string(),
});

schemaMatches<SameShape<z.output<typeof bundleStatusSchema>, BundleStatus>>(true);
schemaMatches<SameShape<z.output<typeof bundleResultSchema>, BundleResult>>(true);
