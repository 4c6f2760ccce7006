/**
 * CFSSL's `ocspsign` (lifecycle spec §3.4, §5.1) as a function of the JSON body: the HTTP endpoint and
 * the `certsmith ocspsign` command call it. Checks come in CFSSL's order with CFSSL's codes and
 * messages. Deliberate differences: `issuer_hash: "MD5"` is a 400 like any unsupported hash (CFSSL:
 * 500, code 0); a `reason` that is not a CRLReason code is a 400 (CFSSL signs any integer); a
 * certificate whose signature does not verify says so in words (CFSSL: Go's `x509: … verification
 * failure`), still with code 8200.
 */
import type { Certificate } from '@certsmith/x509-core';
import { parseCertificates, verifySignature } from '@certsmith/x509-core';

import type { CertIdHashAlgorithm } from './cert-id.js';
import { OcspInvalidStatusError, OcspIssuerMismatchError, RevocationRequestError } from './errors.js';
import type { OcspCertStatus, OcspResponse } from './ocsp-response-builder.js';
import { DEFAULT_OCSP_INTERVAL_MS, buildOcspResponse, ocspValidity } from './ocsp-response-builder.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { parseOcspSignReason } from './revocation-reason.js';

/** The body of `POST /api/v1/cfssl/ocspsign`, with CFSSL's member names. */
export interface OcspSignRequestBody {
  certificate: string;
  status?: string;
  reason?: number;
  /** `YYYY-MM-DD`, `now` or `""`. */
  revoked_at?: string;
  /** `SHA1`, `SHA256`, `SHA384` or `SHA512` (exact spelling). */
  issuer_hash?: string;
}

/** A CFSSL ocspsign request, decoded and checked. */
export interface OcspSignRequest {
  certificate: Certificate;
  status: OcspCertStatus;
  reason: number;
  revokedAt: Date | null;
  hashAlgorithm: CertIdHashAlgorithm;
}

const ISSUER_HASHES: ReadonlySet<string> = new Set(['SHA1', 'SHA256', 'SHA384', 'SHA512']);
const STATUSES: ReadonlySet<string> = new Set(['good', 'revoked', 'unknown']);

function unparsable(): RevocationRequestError {
  return new RevocationRequestError('Unable to parse sign request');
}

/**
 * Decode an ocspsign body the way CFSSL's handler does, before signing: JSON shape (`Unable to parse
 * sign request`), exactly one PEM certificate (`Malformed certificate`), `revoked_at` for revoked
 * (`Malformed revocation time`), `issuer_hash` (`Unsupported hash algorithm in request`), all 400.
 */
export function decodeOcspSignRequest(body: unknown, now: Date = new Date()): OcspSignRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw unparsable();
  const fields = body as Record<string, unknown>;
  for (const key of ['certificate', 'status', 'revoked_at', 'issuer_hash'] as const) {
    if (fields[key] !== undefined && fields[key] !== null && typeof fields[key] !== 'string') throw unparsable();
  }
  const reasonValue = fields['reason'];
  if (reasonValue !== undefined && reasonValue !== null && !Number.isInteger(reasonValue)) throw unparsable();

  let certificate: Certificate;
  try {
    const certificates = parseCertificates((fields['certificate'] as string | undefined) ?? '');
    if (certificates.length !== 1) throw new Error('not exactly one certificate');
    certificate = certificates[0]!;
  } catch (cause) {
    throw new RevocationRequestError('Malformed certificate', { cause });
  }

  // Absent means good; present-but-empty is invalid (8200), as CFSSL.
  const status = (fields['status'] as string | undefined | null) ?? 'good';
  let revokedAt: Date | null = null;
  let reason = 0;
  if (status === 'revoked') {
    reason = parseOcspSignReason(reasonValue);
    const text = (fields['revoked_at'] as string | undefined | null) ?? '';
    if (text === '' || text === 'now') revokedAt = now;
    else {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
      const date = match ? new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))) : null;
      if (!match || !date || date.getUTCDate() !== Number(match[3]) || date.getUTCMonth() !== Number(match[2]) - 1) {
        throw new RevocationRequestError('Malformed revocation time');
      }
      revokedAt = date;
    }
  }
  const issuerHash = (fields['issuer_hash'] as string | undefined | null) ?? '';
  if (issuerHash !== '' && !ISSUER_HASHES.has(issuerHash)) throw new RevocationRequestError('Unsupported hash algorithm in request');
  return {
    certificate,
    status: status as OcspCertStatus,
    reason,
    revokedAt,
    hashAlgorithm: (issuerHash === '' ? 'SHA1' : issuerHash) as CertIdHashAlgorithm,
  };
}

/** Options of {@link signOcspRequest}. */
export interface SignOcspRequestOptions {
  /** CFSSL `-interval`; default 96 hours. */
  intervalMs?: number;
  /** Default now. */
  now?: Date;
}

/**
 * CFSSL's `StandardSigner.Sign`: the certificate must name the CA as issuer byte for byte (8100
 * `Certificate not issued by this issuer`) and carry a signature the CA key verifies (8200), the
 * status must be `good`, `revoked` or `unknown` (8200 `Invalid revocation status`); then the
 * response is signed with CFSSL's times ({@link ocspValidity}).
 */
export async function signOcspRequest(identity: OcspSigningIdentity, request: OcspSignRequest, options: SignOcspRequestOptions = {}): Promise<OcspResponse> {
  const { certificate } = request;
  if (!Buffer.from(certificate.issuer.der).equals(identity.issuer.subject.der)) throw new OcspIssuerMismatchError();
  if (!verifySignature(certificate.tbs, certificate.signature, certificate.signatureAlgorithm, identity.issuer.publicKey)) {
    throw new OcspInvalidStatusError("the certificate's signature does not verify with the CA's key");
  }
  if (!STATUSES.has(request.status)) throw new OcspInvalidStatusError();
  const validity = ocspValidity(options.now ?? new Date(), options.intervalMs ?? DEFAULT_OCSP_INTERVAL_MS, request.revokedAt ?? undefined);
  return buildOcspResponse({
    identity,
    serialNumber: Uint8Array.from(Buffer.from(certificate.serialNumberHex, 'hex')),
    status: request.status,
    revokedAt: request.revokedAt ?? undefined,
    reason: request.reason,
    hashAlgorithm: request.hashAlgorithm,
    ...validity,
  });
}

/**
 * The whole ocspsign operation on a JSON body: {@link decodeOcspSignRequest}, then
 * {@link signOcspRequest}. Returns CFSSL's result object `{ ocspResponse: <base64 DER> }`.
 */
export async function ocspSign(identity: OcspSigningIdentity, body: unknown, options: SignOcspRequestOptions = {}): Promise<{ ocspResponse: string }> {
  const request = decodeOcspSignRequest(body, options.now);
  const response = await signOcspRequest(identity, request, options);
  return { ocspResponse: Buffer.from(response.der).toString('base64') };
}
