/**
 * `POST /api/v1/cfssl/newkey` (CFSSL `api/generator/generator.go:Handler`, behaviour doc 3.9,
 * 7.10): a key and a CSR for a bare certificate request, with the CSR's digests. Needs no signer.
 * The work is the issuer's newkey use case, in its `issue.key-and-csr` task on the request's runner.
 */
import { NEWKEY_TASKS, decodeCertificateRequest, newKey } from '@certsmith/issuer';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { newkeyResultSchema } from './issue-result-schemas.js';
import type { NewkeyResult } from './issue-result-schemas.js';

/** Body of newkey: a bare CFSSL certificate request (decoded by the issuer, keys case-insensitive). */
export const newkeyRequestSchema = z
  .looseObject({
    CN: z.unknown().optional(),
    names: z.unknown().optional(),
    hosts: z.unknown().optional(),
    key: z.unknown().optional().describe('{"algo": "ecdsa" | "rsa" | "ed25519", "size": bits}; default ecdsa 256'),
  })
  .describe('CFSSL certificate request (keys are case-insensitive, as Go decodes them)');

/** The newkey operation. */
export const newkeyOperation = defineOperation({
  name: 'newkey',
  method: 'POST',
  body: newkeyRequestSchema,
  tasks: NEWKEY_TASKS,
  summary: 'Generate a private key and a certificate signing request',
  result: newkeyResultSchema,
  async handle(body, context): Promise<NewkeyResult> {
    // 400 Go decoding texts and `ca section only permitted in initca`; 2400/9300 from the task.
    const generated = await newKey(decodeCertificateRequest(body), { tasks: context });
    return {
      private_key: generated.privateKeyPem,
      certificate_request: generated.csrPem,
      sums: generated.sums,
    };
  },
});
