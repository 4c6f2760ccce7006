/**
 * Errors of revocation, CRL and OCSP work. CFSSL's OCSP category is 8xxx (`errors/error.go`
 * `OCSPError`): 8001 no certificate, 8100 issuer mismatch, 8200 invalid status or failed issuer
 * signature (CFSSL uses one code for both, lifecycle spec §3.4). Request-shape problems are 400 with
 * CFSSL's fixed messages where CFSSL has one (`Invalid reason code`, `Malformed certificate`…).
 */
import { SignerConfigurationError } from '@certsmith/signer-api';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** CFSSL's OCSP error codes. */
export const OcspErrorCode = {
  /** `No certificate provided`. */
  NoCertificate: 8001,
  /** `Certificate not issued by this issuer`. */
  IssuerMismatch: 8100,
  /** `Invalid revocation status`, and also a failed issuer signature check. */
  InvalidStatus: 8200,
} as const;

/** A revocation reason that is not an RFC 5280 CRLReason (CFSSL revoke: 400 `Invalid reason code`). */
export class InvalidReasonError extends CertsmithError {
  /** @param message defaults to CFSSL's `Invalid reason code`. */
  constructor(message = 'Invalid reason code', options?: { cause?: unknown }) {
    super(ErrorCode.BadRequest, message, options);
  }
}

/** A request field is malformed (400); the message names the field and what was received. */
export class RevocationRequestError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.BadRequest, message, options);
  }
}

/** No certificate given to the OCSP signer (CFSSL 8001 `No certificate provided`). */
export class OcspNoCertificateError extends CertsmithError {
  constructor(options?: { cause?: unknown }) {
    super(OcspErrorCode.NoCertificate, 'No certificate provided', options);
  }
}

/** The certificate's issuer name is not the CA's subject, byte for byte (CFSSL 8100). */
export class OcspIssuerMismatchError extends CertsmithError {
  constructor(options?: { cause?: unknown }) {
    super(OcspErrorCode.IssuerMismatch, 'Certificate not issued by this issuer', options);
  }
}

/**
 * The status is not `good`, `revoked` or `unknown` (CFSSL 8200 `Invalid revocation status`), or
 * — with another message — the certificate's signature does not verify with the CA key (CFSSL
 * also answers 8200 there, with Go's verification text).
 */
export class OcspInvalidStatusError extends CertsmithError {
  constructor(message = 'Invalid revocation status', options?: { cause?: unknown }) {
    super(OcspErrorCode.InvalidStatus, message, options);
  }
}

/**
 * An OCSP request that cannot be parsed (answered `malformedRequest` by the responder). Code 400
 * so that a caller outside the responder can put it in the envelope.
 */
export class OcspRequestError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.BadRequest, message, options);
  }
}

/** A stored or received OCSP response that is not a well-formed RFC 6960 response (1003-like, code 400). */
export class OcspResponseParseError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.BadRequest, message, options);
  }
}

/**
 * A signer that cannot sign CRLs or OCSP responses: it only forwards whole sign requests (a remote
 * multi-root CA), offers no algorithm for its key, or a delegated responder certificate that the CA
 * did not issue for OCSP signing. Raised when the revocation signer is created — at start-up — so
 * the operator sees it before the first revocation. Code 2000 (signer configuration).
 */
export class RevocationSignerError extends SignerConfigurationError {}
