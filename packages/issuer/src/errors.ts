/**
 * Situation-named errors of the issuer, each a CertsmithError with CFSSL's code (behaviour doc 1.5).
 * Messages follow CFSSL where clients may compare them (key generation texts, 5300/5500 texts).
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** Key generation refused or failed: 2400 with CFSSL's generator text (`RSA key is too weak`…). */
export class KeyGenerationError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyGenerationFailed, message, options);
  }
}

/** The CSR could not be built from the request (bad OID, non-IA5 SAN): 9300 with the reason. */
export class CsrRequestError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.CsrBadRequest, message, options);
  }
}

/** The signing configuration is invalid: 5200 (`Invalid or unknown policy` or the specific reason). */
export class InvalidPolicyError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PolicyInvalid, message, options);
  }
}

/**
 * The requested profile does not exist: 5400 `Unknown policy profile`. Deliberately stricter than
 * CFSSL's local signer, which silently falls back to the default profile (behaviour doc 0.6, 3.6).
 */
export class UnknownProfileError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PolicyUnknownProfile, message, options);
  }
}

/** The profile yields neither key usage nor extended key usage: 5100. */
export class NoKeyUsagesError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PolicyNoKeyUsages, message, options);
  }
}

/** The request violates the policy (CA CSR on a non-CA profile, CA path length): 5300. */
export class PolicyViolationError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PolicyInvalidRequest, message, options);
  }
}

/** A name is not allowed by the profile's `name_whitelist`: 5500. */
export class NameWhitelistError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PolicyUnmatchedWhitelist, message, options);
  }
}

/** The profile requires a client serial (`ClientProvidesSerialNumbers`) and none was given: 1400. */
export class MissingSerialError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CertificateMissingSerial, message, options);
  }
}

/** The sign request is not acceptable (extension not allowed, bad value): 1300. */
export class InvalidCertificateRequestError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CertificateBadRequest, message, options);
  }
}

/**
 * The request's `label` names no configured signer and the default signer does not forward labels
 * to a remote CA: 5200 (HTTP 400). CFSSL's local signer ignores `label` and multirootca answers an
 * unknown label with `{"code":1,"message":"bad request"}` (behaviour doc 0.16, 4.6), a code outside
 * CFSSL's scheme; a label selects a signer and the signing policy that goes with it, so a label
 * nobody configured names an unknown policy. The message names the label, never the configured
 * ones (an unauthenticated client should not learn the configuration).
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
 * issuer's signer timeout (`--signer-timeout`, default 30 s): 2500 (the private key is
 * unavailable). The call itself cannot be cancelled; its late answer is discarded, so a hung HSM or
 * remote CA costs one bounded wait per request, not a stuck request.
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
