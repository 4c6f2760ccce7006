/**
 * Errors of the multiroot signer. Every one names the remote it concerns, because a signer with a
 * failover list is otherwise impossible to debug ("invalid token" — from which CA?). Codes follow
 * CFSSL's API-client family (behaviour doc 1.5, 4.4): 7xxx for an answer we could not use, 6000
 * when no remote could be dialled. None of them ever carries the auth key, the token or the request
 * body: messages are built from the remote's address and the remote's own answer only.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/**
 * A remote answered, and the answer is a failure: its CFSSL envelope said `success: false`
 * (code kept or mapped, see the README's error table), or it was not a usable answer (non-200
 * without an envelope → 7400, unparsable 200 → 7200). `message` reads
 * `remote http://ca1:8888 answered: invalid token`.
 */
export class RemoteSignerError extends CertsmithError {
  /** Base URL of the remote that answered. */
  readonly remote: string;
  /** HTTP status of the answer. */
  readonly status: number;
  /** `errors[0].code` exactly as the remote sent it (multirootca's `1`, cfssl's `400`…), when there was one. */
  readonly remoteCode: number | null;

  constructor(code: number, message: string, details: { remote: string; status: number; remoteCode?: number | null }, options?: { cause?: unknown }) {
    super(code, message, options);
    this.remote = details.remote;
    this.status = details.status;
    this.remoteCode = details.remoteCode ?? null;
  }
}

/** One remote that could not be used for a call, and why (an error code such as `ECONNREFUSED`). */
export interface RemoteFailure {
  remote: string;
  reason: string;
}

/**
 * No remote could be dialled within the call's time budget: every attempt failed before the request
 * was written (connection refused, DNS failure, connect timeout, TLS handshake failure), so nothing
 * can have been signed. Code 6000 (`Failed to dial remote server`, CFSSL's Dial category).
 */
export class RemoteUnreachableError extends CertsmithError {
  readonly failures: readonly RemoteFailure[];

  constructor(failures: readonly RemoteFailure[], options?: { cause?: unknown }) {
    const list = failures.map((failure) => `${failure.remote} (${failure.reason})`).join(', ');
    super(ErrorCode.DialFailed, `no remote signer reachable: ${list}`, options);
    this.failures = Object.freeze([...failures]);
  }
}

/**
 * The request was written to a remote, then the exchange failed (timeout waiting for the answer,
 * connection reset). The remote may have signed, so the request is not sent to another remote.
 * Code 7300 (`API client IO error`, what CFSSL's client returns when it cannot read an answer).
 */
export class RemoteTransportError extends CertsmithError {
  readonly remote: string;
  /** Error code or name of the failure (`UND_ERR_HEADERS_TIMEOUT`, `ECONNRESET`, `deadline`…). */
  readonly reason: string;

  constructor(remote: string, reason: string, message: string, options?: { cause?: unknown }) {
    super(ErrorCode.ApiClientIoError, message, options);
    this.remote = remote;
    this.reason = reason;
  }
}
