/**
 * Reading OCSP responses (RFC 6960 4.2.1): what the responder needs from a stored response (its times
 * for the HTTP caching headers, its CertID for matching) and what the `-responses` file source keys
 * on. Parsing is strict DER (the x509-core reader); the signature is not verified here — stored
 * responses were signed by this CA or by `cfssl ocsprefresh`.
 */
import type { DerReader } from '@certsmith/x509-core';
import { DerReader as Reader, elementBytes, readBitString, readIntegerBytes, readOctetString, readOid, readSmallInteger, readTime } from '@certsmith/x509-core';

import type { CertId } from './cert-id.js';
import { certIdHashFromOid } from './cert-id.js';
import { OcspResponseParseError } from './errors.js';
import type { OcspCertStatus } from './ocsp-response-builder.js';
import { OID_OCSP_BASIC, OcspResponseStatus } from './ocsp-response-builder.js';
import { OID_OCSP_NONCE } from './ocsp-request.js';

/** Name of an OCSPResponseStatus value. */
export type OcspResponseStatusName = keyof typeof OcspResponseStatus;

/** One SingleResponse. */
export interface OcspSingleResponse {
  certId: CertId;
  status: OcspCertStatus;
  /** For `revoked`. */
  revokedAt: Date | null;
  /** CRLReason for `revoked` when present. */
  reason: number | null;
  thisUpdate: Date;
  nextUpdate: Date | null;
}

/** A BasicOCSPResponse. */
export interface BasicOcspResponse {
  /** The signed bytes. */
  tbsResponseData: Uint8Array;
  /** DER of the signature AlgorithmIdentifier. */
  signatureAlgorithm: Uint8Array;
  signature: Uint8Array;
  responderId: { kind: 'name' | 'key'; value: Uint8Array };
  producedAt: Date;
  responses: OcspSingleResponse[];
  /** extnValue of a nonce in responseExtensions. */
  nonce: Uint8Array | null;
  /** DER of each certificate in `certs`. */
  certificates: Uint8Array[];
}

/** A parsed OCSPResponse; `basic` is `null` for non-successful responses. */
export interface ParsedOcspResponse {
  status: OcspResponseStatusName;
  basic: BasicOcspResponse | null;
}

const STATUS_NAMES = new Map<number, OcspResponseStatusName>(
  (Object.entries(OcspResponseStatus) as Array<[OcspResponseStatusName, number]>).map(([name, value]) => [value, name]),
);

function readCertId(reader: DerReader): CertId {
  const certId = reader.sequence('CertID');
  const algorithm = certId.sequence('hashAlgorithm');
  const oid = readOid(algorithm.bytes, algorithm.expect(0x06, 'hash algorithm'));
  if (algorithm.hasMore()) algorithm.read();
  const hashAlgorithm = certIdHashFromOid(oid);
  if (hashAlgorithm === null) throw new OcspResponseParseError(`unsupported CertID hash algorithm ${oid}`);
  return {
    hashAlgorithm,
    issuerNameHash: readOctetString(certId.bytes, certId.expect(0x04, 'issuerNameHash')),
    issuerKeyHash: readOctetString(certId.bytes, certId.expect(0x04, 'issuerKeyHash')),
    serialNumber: readIntegerBytes(certId.bytes, certId.expect(0x02, 'serialNumber')),
  };
}

function readSingle(reader: DerReader): OcspSingleResponse {
  const single = reader.sequence('SingleResponse');
  const certId = readCertId(single);
  const statusElement = single.read();
  let status: OcspCertStatus;
  let revokedAt: Date | null = null;
  let reason: number | null = null;
  if (statusElement.tag === 0x80) status = 'good';
  else if (statusElement.tag === 0x82) status = 'unknown';
  else if (statusElement.tag === 0xa1) {
    status = 'revoked';
    const info = single.enter(statusElement);
    revokedAt = readTime(info.bytes, info.read());
    const reasonElement = info.optional(0xa0);
    if (reasonElement !== null) {
      const inner = info.enter(reasonElement).expect(0x0a, 'revocationReason');
      reason = readSmallInteger(info.bytes, { ...inner, tag: 0x02 });
    }
  } else throw new OcspResponseParseError(`unknown certStatus tag 0x${statusElement.tag.toString(16)}`);
  const thisUpdate = readTime(single.bytes, single.expect(0x18, 'thisUpdate'));
  const next = single.optional(0xa0);
  const nextUpdate = next === null ? null : readTime(single.bytes, single.enter(next).expect(0x18, 'nextUpdate'));
  single.optional(0xa1);
  single.finish('SingleResponse');
  return { certId, status, revokedAt, reason, thisUpdate, nextUpdate };
}

function readNonce(reader: DerReader): Uint8Array | null {
  const extensions = reader.sequence('Extensions');
  let nonce: Uint8Array | null = null;
  while (extensions.hasMore()) {
    const extension = extensions.sequence('Extension');
    const oid = readOid(extension.bytes, extension.expect(0x06, 'extnID'));
    extension.optional(0x01);
    const value = readOctetString(extension.bytes, extension.expect(0x04, 'extnValue'));
    if (oid === OID_OCSP_NONCE) nonce = value;
  }
  return nonce;
}

function readBasic(der: Uint8Array, reader: DerReader): BasicOcspResponse {
  const basic = reader.sequence('BasicOCSPResponse');
  const tbsElement = basic.expect(0x30, 'tbsResponseData');
  const tbs = basic.enter(tbsElement);
  const version = tbs.optional(0xa0);
  if (version !== null && readSmallInteger(der, tbs.enter(version).expect(0x02, 'version')) !== 0) {
    throw new OcspResponseParseError('unsupported OCSP response version');
  }
  const responderElement = tbs.read();
  let responderId: BasicOcspResponse['responderId'];
  if (responderElement.tag === 0xa1) responderId = { kind: 'name', value: elementBytes(der, tbs.enter(responderElement).expect(0x30, 'Name')) };
  else if (responderElement.tag === 0xa2) responderId = { kind: 'key', value: readOctetString(der, tbs.enter(responderElement).expect(0x04, 'KeyHash')) };
  else throw new OcspResponseParseError('unknown ResponderID');
  const producedAt = readTime(der, tbs.expect(0x18, 'producedAt'));
  const list = tbs.sequence('responses');
  const responses: OcspSingleResponse[] = [];
  while (list.hasMore()) responses.push(readSingle(list));
  if (responses.length === 0) throw new OcspResponseParseError('OCSP response has no SingleResponse');
  const extensions = tbs.optional(0xa1);
  const nonce = extensions === null ? null : readNonce(tbs.enter(extensions));
  tbs.finish('ResponseData');
  const signatureAlgorithm = elementBytes(der, basic.expect(0x30, 'signatureAlgorithm'));
  const signature = readBitString(der, basic.expect(0x03, 'signature')).bytes;
  const certificates: Uint8Array[] = [];
  const certs = basic.optional(0xa0);
  if (certs !== null) {
    const sequence = basic.enter(certs).sequence('certs');
    while (sequence.hasMore()) certificates.push(elementBytes(der, sequence.expect(0x30, 'Certificate')));
  }
  basic.finish('BasicOCSPResponse');
  reader.finish('response');
  return { tbsResponseData: elementBytes(der, tbsElement), signatureAlgorithm, signature, responderId, producedAt, responses, nonce, certificates };
}

/**
 * Parse a DER OCSPResponse.
 *
 * @throws OcspResponseParseError (400) when it is not a well-formed response, or a successful one
 *   whose responseBytes are not a BasicOCSPResponse with at least one SingleResponse.
 */
export function parseOcspResponse(der: Uint8Array): ParsedOcspResponse {
  try {
    const top = new Reader(der);
    const response = top.sequence('OCSPResponse');
    top.finish('OCSPResponse');
    const statusElement = response.expect(0x0a, 'responseStatus');
    const status = STATUS_NAMES.get(readSmallInteger(der, { ...statusElement, tag: 0x02 }));
    if (status === undefined) throw new OcspResponseParseError('unknown OCSP response status');
    const bytes = response.optional(0xa0);
    if (status !== 'successful') {
      response.finish('OCSPResponse');
      return { status, basic: null };
    }
    if (bytes === null) throw new OcspResponseParseError('successful OCSP response without responseBytes');
    const responseBytes = response.enter(bytes).sequence('ResponseBytes');
    const type = readOid(der, responseBytes.expect(0x06, 'responseType'));
    if (type !== OID_OCSP_BASIC) throw new OcspResponseParseError(`unsupported OCSP response type ${type}`);
    const octets = responseBytes.expect(0x04, 'response');
    const basic = readBasic(der, new Reader(der, octets.valueStart, octets.end, responseBytes.depth + 1));
    response.finish('OCSPResponse');
    return { status, basic };
  } catch (error) {
    if (error instanceof OcspResponseParseError) throw error;
    throw new OcspResponseParseError(`malformed OCSP response: ${(error as Error).message}`, { cause: error });
  }
}
