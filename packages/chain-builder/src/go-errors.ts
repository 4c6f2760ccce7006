/**
 * Go `crypto/x509` error texts and their CFSSL codes (behaviour doc 1.5, 2.5). A chain problem is
 * reported as a {@link ChainProblem}: plain data (code + Go's text) that the PKI.js-style result
 * objects carry and that {@link ChainVerificationError} turns into a thrown coded error.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';

/** A chain problem: CFSSL's code (`1200 + reason`) and Go's message. */
export interface ChainProblem {
  code: number;
  message: string;
}

/** Go's `time.RFC3339` rendering of an instant in UTC (no fractional seconds). */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Go `CertificateInvalidError` / `UnknownAuthorityError` texts with their CFSSL codes. */
export const GoX509 = {
  notAuthorizedToSign: (): ChainProblem => ({
    code: ErrorCode.CertificateNotAuthorizedToSign,
    message: 'x509: certificate is not authorized to sign other certificates',
  }),
  notYetValid: (now: Date, notBefore: Date): ChainProblem => ({
    code: ErrorCode.CertificateExpired,
    message: `x509: certificate has expired or is not yet valid: current time ${rfc3339(now)} is before ${rfc3339(notBefore)}`,
  }),
  expired: (now: Date, notAfter: Date): ChainProblem => ({
    code: ErrorCode.CertificateExpired,
    message: `x509: certificate has expired or is not yet valid: current time ${rfc3339(now)} is after ${rfc3339(notAfter)}`,
  }),
  tooManyIntermediates: (): ChainProblem => ({
    code: ErrorCode.CertificateTooManyIntermediates,
    message: 'x509: too many intermediates for path length constraint',
  }),
  /** certsmith's own depth bound (Go has none); reported in the TooManyIntermediates class. */
  depthExceeded: (maxDepth: number): ChainProblem => ({
    code: ErrorCode.CertificateTooManyIntermediates,
    message: `x509: too many intermediates: no chain within ${maxDepth} certificates`,
  }),
  nameMismatch: (): ChainProblem => ({
    code: ErrorCode.CertificateNameMismatch,
    message: 'x509: issuer name does not match subject from issuing certificate',
  }),
  /** `UnhandledCriticalExtension` is not a CertificateInvalidError, so CFSSL wraps it as plain 1200. */
  unhandledCriticalExtension: (): ChainProblem => ({
    code: ErrorCode.CertificateVerifyFailed,
    message: 'x509: unhandled critical extension',
  }),
  signatureCheckLimit: (): ChainProblem => ({
    code: ErrorCode.CertificateVerifyFailed,
    message: 'x509: signature check attempts limit reached while verifying certificate chain',
  }),
  /**
   * `x509: certificate signed by unknown authority`, with Go's hint suffix when a candidate issuer
   * was found but its signature check failed.
   */
  unknownAuthority: (hint: { error: string; candidate: Certificate } | null): ChainProblem => {
    let message = 'x509: certificate signed by unknown authority';
    if (hint) {
      message += ` (possibly because of ${goQuote(hint.error)} while trying to verify candidate authority certificate ${goQuote(candidateName(hint.candidate))})`;
    }
    return { code: ErrorCode.CertificateUnknownAuthority, message };
  },
} as const;

/** Go's `%q` for the printable strings we quote. */
function goQuote(text: string): string {
  return JSON.stringify(text);
}

/** Go's name for a hint certificate: CN, else first O, else `serial:<decimal>`. */
function candidateName(cert: Certificate): string {
  const attributes = cert.subject.rdns.flat();
  const cn = attributes.find((a) => a.oid === '2.5.4.3')?.value;
  if (cn) return cn;
  const o = attributes.find((a) => a.oid === '2.5.4.10')?.value;
  if (o) return o;
  return `serial:${BigInt(`0x${cert.serialNumberHex || '0'}`).toString(10)}`;
}

/** A chain problem thrown to callers that want an exception (the bundle use case). */
export class ChainVerificationError extends CertsmithError {
  constructor(problem: ChainProblem, options?: { cause?: unknown }) {
    super(problem.code, problem.message, options);
  }
}
