/**
 * HTTP-level errors of the API layer. They carry CFSSL's convention for HTTP errors
 * (`errors/http.go`): the numeric `code` equals the HTTP status, so the error middleware can map them
 * without knowing their class. Domain packages never throw these; they throw their own coded
 * {@link CertsmithError}s, which the middleware answers with HTTP 400 as CFSSL's `api.HandleError` does.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** The request method is not the one the operation accepts (CFSSL `NewMethodNotAllowed`, 405). */
export class MethodNotAllowedError extends CertsmithError {
  /** The method the client sent, as sent. */
  readonly method: string;

  /** @param method the request method, quoted in the message exactly as CFSSL does: `Method is not allowed:"GET"`. */
  constructor(method: string) {
    super(ErrorCode.MethodNotAllowed, `Method is not allowed:${JSON.stringify(method)}`);
    this.method = method;
  }
}

/**
 * No operation is registered at the requested path (404). CFSSL answers Go's plain-text
 * `404 page not found`; we keep its text but send it in the JSON envelope like every other error.
 */
export class NotFoundError extends CertsmithError {
  constructor(message = '404 page not found') {
    super(ErrorCode.NotFound, message);
  }
}

/** The request body is larger than the configured limit (413); CFSSL has no limit at all. */
export class PayloadTooLargeError extends CertsmithError {
  /** The limit that was exceeded, in bytes. */
  readonly limitBytes: number;

  constructor(limitBytes: number) {
    super(ErrorCode.PayloadTooLarge, `request body exceeds the limit of ${limitBytes} bytes`);
    this.limitBytes = limitBytes;
  }
}

/** HTTP 408; like the other HTTP-level codes, the envelope `code` equals the status. */
const REQUEST_TIMEOUT_CODE = 408;

/**
 * The request body did not arrive within the body timeout (408). CFSSL sets no timeouts at all (a
 * stalled client holds its connection for as long as it likes); certsmith answers 408 and closes the
 * connection, so a slow or stalled client cannot hold a connection slot for long.
 */
export class RequestTimeoutError extends CertsmithError {
  /** The timeout that expired, in milliseconds. */
  readonly timeoutMs: number;

  constructor(timeoutMs: number) {
    super(REQUEST_TIMEOUT_CODE, `request body was not received within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

// The pool's errors a client can see (503 with Retry-After, 500 for a crashed worker) are the
// pool's own; they are named here too so that the HTTP layer maps them from one place.
export { ServiceUnavailableError, WorkerCrashedError } from '@certsmith/worker-pool';
