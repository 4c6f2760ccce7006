/**
 * The issuing results (newcert, newkey, sign/authsign, info) as CFSSL writes them, and their zod
 * schemas for the OpenAPI document; each schema is tied to its TypeScript type at compile time.
 */
import type { Sums } from '@certsmith/issuer';
import type { InfoResult } from '@certsmith/signer-api';
import * as z from 'zod';
import type { BundleResult } from '@certsmith/bundler';
import { bundleResultSchema } from '../bundle/bundle-result-schema.js';
import { schemaMatches } from '../schema-types.js';
import type { SameShape } from '../schema-types.js';

/** The newcert result; keys in CFSSL's (alphabetical, Go map) order. */
export interface NewcertResult {
  bundle?: BundleResult;
  certificate: string;
  certificate_request: string;
  private_key: string;
  sums: { certificate: Sums; certificate_request: Sums };
}

/** The newkey result, keys in CFSSL's struct order. */
export interface NewkeyResult {
  private_key: string;
  certificate_request: string;
  sums: { certificate_request: Sums };
}

/** The sign / authsign result (Go map: alphabetical keys). */
export interface SignResultBody {
  bundle?: BundleResult;
  certificate: string;
}


/** Digests of a DER object, upper-case hex (CFSSL `computeSum`). */
export const sumsSchema = z.object({
  md5: z.string(),
  'sha-1': z.string(),
  'sha-256': z.string(),
});

/** newcert's `result`. */
export const newcertResultSchema = z.object({
  bundle: bundleResultSchema.optional().describe('present when the request had `"bundle": true` and the server has a bundler'),
  certificate: z.string().describe('PEM'),
  certificate_request: z.string().describe('PEM'),
  private_key: z.string().describe('PEM; generated for this response only, never stored'),
  sums: z.object({ certificate: sumsSchema, certificate_request: sumsSchema }),
});

/** newkey's `result`. */
export const newkeyResultSchema = z.object({
  private_key: z.string(),
  certificate_request: z.string(),
  sums: z.object({ certificate_request: sumsSchema }),
});

/** sign's and authsign's `result`. */
export const signResultSchema = z.object({
  bundle: bundleResultSchema.optional(),
  certificate: z.string().describe('PEM'),
});

/** info's `result` (CFSSL `info.Resp`). */
export const infoResultSchema = z.object({
  certificate: z.string().describe('CA certificate PEM, without trailing newline'),
  usages: z.array(z.string()),
  expiry: z.string().describe('Go duration, e.g. `8760h`'),
});

schemaMatches<SameShape<z.output<typeof sumsSchema>, Sums>>(true);
schemaMatches<SameShape<z.output<typeof newcertResultSchema>, NewcertResult>>(true);
schemaMatches<SameShape<z.output<typeof newkeyResultSchema>, NewkeyResult>>(true);
schemaMatches<SameShape<z.output<typeof signResultSchema>, SignResultBody>>(true);
schemaMatches<SameShape<z.output<typeof infoResultSchema>, InfoResult>>(true);
