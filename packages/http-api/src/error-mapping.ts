/**
 * The one place that turns a thrown value into an HTTP status and an envelope error item.
 * Domain code throws coded errors and never learns about HTTP (Koa's "one error middleware at the top").
 */
import { CfsslMessage, isCodedError } from '@certsmith/x509-core';
import { ServiceUnavailableError } from './errors.js';
import { leaksInternalErrorText } from './internal-error-text.js';

/** What the error middleware sends for a thrown value. */
export interface ErrorResponse {
  /** HTTP status. */
  status: number;
  /** `errors[0].code`. */
  code: number;
  /** `errors[0].message`; for unexpected errors a fixed generic text. */
  message: string;
  /** Extra response headers (e.g. `Retry-After`). */
  headers: Record<string, string>;
  /** True when the error was not expected (HTTP 500): the caller logs it with its stack. */
  unexpected: boolean;
  /**
   * Set when a coded error's own message was replaced because it carried a Node, undici or OpenSSL
   * text: the original, for the log only.
   */
  replacedMessage?: string;
}

/** The body message of every HTTP 500: details go to the log only, never to the client. */
export const INTERNAL_ERROR_MESSAGE = 'internal server error';

/** The message for an HTTP-level code (400–599) whose own text had to be replaced. */
const HTTP_LEVEL_MESSAGE = 'the request could not be processed';

/**
 * Map a thrown value to a response.
 *
 * | thrown | status | code |
 * |---|---|---|
 * | coded error with code 400–599 (HTTP-level, CFSSL `errors/http.go`) | the code | the code |
 * | any other coded error (CFSSL `errors.Error`, 1000–9300…) | 400 | its code |
 * | exposed client error from Koa/http-errors (`status` 4xx, `expose`) | its status | its status |
 * | anything else | 500 | 500 |
 *
 * Deliberate difference from CFSSL: CFSSL answers unexpected errors with `code: 0` and `err.Error()` as
 * the message (which can leak internals); certsmith sends code 500 and {@link INTERNAL_ERROR_MESSAGE}.
 *
 * No Node, undici or OpenSSL text reaches a client, even inside a coded error (domain code that
 * wrapped one by mistake, e.g. Node's `Port should be >= 0 and < 65536…` in a 6000): such a message
 * is replaced by CFSSL's fixed wording for the code (`Failed to dial remote server`) and the
 * original is returned in {@link ErrorResponse.replacedMessage} for the log (see
 * `internal-error-text.ts` for how such texts are recognised).
 */
export function mapErrorToResponse(error: unknown): ErrorResponse {
  const headers: Record<string, string> = {};
  // The pool's ServiceUnavailableError, and any coded error that says when to retry (the
  // certificate store's StoreUnavailableError, built in a package that does not know HTTP).
  const retryAfterSeconds = error instanceof ServiceUnavailableError ? error.retryAfterSeconds : codedRetryAfter(error);
  if (retryAfterSeconds !== null) headers['Retry-After'] = String(Math.max(0, Math.ceil(retryAfterSeconds)));
  if (isCodedError(error)) {
    const httpLevel = isHttpStatus(error.code);
    const status = httpLevel ? error.code : 400;
    if (leaksInternalErrorText(error, error.message)) {
      const message = httpLevel ? (error.code >= 500 ? INTERNAL_ERROR_MESSAGE : HTTP_LEVEL_MESSAGE) : (CfsslMessage[error.code] ?? HTTP_LEVEL_MESSAGE);
      return { status, code: error.code, message, headers, unexpected: false, replacedMessage: error.message };
    }
    return { status, code: error.code, message: error.message, headers, unexpected: false };
  }
  const httpError = asExposedClientError(error);
  if (httpError !== null && !leaksInternalErrorText(error as Error, httpError.message)) {
    return { status: httpError.status, code: httpError.status, message: httpError.message, headers, unexpected: false };
  }
  return { status: 500, code: 500, message: INTERNAL_ERROR_MESSAGE, headers, unexpected: true };
}

/** `retryAfterSeconds` of a coded 503 that carries one (a finite number), else `null`. */
function codedRetryAfter(error: unknown): number | null {
  if (!isCodedError(error) || error.code !== 503) return null;
  const seconds = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) ? seconds : null;
}

function isHttpStatus(code: number): boolean {
  return Number.isInteger(code) && code >= 400 && code <= 599;
}

/** Koa's own `ctx.throw(4xx)` errors and `http-errors` carry `status` and `expose: true`. */
function asExposedClientError(error: unknown): { status: number; message: string } | null {
  if (!(error instanceof Error)) return null;
  const { status, expose } = error as Error & { status?: unknown; expose?: unknown };
  if (typeof status === 'number' && status >= 400 && status <= 499 && expose === true) {
    return { status, message: error.message };
  }
  return null;
}
