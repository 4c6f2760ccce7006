/**
 * `POST /api/v1/cfssl/sign` and `/authsign` (CFSSL `api/signhandler/signhandler.go`, behaviour doc
 * 4.4, 4.5, 7.10): sign a client's CSR with the signer of `label` under `profile`, honouring the
 * request's `hosts` (or comma-separated `hostname`), `subject` and `serial`. The work is the
 * issuer's sign / authsign use case (for `/authsign`, the HMAC token is checked against the keys of
 * the label the inner request names: CFSSL issue #950); this operation decodes the body and shapes
 * CFSSL's result.
 */
import { SIGN_REQUEST_PARSE_MESSAGE, SIGN_TASKS, decodeSignRequest, peekAuthenticatedSignRequest } from '@certsmith/issuer';
import type { SignOutcome } from '@certsmith/issuer';
import * as z from 'zod';
import type { BundleResult } from '@certsmith/bundler';
import { bundleTask } from '@certsmith/bundler';
import { defineOperation } from '../operation.js';
import type { OperationContext, RequestLabels } from '../operation.js';
import { issueCall } from './issue-options.js';
import type { IssueOperationOptions } from './issue-options.js';
import { signResultSchema } from './issue-result-schemas.js';
import type { SignResultBody } from './issue-result-schemas.js';

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

/** CFSSL's result of a sign outcome, its messages added to the envelope. */
function signResult(signed: SignOutcome<BundleResult>, context: OperationContext): SignResultBody {
  for (const message of signed.messages) context.addMessage(message);
  const result: SignResultBody = { certificate: signed.certificatePem };
  return signed.bundle === undefined ? result : { bundle: signed.bundle, ...result };
}

/** Build the `/sign` operation. */
export function createSignOperation(options: IssueOperationOptions) {
  return defineOperation({
    name: 'sign',
    method: 'POST',
    body: signRequestSchema,
    // CFSSL's text for any body json.Unmarshal rejects (behaviour doc 4.5).
    invalidBodyMessage: SIGN_REQUEST_PARSE_MESSAGE,
    tasks: [...SIGN_TASKS, bundleTask],
    summary: 'Sign a certificate request',
    result: signResultSchema,
    async handle(raw, context): Promise<SignResultBody> {
      // 400 `Unable to parse sign request`, `missing parameter 'certificate_request'`.
      return signResult(await options.issuer.signCertificate(decodeSignRequest(raw), issueCall(options, context)), context);
    },
  });
}

/** Build the `/authsign` operation. */
export function createAuthsignOperation(options: IssueOperationOptions) {
  return defineOperation({
    name: 'authsign',
    method: 'POST',
    body: authsignRequestSchema,
    tasks: [...SIGN_TASKS, bundleTask],
    summary: 'Sign a certificate request authenticated with an HMAC token',
    result: signResultSchema,
    // The label and profile are inside the base64 `request`; the token is never logged.
    requestLabels: authsignRequestLabels,
    async handle(raw, context): Promise<SignResultBody> {
      // 400: Go text, `Unable to parse authenticated sign request`, `no authentication provider`,
      // `invalid token`, `missing parameter 'certificate_request'`; 5400 unknown profile.
      return signResult(await options.issuer.authsign(raw, issueCall(options, context)), context);
    },
  });
}

/**
 * The label and profile of an `/authsign` body's base64 inner request, for the request log line
 * (the token and the CSR are never logged). Anything unreadable gives nothing: the handler reports it.
 */
export function authsignRequestLabels(body: Record<string, unknown>): RequestLabels {
  const inner = peekAuthenticatedSignRequest(body);
  return inner === null ? {} : { label: inner.label, profile: inner.profile };
}
