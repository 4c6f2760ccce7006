/**
 * One HTTP POST to one remote over an undici pool, with what the failover logic must know when it
 * fails: whether the request can have reached the remote. A sign request must never be sent twice
 * unless the first attempt provably never left this process (behaviour doc 4.4 tries the next
 * remote on any error; a remote that timed out after receiving the request may still sign, and a
 * second CA signing the same CSR issues a duplicate certificate).
 *
 * The proof is undici's `onRequestStart` hook, called right before the request is written to a
 * connected (and, for https, handshaken) socket: an error before it means nothing was written.
 * The connect-phase error codes (refused, DNS, connect timeout, TLS) are the same proof stated by
 * cause, and are accepted on their own as well.
 */
import type { Dispatcher, Pool } from 'undici';

/** A complete answer (any status). */
export interface HttpAnswer {
  status: number;
  /** Body as text (UTF-8), at most the byte limit. */
  text: string;
}

/** Why an exchange failed, for the failover decision and for messages. */
export interface ExchangeFailure {
  /** False only when the request provably was not written (safe to send elsewhere). */
  mayHaveBeenSent: boolean;
  /** Error code or name: `ECONNREFUSED`, `UND_ERR_HEADERS_TIMEOUT`, `deadline`, `response too large`… */
  reason: string;
  /** The answer exceeded the byte limit (the remote answered; not a transport failure). */
  tooLarge: boolean;
  cause: unknown;
}

/** Thrown by {@link postOnce} when no complete answer arrived. */
export class ExchangeError extends Error {
  readonly failure: ExchangeFailure;

  constructor(failure: ExchangeFailure) {
    super(`exchange failed: ${failure.reason}`, { cause: failure.cause });
    this.name = 'ExchangeError';
    this.failure = failure;
  }
}

// Errors that can only happen while connecting, i.e. before any byte of the request is written.
const CONNECT_PHASE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

// Certificate verification failures reported by node:tls during the handshake (OpenSSL names).
const TLS_VERIFY_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

/** The error code of `error` (`code` property), else its name. */
export function errorReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code !== '') return code;
  if (error instanceof Error) return error.name;
  return 'unknown error';
}

/**
 * True when `code` proves the request was never written: connection refused, DNS failure, connect
 * timeout, or a TLS handshake failure (certificate verification, `ERR_SSL_*` alerts), all of
 * which happen before undici writes the request.
 */
export function isConnectPhaseError(code: string): boolean {
  return CONNECT_PHASE_CODES.has(code) || TLS_VERIFY_CODES.has(code) || code.startsWith('ERR_SSL_');
}

/**
 * Classify a failed exchange. `written` is whether undici reached `onRequestStart`; an error before
 * it, or a connect-phase code, proves the request was not sent. Everything else (timeouts after
 * writing, `ECONNRESET`, `UND_ERR_SOCKET` "other side closed") may have reached the remote.
 */
export function classifyFailure(error: unknown, written: boolean): ExchangeFailure {
  const reason = errorReason(error);
  return { mayHaveBeenSent: written && !isConnectPhaseError(reason), reason, tooLarge: false, cause: error };
}

/** Limits of one exchange. */
export interface ExchangeLimits {
  /** Whole-exchange budget in ms (queueing, connect, write, answer). */
  timeoutMs: number;
  /** Largest answer body kept, in bytes; larger answers fail with `tooLarge`. */
  maxResponseBytes: number;
}

class DeadlineError extends Error {
  readonly code = 'deadline';

  constructor(timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'DeadlineError';
  }
}

class ResponseTooLargeError extends Error {
  readonly code = 'response too large';

  constructor(limit: number) {
    super(`answer larger than ${limit} bytes`);
    this.name = 'ResponseTooLargeError';
  }
}

/**
 * POST `body` (JSON text) to `path` on `pool` and collect the answer. Resolves with any complete
 * HTTP answer; rejects with {@link ExchangeError} otherwise. The deadline covers the whole exchange:
 * if it passes before the request was written, the request is cancelled before writing (so it is
 * provably unsent); after writing, the exchange is aborted and reported as possibly sent.
 */
export function postOnce(pool: Pool, path: string, body: string, limits: ExchangeLimits): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false;
    let written = false;
    let controller: Dispatcher.DispatchController | null = null;
    let status = 0;
    let size = 0;
    const chunks: Buffer[] = [];

    const fail = (failure: ExchangeFailure): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new ExchangeError(failure));
    };

    const timer = setTimeout(() => {
      const deadline = new DeadlineError(limits.timeoutMs);
      if (written && controller) {
        // Reported through onResponseError, which classifies it as possibly sent.
        controller.abort(deadline);
        return;
      }
      // Still queued or connecting: give up now; onRequestStart cancels the write if it comes later.
      fail({ mayHaveBeenSent: false, reason: deadline.code, tooLarge: false, cause: deadline });
    }, limits.timeoutMs);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(started) {
        controller = started;
        if (settled) {
          started.abort(new DeadlineError(limits.timeoutMs));
          return;
        }
        written = true;
      },
      onResponseStart(_started, statusCode) {
        status = statusCode;
      },
      onResponseData(started, chunk) {
        size += chunk.length;
        if (size > limits.maxResponseBytes) {
          started.abort(new ResponseTooLargeError(limits.maxResponseBytes));
          return;
        }
        chunks.push(chunk);
      },
      onResponseEnd() {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status, text: Buffer.concat(chunks).toString('utf8') });
      },
      onResponseError(_started, error) {
        if (error instanceof ResponseTooLargeError) {
          fail({ mayHaveBeenSent: true, reason: error.code, tooLarge: true, cause: error });
          return;
        }
        fail(classifyFailure(error, written));
      },
    };

    pool.dispatch(
      {
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body,
        // undici's own timers are a backstop; the deadline above is the contract.
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
        // POST is not idempotent: undici must never replay it on another socket by itself.
        idempotent: false,
      },
      handler,
    );
  });
}
