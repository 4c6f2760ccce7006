/**
 * `POST /api/v1/cfssl/newcert` (CFSSL `api/generator/generator.go:CertGeneratorHandler`, behaviour
 * doc 3.1, 7.6–7.8): generate a key and a CSR from a certificate request, sign it with the signer
 * of `label` under `profile`, and return key, CSR, certificate and their digests (plus an optimal
 * bundle when asked). The work is the issuer's newcert use case; this operation decodes the body,
 * hands the issuer the request's task runner and bundle step, and shapes CFSSL's result.
 */
import { NEWCERT_TASKS, decodeNewCertificateRequest } from '@certsmith/issuer';
import * as z from 'zod';
import { bundleTask } from '@certsmith/bundler';
import { defineOperation } from '../operation.js';
import { issueCall } from './issue-options.js';
import type { IssueOperationOptions } from './issue-options.js';
import { newcertResultSchema } from './issue-result-schemas.js';
import type { NewcertResult } from './issue-result-schemas.js';

/**
 * Body of newcert, for validation and OpenAPI. Keys are matched case-insensitively and typed by the
 * issuer's Go-compatible decoder (`decodeNewCertificateRequest`), so the schema only documents them
 * — and requires `request`: CFSSL decodes `{}` and `null` onto its defaults and issues a certificate
 * with an empty subject; certsmith answers 400 `request is required` (a deliberate difference).
 */
export const newcertRequestSchema = z
  .looseObject({
    request: z.unknown().optional().describe('CFSSL certificate request (required): CN, names, hosts, key {algo, size}, serialnumber…'),
    profile: z.unknown().optional().describe('signing profile; empty selects the default profile'),
    label: z.unknown().optional().describe('signer label; empty selects the `default` signer'),
    bundle: z.unknown().optional().describe('when true, add an optimal bundle of the new certificate'),
  })
  .refine((body) => Object.keys(body).some((key) => key.toLowerCase() === 'request'), 'request is required')
  .describe('newcert request (keys are case-insensitive, as Go decodes them)');

/** Build the newcert operation. */
export function createNewcertOperation(options: IssueOperationOptions) {
  return defineOperation({
    name: 'newcert',
    method: 'POST',
    body: newcertRequestSchema,
    tasks: [...NEWCERT_TASKS, bundleTask],
    summary: 'Generate a key and CSR, sign it, and return them with digests',
    result: newcertResultSchema,
    async handle(body, context): Promise<NewcertResult> {
      // 400: Go decoding texts, `missing request section`, `ca section only permitted in initca`.
      const issued = await options.issuer.newCertificate(decodeNewCertificateRequest(body), issueCall(options, context));
      for (const message of issued.messages) context.addMessage(message);
      const result: NewcertResult = {
        certificate: issued.certificatePem,
        certificate_request: issued.csrPem,
        private_key: issued.privateKeyPem,
        sums: issued.sums,
      };
      return issued.bundle === undefined ? result : { bundle: issued.bundle, ...result };
    },
  });
}
