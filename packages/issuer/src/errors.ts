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
