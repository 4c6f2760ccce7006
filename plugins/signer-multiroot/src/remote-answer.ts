/**
 * Turning a remote's HTTP answer into a result or a coded error. The remote speaks CFSSL's envelope
 * (behaviour doc 1.2): `{success, result, errors: [{code, message}], messages}`. CFSSL's own client
 * (doc 4.4) flattens every failure into 7400 (non-200, raw body as message) or 7500 (`success:
 * false`); certsmith keeps the remote's code instead, so a 9002 `CSR Decode failed` on the CA
 * reaches the user as 9002, and names the remote in the message.
 */
import type { InfoResult } from '@certsmith/signer-api';
import { CfsslMessage, ErrorCode } from '@certsmith/x509-core';

import { RemoteSignerError } from './errors.js';
import type { HttpAnswer } from './http-exchange.js';

/** Longest excerpt of a remote body or message put into an error message. */
export const MAX_EXCERPT_CHARS = 200;

// Messages meaning "your credentials were refused": multirootca answers them with code 1
// (doc 4.6), cfssl serve's authsign with code 400 (doc 4.5).
const AUTH_FAILURE_MESSAGES: ReadonlySet<string> = new Set(['invalid token', 'authorisation required', 'authentication required', 'not authorised']);

/** A bounded, single-line excerpt of remote text, safe to put in a message or a log line. */
export function excerpt(text: string, limit = MAX_EXCERPT_CHARS): string {
  // Control characters are replaced so a hostile remote cannot forge log lines.
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit)}…` : flat;
}

/**
 * The certsmith code for a remote's `errors[0].code`:
 * - CFSSL codes (≥ 1000) and HTTP-level codes (400–499, e.g. multirootca `/info` `bad label`) are kept;
 * - auth refusals (`invalid token`, `authorisation required`, `not authorised`, `authentication
 *   required`) with multirootca's `1` or cfssl's `400` become 7100, CFSSL's authentication failure;
 * - anything else outside the scheme (multirootca's `1`, cfssl's `0` for internal errors) becomes
 *   7500, what CFSSL's own client uses for every `success: false` answer.
 */
export function mapRemoteCode(code: number, message: string): number {
  if ((code === 1 || code === ErrorCode.BadRequest) && AUTH_FAILURE_MESSAGES.has(message.trim().toLowerCase())) {
    return ErrorCode.ApiClientAuthenticationFailure;
  }
  if (Number.isInteger(code) && (code >= 1000 || (code >= 400 && code <= 499))) return code;
  return ErrorCode.ApiClientServerRequestFailed;
}

interface Envelope {
  success?: unknown;
  result?: unknown;
  errors?: unknown;
}

function firstError(envelope: Envelope): { code: number; message: string } | null {
  if (!Array.isArray(envelope.errors) || envelope.errors.length === 0) return null;
  const first = envelope.errors[0] as { code?: unknown; message?: unknown } | null;
  if (typeof first !== 'object' || first === null || typeof first.code !== 'number') return null;
  return { code: first.code, message: typeof first.message === 'string' ? first.message : '' };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The `result` of a successful envelope, or throw the {@link RemoteSignerError} the answer
 * amounts to: envelope error → mapped code (remote code kept on `remoteCode`); non-200 without an
 * envelope → 7400 with a body excerpt; unparsable 200 → 7200; `success:false` without errors → 7500.
 */
export function readEnvelopeResult(remote: string, answer: HttpAnswer): unknown {
  const parsed = parseJson(answer.text);
  const envelope = isObject(parsed) ? (parsed as Envelope) : null;
  const details = { remote, status: answer.status };
  const error = envelope ? firstError(envelope) : null;
  if (error !== null && (answer.status !== 200 || envelope?.success !== true)) {
    const shown = excerpt(error.message) || CfsslMessage[error.code] || `code ${error.code}`;
    throw new RemoteSignerError(mapRemoteCode(error.code, error.message), `remote ${remote} answered: ${shown}`, { ...details, remoteCode: error.code });
  }
  if (answer.status !== 200) {
    throw new RemoteSignerError(ErrorCode.ApiClientHttpError, `remote ${remote} answered HTTP ${answer.status}: ${excerpt(answer.text) || '(empty body)'}`, details);
  }
  if (envelope === null) {
    throw new RemoteSignerError(ErrorCode.ApiClientJsonError, `remote ${remote} answered with unparsable JSON: ${excerpt(answer.text) || '(empty body)'}`, details);
  }
  if (envelope.success !== true) {
    throw new RemoteSignerError(ErrorCode.ApiClientServerRequestFailed, `remote ${remote} answered: ${CfsslMessage[ErrorCode.ApiClientServerRequestFailed]}`, details);
  }
  return envelope.result;
}

/**
 * The certificate PEM of a `/sign` or `/authsign` answer. As cfssl `signer/remote/remote.go`:
 * no `certificate` member → 7400 `response doesn't contain certificate.`; present but not a string → 7200.
 */
export function readSignAnswer(remote: string, answer: HttpAnswer): string {
  const result = readEnvelopeResult(remote, answer);
  const details = { remote, status: answer.status };
  if (!isObject(result) || !('certificate' in result)) {
    throw new RemoteSignerError(ErrorCode.ApiClientHttpError, `remote ${remote} answered: response doesn't contain certificate.`, details);
  }
  if (typeof result.certificate !== 'string' || result.certificate.trim() === '') {
    throw new RemoteSignerError(ErrorCode.ApiClientJsonError, `remote ${remote} answered with a certificate that is not a PEM string`, details);
  }
  return result.certificate;
}

/** The `{certificate, usages, expiry}` of an `/info` answer; 7200 when `certificate` is missing. */
export function readInfoAnswer(remote: string, answer: HttpAnswer): InfoResult {
  const result = readEnvelopeResult(remote, answer);
  if (!isObject(result) || typeof result.certificate !== 'string' || result.certificate.trim() === '') {
    throw new RemoteSignerError(ErrorCode.ApiClientJsonError, `remote ${remote} answered /info without a certificate`, { remote, status: answer.status });
  }
  const usages = Array.isArray(result.usages) ? result.usages.filter((usage): usage is string => typeof usage === 'string') : [];
  return { certificate: result.certificate, usages, expiry: typeof result.expiry === 'string' ? result.expiry : '' };
}
