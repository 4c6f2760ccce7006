/**
 * `POST /api/v1/cfssl/newcert` (CFSSL `api/generator/generator.go:CertGeneratorHandler`, behaviour
 * doc 3.1, 7.6–7.8): generate a key and a CSR from a certificate request, sign it with the signer
 * of `label` under `profile`, and return key, CSR, certificate and their digests (plus an optimal
 * bundle when asked).
 *
 * Where the work happens: decoding and profile checks on the main thread (cheap, and they fail
 * before any key is generated). For a signer the workers recreate (a local key), everything else —
 * key, CSR, certificate, signature, digests — in the one `issue.newcert-in-worker` task. Otherwise
 * key generation, CSR and its facts in the `issue.key-and-csr` worker task, then the certificate and
 * its one signature on the main thread through the signer (HSM and remote signers cannot live in a
 * worker). The bundle, when asked, in the bundle use case's `bundle` task.
 */
import { NO_HOSTS_MESSAGE, computeSums, decodeNewCertificateRequest } from '@certsmith/issuer';
import type { Sums } from '@certsmith/issuer';
import { ErrorCode } from '@certsmith/x509-core';
import * as z from 'zod';
import type { BundleResult } from '@certsmith/bundler';
import { defineOperation } from '../operation.js';
import { bundleTask } from '@certsmith/bundler';
import { bundleIssuedCertificate } from './issue-options.js';
import { newcertResultSchema } from './issue-result-schemas.js';
import type { IssueOperationOptions } from './issue-options.js';
import { keyAndCsrTask } from './key-and-csr-task.js';
import { newcertInWorkerTask } from './newcert-in-worker-task.js';
import { runCountingWorkerSign, selectSigningProfile, signOnRoute, signsInWorkers, signsLocally } from './signing.js';

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

/** The newcert result; keys in CFSSL's (alphabetical, Go map) order. */
export interface NewcertResult {
  bundle?: BundleResult;
  certificate: string;
  certificate_request: string;
  private_key: string;
  sums: { certificate: Sums; certificate_request: Sums };
}

/** Build the newcert operation. */
export function createNewcertOperation(options: IssueOperationOptions) {
  return defineOperation({
    name: 'newcert',
    method: 'POST',
    body: newcertRequestSchema,
    tasks: [keyAndCsrTask, newcertInWorkerTask, bundleTask],
    summary: 'Generate a key and CSR, sign it, and return them with digests',
    result: newcertResultSchema,
    async handle(body, context): Promise<NewcertResult> {
      // 400: Go decoding texts, `missing request section`, `ca section only permitted in initca`.
      const request = decodeNewCertificateRequest(body);
      const route = options.signers.route(request.label);
      const profile = selectSigningProfile(route, request.profile, false);
      const local = signsLocally(route);

      let result: NewcertResult;
      if (signsInWorkers(route)) {
        const issued = await runCountingWorkerSign(route, () =>
          context.runTask(newcertInWorkerTask, { label: route.label, request: request.request, profile: request.profile ?? '' }),
        );
        result = {
          certificate: issued.certificatePem,
          certificate_request: issued.csrPem,
          private_key: issued.privateKeyPem,
          sums: { certificate: issued.certificateSums, certificate_request: issued.csrSums },
        };
      } else {
        const generated = await context.runTask(keyAndCsrTask, { request: request.request, withFacts: local });
        const signed = await signOnRoute(route, {
          request: { certificate_request: generated.csrPem, profile: request.profile ?? '' },
          facts: generated.facts,
          profile,
          timeoutMs: options.signerTimeoutMs,
        });
        result = {
          certificate: signed.certificatePem,
          certificate_request: generated.csrPem,
          private_key: generated.privateKeyPem,
          sums: { certificate: computeSums(signed.certificateDer), certificate_request: generated.csrSums },
        };
      }
      let bundle: BundleResult | null = null;
      if (request.bundle) {
        bundle = await bundleIssuedCertificate(result.certificate, options, context);
        // CFSSL returns at once after the no-bundler message: never a second (no-hosts) message.
        if (bundle === null) return result;
      }
      if ((request.request.hosts ?? []).length === 0) {
        context.addMessage({ code: ErrorCode.PolicyInvalidRequest, message: NO_HOSTS_MESSAGE });
      }
      return bundle === null ? result : { bundle, ...result };
    },
  });
}
