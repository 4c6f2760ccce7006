/**
 * Errors of the issuing endpoints that are not the issuer's own: label routing. CFSSL's local
 * signer ignores `label` and multirootca answers an unknown label with `{"code":1,"message":"bad
 * request"}` (behaviour doc 0.16, 4.6), a code outside CFSSL's scheme. certsmith refuses an unknown
 * label with 5200 `Invalid or unknown policy` family: a label selects a signer and the signing
 * policy that goes with it, so a label nobody configured names an unknown policy.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/**
 * The request's `label` names no configured signer and the default signer does not forward labels
 * to a remote CA: code 5200, HTTP 400. The message names the label, never the configured ones (an
 * unauthenticated client should not learn the configuration).
 */
export class UnknownLabelError extends CertsmithError {
  /** The label the request asked for. */
  readonly label: string;

  constructor(label: string) {
    super(ErrorCode.PolicyInvalid, `unknown label ${JSON.stringify(label.length <= 64 ? label : `${label.slice(0, 64)}…`)}: no signer is configured for it`);
    this.label = label;
  }
}

/**
 * A signer call (`sign`, `signRequest`, `getCertificate`, `info`) did not settle within the
 * server's signer timeout (`--signer-timeout`, default 30 s): code 2500 (the private key is
 * unavailable), HTTP 400 as every CFSSL-coded error. The call itself cannot be cancelled; its late
 * answer is discarded, so a hung HSM or remote CA costs one bounded wait per request, not a stuck
 * request.
 */
export class SignerTimeoutError extends CertsmithError {
  readonly label: string;
  readonly timeoutMs: number;

  constructor(label: string, timeoutMs: number) {
    super(ErrorCode.PrivateKeyUnavailable, `signer ${JSON.stringify(label)} did not answer within ${timeoutMs} ms`);
    this.label = label;
    this.timeoutMs = timeoutMs;
  }
}
