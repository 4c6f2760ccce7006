/**
 * OCSP responses (RFC 6960 4.2.1): a BasicOCSPResponse with one SingleResponse, signed through the
 * signer contract by the CA or a delegated responder. The shape is CFSSL's (Go's
 * `ocsp.CreateResponse`, lifecycle spec §5.1): version v1 (omitted), ResponderID byName by default,
 * revocationReason left out for unspecified, `certs` holding the responder certificate unless the
 * CA signs itself. A nonce is echoed when given (CFSSL never does, cfssl #740).
 */
import { derExplicit, derOctetString, derOid, derSequence, derTlv, Tag, concatBytes } from '@certsmith/x509-core';

import type { CertIdHashAlgorithm } from './cert-id.js';
import { encodeCertId } from './cert-id.js';
import { RevocationRequestError } from './errors.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { OID_OCSP_NONCE } from './ocsp-request.js';
import { RevocationReason, isRevocationReasonCode } from './revocation-reason.js';
import type { SerialNumber } from './serial-number.js';
import { integerContent, serialToBigInt } from './serial-number.js';
import { generalizedTime, wholeSeconds } from './time-encoding.js';

/** Certificate status of a SingleResponse. */
export type OcspCertStatus = 'good' | 'revoked' | 'unknown';

/** id-pkix-ocsp-basic. */
export const OID_OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';

/** OCSPResponseStatus values (RFC 6960 4.2.1). */
export const OcspResponseStatus = {
  successful: 0,
  malformedRequest: 1,
  internalError: 2,
  tryLater: 3,
  sigRequired: 5,
  unauthorized: 6,
} as const;

/** A non-successful OCSP response (`SEQUENCE { ENUMERATED status }`, no responseBytes). */
export function ocspErrorResponse(status: Exclude<keyof typeof OcspResponseStatus, 'successful'>): Uint8Array {
  return Uint8Array.of(0x30, 0x03, 0x0a, 0x01, OcspResponseStatus[status]);
}

/** CFSSL's default response lifetime (`-interval`): 96 hours. */
export const DEFAULT_OCSP_INTERVAL_MS = 96 * 3_600_000;

/** The times of a response. */
export interface OcspValidity {
  thisUpdate: Date;
  nextUpdate: Date;
  producedAt: Date;
}

/**
 * CFSSL's times (§5.1): thisUpdate = now truncated to the UTC hour, nextUpdate = thisUpdate +
 * interval, producedAt = now truncated to the minute. With `revokedAt` later than that hour,
 * thisUpdate is the revocation time instead (a response must not claim a status older than the
 * revocation it reports; CFSSL's can).
 */
export function ocspValidity(now: Date, intervalMs: number = DEFAULT_OCSP_INTERVAL_MS, revokedAt?: Date): OcspValidity {
  const ms = now.getTime();
  let thisUpdate = ms - (ms % 3_600_000);
  if (revokedAt !== undefined) thisUpdate = Math.min(ms, Math.max(thisUpdate, wholeSeconds(revokedAt).getTime()));
  return { thisUpdate: new Date(thisUpdate), nextUpdate: new Date(thisUpdate + intervalMs), producedAt: new Date(ms - (ms % 60_000)) };
}

/** Options of {@link buildOcspResponse}. */
export interface OcspResponseOptions {
  identity: OcspSigningIdentity;
  /** The certificate's serial: bigint, CFSSL's decimal text, or DER INTEGER content octets. */
  serialNumber: SerialNumber | Uint8Array;
  status: OcspCertStatus;
  /** Required for `revoked`. */
  revokedAt?: Date;
  /** CRLReason for `revoked`; 0/absent writes none. */
  reason?: number;
  thisUpdate: Date;
  /** `null` leaves nextUpdate out ("newer information is always available"). */
  nextUpdate: Date | null;
  /** Default: now truncated to the minute. */
  producedAt?: Date;
  /** CertID hash; default SHA-1. */
  hashAlgorithm?: CertIdHashAlgorithm;
  /** extnValue of the request's nonce, echoed in responseExtensions. */
  nonce?: Uint8Array | null;
}

/** A signed response. */
export interface OcspResponse {
  /** DER OCSPResponse (what the responder serves and the store keeps). */
  der: Uint8Array;
  thisUpdate: Date;
  nextUpdate: Date | null;
  producedAt: Date;
}

/**
 * The CertStatus of a SingleResponse (RFC 6960 4.2.1): `[0] good`, `[2] unknown` or `[1] revoked`
 * with its time and, unless unspecified, its reason.
 *
 * @throws RevocationRequestError (400) for a bad status, or a revoked one without a valid date or with a reason that is not a CRLReason
 */
export function encodeCertStatus(status: OcspCertStatus, revokedAt?: Date, reason?: number): Uint8Array {
  switch (status) {
    case 'good':
      return Uint8Array.of(0x80, 0x00);
    case 'unknown':
      return Uint8Array.of(0x82, 0x00);
    case 'revoked': {
      if (!(revokedAt instanceof Date) || Number.isNaN(revokedAt.getTime())) throw new RevocationRequestError('revokedAt must be a valid date for a revoked certificate');
      const code = reason ?? RevocationReason.unspecified;
      if (!isRevocationReasonCode(code)) throw new RevocationRequestError(`reason ${code} is not an RFC 5280 CRLReason code`);
      const parts = [generalizedTime(revokedAt)];
      if (code !== RevocationReason.unspecified) parts.push(derExplicit(0, Uint8Array.of(0x0a, 1, code)));
      return derTlv(0xa1, concatBytes(parts));
    }
    default:
      throw new RevocationRequestError(`status must be good, revoked or unknown, got ${JSON.stringify(status)}`);
  }
}

/** DER INTEGER content octets of a serial given as a bigint, CFSSL's decimal text, or already as content octets. */
export function serialNumberContent(serial: SerialNumber | Uint8Array): Uint8Array {
  return serial instanceof Uint8Array ? serial : integerContent(serialToBigInt(serial));
}

/**
 * Refuse a nextUpdate before thisUpdate (compared in whole seconds, as they are encoded).
 * @throws RevocationRequestError (400)
 */
export function checkUpdateOrder(thisUpdate: Date, nextUpdate: Date | null): void {
  if (nextUpdate === null) return;
  const from = wholeSeconds(thisUpdate);
  const until = wholeSeconds(nextUpdate);
  if (until.getTime() < from.getTime()) throw new RevocationRequestError(`nextUpdate (${until.toISOString()}) must not be before thisUpdate (${from.toISOString()})`);
}

/**
 * Build and sign an OCSP response.
 *
 * @throws RevocationRequestError (400) for a bad status, reason or date; the signer's coded error
 *   when signing fails.
 */
export async function buildOcspResponse(options: OcspResponseOptions): Promise<OcspResponse> {
  const { identity } = options;
  const hashAlgorithm = options.hashAlgorithm ?? 'SHA1';
  const thisUpdate = wholeSeconds(options.thisUpdate);
  const nextUpdate = options.nextUpdate === null ? null : wholeSeconds(options.nextUpdate);
  checkUpdateOrder(thisUpdate, nextUpdate);
  const now = Date.now();
  const producedAt = wholeSeconds(options.producedAt ?? new Date(now - (now % 60_000)));

  const certId = encodeCertId(hashAlgorithm, identity.issuerHashes(hashAlgorithm), serialNumberContent(options.serialNumber));
  const single = [certId, encodeCertStatus(options.status, options.revokedAt, options.reason), generalizedTime(thisUpdate)];
  if (nextUpdate !== null) single.push(derExplicit(0, generalizedTime(nextUpdate)));
  const data = [identity.responderId, generalizedTime(producedAt), derSequence(derSequence(...single))];
  if (options.nonce) {
    data.push(derExplicit(1, derSequence(derSequence(derOid(OID_OCSP_NONCE), derOctetString(options.nonce)))));
  }
  const tbsResponseData = derSequence(...data);
  const signature = await identity.signer.sign(tbsResponseData);
  const basic = [tbsResponseData, identity.signer.algorithmIdentifier, derTlv(Tag.BitString, concatBytes([Uint8Array.of(0), signature]))];
  if (identity.certs) basic.push(identity.certs);
  const der = derSequence(
    Uint8Array.of(0x0a, 0x01, OcspResponseStatus.successful),
    derExplicit(0, derSequence(derOid(OID_OCSP_BASIC), derOctetString(derSequence(...basic)))),
  );
  return { der, thisUpdate, nextUpdate, producedAt };
}
