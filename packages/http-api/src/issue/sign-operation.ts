/**
 * `POST /api/v1/cfssl/sign` and `/authsign` (CFSSL `api/signhandler/signhandler.go`, behaviour doc
 * 4.4, 4.5, 7.10): sign a client's CSR with the signer of `label` under `profile`, honouring the
 * request's `hosts` (or comma-separated `hostname`), `subject` and `serial`.
 *
 * `/authsign` checks the HMAC token against the `auth_key` (or `prev_auth_key`) of the profile in
 * the policy of the label the inner request names, so a key valid for one label never signs for
 * another (CFSSL issue #950).
 */
import { SIGN_REQUEST_PARSE_MESSAGE, authenticateSignRequest, decodeSignRequest } from '@certsmith/issuer';
import type { SignBody } from '@certsmith/issuer';
import type { SignRequest } from '@certsmith/signer-api';
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import type { BundleResult } from '@certsmith/bundler';
import { defineOperation } from '../operation.js';
import type { OperationContext, RequestLabels } from '../operation.js';
import { bundleTask } from '@certsmith/bundler';
import { csrFactsTask } from './csr-facts-task.js';
import { goField, peekAuthenticatedLabel } from './go-body.js';
import { bundleIssuedCertificate } from './issue-options.js';
import { signResultSchema } from './issue-result-schemas.js';
import type { IssueOperationOptions } from './issue-options.js';
import { runCountingWorkerSign, selectSigningProfile, signOnRoute, signsInWorkers, signsLocally } from './signing.js';
import { signInWorkerTask } from './sign-in-worker-task.js';
import type { SignerRoute } from './signer-directory.js';

/** Body of `/sign` (decoded by the issuer with Go's rules; keys are case-insensitive). */
export const signRequestSchema = z
  .looseObject({
    certificate_request: z.unknown().optional().describe('PEM certificate request (required)'),
    hostname: z.unknown().optional().describe('comma-separated hosts; takes precedence over `hosts`'),
    hosts: z.unknown().optional().describe('SANs replacing those of the CSR'),
    subject: z.unknown().optional().describe('{CN, names, SerialNumber} replacing the CSR subject fields'),
    profile: z.unknown().optional(),
    label: z.unknown().optional(),
    serial: z.unknown().optional().describe('serial number, for profiles with ClientProvidesSerialNumbers'),
    bundle: z.unknown().optional().describe('when true, add an optimal bundle'),
  })
  .describe('CFSSL sign request');

/** Body of `/authsign`: CFSSL `auth.AuthenticatedRequest`. */
export const authsignRequestSchema = z
  .looseObject({
    timestamp: z.unknown().optional().describe('unix seconds (not checked, as CFSSL)'),
    token: z.unknown().optional().describe('base64 HMAC-SHA256 of the request bytes with the profile auth key'),
    request: z.unknown().optional().describe('base64 of the JSON sign request'),
    remote_address: z.unknown().optional(),
  })
  .describe('CFSSL authenticated sign request');

/** The sign / authsign result (Go map: alphabetical keys). */
export interface SignResultBody {
  bundle?: BundleResult;
  certificate: string;
}

/** Sign a decoded, already authorised request on `route` and add the optional bundle. */
async function signDecoded(
  body: SignBody,
  route: SignerRoute,
  authenticated: boolean,
  options: IssueOperationOptions,
  context: OperationContext,
): Promise<SignResultBody> {
  const profile = selectSigningProfile(route, body.profile, authenticated);
  const { bundle: wantsBundle, ...request } = body;
  const signRequest: SignRequest = request;
  // CSR parsing and its signature check are CPU work: a worker does them for local signers; a
  // remote signer parses the CSR itself.
  let certificatePem: string;
  if (signsInWorkers(route)) {
    // A local key recreated in the workers: CSR check, certificate and signature in one task.
    const signed = await runCountingWorkerSign(route, () => context.runTask(signInWorkerTask, { label: route.label, request: signRequest, profile: body.profile ?? '' }));
    certificatePem = signed.certificatePem;
  } else {
    const facts = signsLocally(route) ? await context.runTask(csrFactsTask, { csrPem: signRequest.certificate_request }) : undefined;
    certificatePem = (await signOnRoute(route, { request: signRequest, facts, profile, timeoutMs: options.signerTimeoutMs })).certificatePem;
  }
  const result: SignResultBody = { certificate: certificatePem };
  if (wantsBundle) {
    const bundle = await bundleIssuedCertificate(certificatePem, options, context);
    if (bundle !== null) return { bundle, ...result };
  }
  return result;
}

/** Build the `/sign` operation. */
export function createSignOperation(options: IssueOperationOptions) {
  return defineOperation({
    name: 'sign',
    method: 'POST',
    body: signRequestSchema,
    // CFSSL's text for any body json.Unmarshal rejects (behaviour doc 4.5).
    invalidBodyMessage: SIGN_REQUEST_PARSE_MESSAGE,
    tasks: [csrFactsTask, signInWorkerTask, bundleTask],
    summary: 'Sign a certificate request',
    result: signResultSchema,
    async handle(raw, context): Promise<SignResultBody> {
      // 400 `Unable to parse sign request`, `missing parameter 'certificate_request'`.
      const body = decodeSignRequest(raw);
      const route = options.signers.route(body.label);
      return signDecoded(body, route, false, options, context);
    },
  });
}

/** Build the `/authsign` operation. */
export function createAuthsignOperation(options: IssueOperationOptions) {
  return defineOperation({
    name: 'authsign',
    method: 'POST',
    body: authsignRequestSchema,
    tasks: [csrFactsTask, signInWorkerTask, bundleTask],
    summary: 'Sign a certificate request authenticated with an HMAC token',
    result: signResultSchema,
    // The label and profile are inside the base64 `request`; the token is never logged.
    requestLabels: authsignRequestLabels,
    async handle(raw, context): Promise<SignResultBody> {
      // The token must be checked with the keys of the label the request will be signed for.
      const route = options.signers.route(peekAuthenticatedLabel(raw));
      // 400: Go text, `Unable to parse authenticated sign request`, `no authentication provider`,
      // `invalid token`, `missing parameter 'certificate_request'`; 5400 unknown profile.
      const body = authenticateSignRequest(raw, route.policy);
      const signingRoute = options.signers.route(body.label);
      if (signingRoute.label !== route.label || signingRoute.forwardLabel !== route.forwardLabel) {
        // Only reachable if the first look at the label disagreed with the full decoding: never
        // sign for a label whose keys did not check the token.
        throw new BadRequestError('invalid token');
      }
      return signDecoded(body, route, true, options, context);
    },
  });
}

/**
 * The label and profile of an `/authsign` body's base64 inner request, for the request log line
 * (the token and the CSR are never logged). Anything unreadable gives nothing: the handler reports it.
 */
export function authsignRequestLabels(body: Record<string, unknown>): RequestLabels {
  const encoded = goField(body, 'request');
  if (typeof encoded !== 'string') return {};
  try {
    const inner = decodeSignRequest(JSON.parse(Buffer.from(encoded, 'base64').toString('utf8')), { requireCsr: false });
    return { label: inner.label, profile: inner.profile };
  } catch {
    return {};
  }
}
