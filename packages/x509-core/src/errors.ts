/**
 * Errors carrying CFSSL's numeric codes (cfssl `errors/error.go`): code = category (thousands) + reason.
 * Every package derives its situation-named errors from {@link CertsmithError}; the HTTP layer maps
 * them to the envelope `{code, message}` with status 400 as CFSSL does.
 *
 * Errors cross worker-thread boundaries as plain `{ code, name, message }` ({@link toErrorPayload})
 * and are rebuilt with {@link fromErrorPayload}; compare by `code`, not `instanceof`.
 */

/** CFSSL error codes used by certsmith (behaviour doc 1.5), plus the HTTP-level codes 400/404/405/413/503. */
export const ErrorCode = {
  // HTTP-level (code = HTTP status, as CFSSL's errors/http.go)
  BadRequest: 400,
  NotFound: 404,
  MethodNotAllowed: 405,
  PayloadTooLarge: 413,
  ServiceUnavailable: 503,
  // 1xxx certificate
  CertificateUnknown: 1000,
  CertificateReadFailed: 1001,
  CertificateDecodeFailed: 1002,
  CertificateParseFailed: 1003,
  CertificateSelfSigned: 1100,
  CertificateVerifyFailed: 1200,
  /** 1210 + Go x509 CertificateInvalidError reason (0..9). */
  CertificateNotAuthorizedToSign: 1210,
  CertificateExpired: 1211,
  CertificateCANotAuthorizedForThisName: 1212,
  CertificateTooManyIntermediates: 1213,
  CertificateIncompatibleUsage: 1214,
  CertificateNameMismatch: 1215,
  CertificateUnknownAuthority: 1220,
  CertificateBadRequest: 1300,
  CertificateMissingSerial: 1400,
  // 2xxx private key
  PrivateKeyUnknown: 2000,
  PrivateKeyReadFailed: 2001,
  PrivateKeyDecodeFailed: 2002,
  PrivateKeyParseFailed: 2003,
  PrivateKeyEncrypted: 2100,
  PrivateKeyUnsupportedAlgorithm: 2200,
  PrivateKeyMismatch: 2300,
  PrivateKeyGenerationFailed: 2400,
  PrivateKeyUnavailable: 2500,
  // 3xxx intermediates, 4xxx roots
  IntermediatesUnknown: 3000,
  IntermediatesReadFailed: 3001,
  IntermediatesDecodeFailed: 3002,
  IntermediatesParseFailed: 3003,
  RootUnknown: 4000,
  RootReadFailed: 4001,
  RootDecodeFailed: 4002,
  RootParseFailed: 4003,
  // 5xxx policy
  PolicyUnknown: 5000,
  PolicyNoKeyUsages: 5100,
  PolicyInvalid: 5200,
  PolicyInvalidRequest: 5300,
  PolicyUnknownProfile: 5400,
  PolicyUnmatchedWhitelist: 5500,
  // 6xxx dial
  DialFailed: 6000,
  // 7xxx API client
  ApiClientAuthenticationFailure: 7100,
  ApiClientJsonError: 7200,
  ApiClientIoError: 7300,
  ApiClientHttpError: 7400,
  ApiClientServerRequestFailed: 7500,
  // 9xxx CSR
  CsrUnknown: 9000,
  CsrReadFailed: 9001,
  CsrDecodeFailed: 9002,
  CsrParseFailed: 9003,
  CsrBadRequest: 9300,
} as const;

export type ErrorCodeValue = (typeof ErrorCode)[keyof typeof ErrorCode];

/** CFSSL's fixed messages for `errors.New(category, reason)` (behaviour doc 1.5). */
export const CfsslMessage: Readonly<Record<number, string>> = {
  1000: 'Unknown certificate error',
  1001: 'Failed to read certificate',
  1002: 'Failed to decode certificate',
  1003: 'Failed to parse certificate',
  1100: 'Certificate is self signed',
  1200: 'Unable to verify certificate',
  1300: 'Invalid certificate request',
  1400: 'Missing serial number in request',
  2000: 'Unknown private key error',
  2001: 'Failed to read private key',
  2002: 'Failed to decode private key',
  2003: 'Failed to parse private key',
  2100: 'Private key is encrypted.',
  2200: 'Private key algorithm is not RSA or ECC or Ed25519',
  2300: 'Private key does not match public key',
  2400: 'Failed to new private key',
  2500: 'Private key is unavailable',
  3000: 'Unknown intermediate certificate error',
  3001: 'Failed to read intermediate certificate',
  3002: 'Failed to decode intermediate certificate',
  3003: 'Failed to parse intermediate certificate',
  4000: 'Unknown root certificate error',
  4001: 'Failed to read root certificate',
  4002: 'Failed to decode root certificate',
  4003: 'Failed to parse root certificate',
  5000: 'Unknown policy error',
  5100: 'Invalid policy: no key usage available',
  5200: 'Invalid or unknown policy',
  5300: 'Policy violation request',
  5400: 'Unknown policy profile',
  5500: 'Request does not match policy whitelist',
  6000: 'Failed to dial remote server',
  7100: 'API client authentication failure',
  7200: 'API client JSON config error',
  7300: 'API client IO error',
  7400: 'API client HTTP error',
  7500: 'API client error: Server request failed',
  9000: 'CSR parsing failed due to unknown error',
  9001: 'CSR file read failed',
  9002: 'CSR Decode failed',
  9003: 'CSR Parsing failed',
  9300: 'CSR Bad request',
};

/** The shape an error takes when it crosses a worker or process boundary. */
export interface ErrorPayload {
  code: number;
  name: string;
  message: string;
}

/**
 * Base class of every certsmith error. `code` is CFSSL's numeric code; `message` is what the client
 * sees in `errors[0].message`, so it never contains secrets (keys, PINs, tokens).
 */
export class CertsmithError extends Error {
  readonly code: number;

  /** @param message defaults to CFSSL's fixed message for `code` when omitted. */
  constructor(code: number, message?: string, options?: { cause?: unknown }) {
    super(message ?? CfsslMessage[code] ?? `error ${code}`, options);
    this.code = code;
    this.name = new.target.name;
  }

  /** Plain-data form for postMessage/JSON. */
  toJSON(): ErrorPayload {
    return toErrorPayload(this);
  }
}

/** A request that is malformed at the HTTP/JSON level (CFSSL's `errors.HTTPError`, code 400). */
export class BadRequestError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.BadRequest, message, options);
  }
}

/** Certificate input could not be decoded (no PEM/DER found, trailing garbage): 1002. */
export class CertificateDecodeError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CertificateDecodeFailed, message, options);
  }
}

/** Certificate bytes were found but are not a well-formed X.509 certificate: 1003. */
export class CertificateParseError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CertificateParseFailed, message, options);
  }
}

/**
 * Run `read` over certificate bytes: a {@link DerDecodeError} it throws (malformed DER) becomes
 * CFSSL's 1003, {@link CertificateParseError}, with the DER reader's reason as `cause`; any other
 * error passes through unchanged. Every reader of certificate input (full parse, partial readers,
 * PKCS#7) reports bad bytes this one way.
 */
export function readingCertificate<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof DerDecodeError) throw new CertificateParseError(undefined, { cause: error });
    throw error;
  }
}

/** No PEM private key found: 2002. */
export class PrivateKeyDecodeError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyDecodeFailed, message, options);
  }
}

/** Private key bytes are not PKCS#1, PKCS#8, SEC1 or RFC 8410: 2003. */
export class PrivateKeyParseError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyParseFailed, message, options);
  }
}

/** Encrypted private keys are refused (CFSSL 2100). */
export class EncryptedPrivateKeyError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyEncrypted, message, options);
  }
}

/** Private key does not match the certificate's public key: 2300. */
export class KeyMismatchError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyMismatch, message, options);
  }
}

/** Key algorithm other than RSA, ECDSA or Ed25519: 2200. */
export class UnsupportedKeyAlgorithmError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.PrivateKeyUnsupportedAlgorithm, message, options);
  }
}

/** CSR PEM could not be decoded (no PEM block): CFSSL 9002 `CSR Decode failed`. */
export class CsrDecodeError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CsrDecodeFailed, message, options);
  }
}

/** CSR DER is not a well-formed PKCS#10 request: CFSSL 9003 (message carries the parser's reason). */
export class CsrParseError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CsrParseFailed, message, options);
  }
}

/** CSR is not a CSR (wrong PEM label) or its self-signature does not verify: CFSSL 9300. */
export class CsrBadRequestError extends CertsmithError {
  constructor(message?: string, options?: { cause?: unknown }) {
    super(ErrorCode.CsrBadRequest, message, options);
  }
}

/**
 * Malformed DER met by the DER reader (truncated TLV, indefinite length, length past the end,
 * too deep, bad content). Deliberately *uncoded*: the same bytes mean 1003 for a certificate,
 * 2003 for a key and 9003 for a CSR, so every public parse function catches it and rethrows the
 * coded error of its situation. One that escapes is a bug and surfaces as code 0.
 */
export class DerDecodeError extends Error {
  /** Offset into the buffer being read where the problem was found. */
  readonly offset: number;

  constructor(message: string, offset: number) {
    super(`${message} at offset ${offset}`);
    this.name = 'DerDecodeError';
    this.offset = offset;
  }
}

/**
 * A value the DER writer cannot encode: an OID whose arcs X.690 cannot express, a string outside
 * its type's character set, a time outside GeneralizedTime's years, a negative INTEGER, an
 * extension value that is not one DER element… Coded 1000 (CFSSL's `Unknown certificate error`),
 * which is what CFSSL answers when Go's `x509.CreateCertificate` refuses a template
 * (`signer/local`: `cferr.Wrap(CertificateError, Unknown, err)`); callers that know better re-code
 * it (the CSR path answers 9300, as CFSSL's `csr.Generate` does). The message names the value.
 */
export class DerEncodeError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.CertificateUnknown, message, options);
  }
}

/** Serialise any thrown value; non-certsmith errors become code 0 with their name kept for logs. */
export function toErrorPayload(error: unknown): ErrorPayload {
  if (isCodedError(error)) {
    return { code: error.code, name: error.name, message: error.message };
  }
  if (error instanceof Error) return { code: 0, name: error.name, message: error.message };
  return { code: 0, name: 'Error', message: String(error) };
}

/** Rebuild an error from its payload; coded payloads become {@link CertsmithError}s with the same code and name. */
export function fromErrorPayload(payload: ErrorPayload): Error {
  if (payload.code > 0) {
    const error = new CertsmithError(payload.code, payload.message);
    error.name = payload.name;
    return error;
  }
  const error = new Error(payload.message);
  error.name = payload.name;
  return error;
}

/** True for any value that carries a positive numeric CFSSL code (works across realms and workers). */
export function isCodedError(error: unknown): error is Error & { code: number } {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  return typeof code === 'number' && code > 0;
}
