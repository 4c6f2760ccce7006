/**
 * `POST /api/v1/cfssl/info` (CFSSL `api/info/info.go`, behaviour doc 4.1, 4.2, 7.10): the CA
 * certificate of the signer of `label` (trimmed PEM) with the `usages` and `expiry` of `profile`.
 * A remote signer answers from its remote CA (`/info` there, never authenticated).
 */
import { decodeInfoRequest } from '@certsmith/issuer';
import type { InfoResult } from '@certsmith/signer-api';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { infoResultSchema } from './issue-result-schemas.js';
import type { IssueOperationOptions } from './issue-options.js';

/** Body of `/info` (CFSSL `info.Req`; keys case-insensitive). */
export const infoRequestSchema = z
  .looseObject({
    label: z.unknown().optional().describe('signer label; empty selects the `default` signer'),
    profile: z.unknown().optional().describe('profile whose usages and expiry are reported; empty selects the default'),
  })
  .describe('CFSSL info request');

/** Build the `/info` operation. Unknown label → 5200; unknown profile of a local signer → 5400. */
export function createInfoOperation(options: Pick<IssueOperationOptions, 'issuer'>) {
  return defineOperation({
    name: 'info',
    method: 'POST',
    body: infoRequestSchema,
    summary: 'Describe the signer: CA certificate, usages and expiry of a profile',
    result: infoResultSchema,
    async handle(body): Promise<InfoResult> {
      const info = await options.issuer.info(decodeInfoRequest(body));
      // Key order of CFSSL's `info.Resp`: certificate, usages, expiry.
      return { certificate: info.certificate, usages: info.usages, expiry: info.expiry };
    },
  });
}
