/**
 * A stored OCSP response made ready to serve: its DER untouched, its ETag and HTTP dates computed
 * once. The responder serves stored DER as is (CFSSL does too: thisUpdate is never refreshed on the
 * way out), so per request it only compares, looks up and copies.
 */
import { createHash } from 'node:crypto';

import { OcspResponseParseError } from './errors.js';
import { httpDate } from './http-date.js';
import type { OcspSingleResponse } from './ocsp-response-parser.js';
import { parseOcspResponse } from './ocsp-response-parser.js';
import { decimalSerial } from './serial-number.js';
import { hex } from './cert-id.js';

/** A successful OCSP response with what serving it needs. */
export interface PreparedOcspResponse {
  readonly der: Uint8Array;
  /** The first SingleResponse (the one CFSSL and certsmith answer with). */
  readonly single: OcspSingleResponse;
  /** Decimal serial of {@link single} (CFSSL's store key). */
  readonly serial: string;
  /** Lower-case hex of the CertID's issuerKeyHash. */
  readonly issuerKeyHash: string;
  /** `"` + upper-case hex SHA-256 of the DER + `"`, as CFSSL. */
  readonly etag: string;
  /** thisUpdate as an HTTP date. */
  readonly lastModified: string;
  /** nextUpdate as an HTTP date, `null` when the response has none. */
  readonly expires: string | null;
  /** nextUpdate in milliseconds since the epoch, `null` when absent. */
  readonly nextUpdateMs: number | null;
}

/**
 * Prepare a DER OCSP response for serving.
 *
 * @throws OcspResponseParseError when it is not a successful BasicOCSPResponse.
 */
export function prepareOcspResponse(der: Uint8Array): PreparedOcspResponse {
  const parsed = parseOcspResponse(der);
  if (parsed.basic === null) throw new OcspResponseParseError(`stored OCSP response has status ${parsed.status}, not successful`);
  const single = parsed.basic.responses[0]!;
  return {
    der,
    single,
    serial: decimalSerial(single.certId.serialNumber),
    issuerKeyHash: hex(single.certId.issuerKeyHash),
    etag: `"${createHash('sha256').update(der).digest('hex').toUpperCase()}"`,
    lastModified: httpDate(single.thisUpdate),
    expires: single.nextUpdate === null ? null : httpDate(single.nextUpdate),
    nextUpdateMs: single.nextUpdate === null ? null : single.nextUpdate.getTime(),
  };
}

/** True for a {@link PreparedOcspResponse} (as opposed to raw DER). */
export function isPreparedOcspResponse(value: unknown): value is PreparedOcspResponse {
  return typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && 'etag' in value && 'der' in value;
}
