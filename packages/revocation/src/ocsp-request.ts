/**
 * OCSP request parsing (RFC 6960 4.1.1). CFSSL (Go's `ocsp.ParseRequest`, lifecycle spec §5.5) answers
 * malformedRequest to every signed request and to any request with a `requestorName`, and ignores
 * nonces. certsmith reads signed requests too (the signature is not checked — RFC 6960 lets a
 * responder ignore it, and this responder answers anyone) and returns the nonce so the responder can
 * echo it when configured to. Only SHA-1/SHA-2 CertIDs are accepted; an unknown hash algorithm, no
 * request entries or trailing bytes are malformed, as in CFSSL.
 */
import type { DerElement } from '@certsmith/x509-core';
import { DerReader, elementContent, readIntegerBytes, readOctetString, readOid } from '@certsmith/x509-core';

import type { CertId } from './cert-id.js';
import { certIdHashFromOid } from './cert-id.js';
import { OcspRequestError } from './errors.js';

/** id-pkix-ocsp-nonce (RFC 6960 4.4.1). */
export const OID_OCSP_NONCE = '1.3.6.1.5.5.7.48.1.2';

/** A parsed OCSP request. */
export interface OcspRequest {
  /** Every CertID of `requestList`, in order (responders answer the first, as CFSSL does). */
  certIds: CertId[];
  /** extnValue of the nonce extension (the DER OCTET STRING inside), `null` when absent. */
  nonce: Uint8Array | null;
  /** True when the request carried `optionalSignature`. */
  signed: boolean;
  /** True when the request named its requestor. */
  hasRequestorName: boolean;
}

function readCertId(reader: DerReader): CertId {
  const certId = reader.sequence('CertID');
  const algorithm = certId.sequence('hashAlgorithm');
  const oid = readOid(algorithm.bytes, algorithm.expect(0x06, 'hash algorithm OID'));
  if (algorithm.hasMore()) algorithm.read(); // NULL or absent parameters
  algorithm.finish('hashAlgorithm');
  const hashAlgorithm = certIdHashFromOid(oid);
  if (hashAlgorithm === null) throw new OcspRequestError(`unsupported CertID hash algorithm ${oid}`);
  const issuerNameHash = readOctetString(certId.bytes, certId.expect(0x04, 'issuerNameHash'));
  const issuerKeyHash = readOctetString(certId.bytes, certId.expect(0x04, 'issuerKeyHash'));
  const serialNumber = readIntegerBytes(certId.bytes, certId.expect(0x02, 'serialNumber'));
  certId.finish('CertID');
  return { hashAlgorithm, issuerNameHash, issuerKeyHash, serialNumber };
}

/** extnValue of the nonce among `Extensions`, or `null`. */
function findNonce(reader: DerReader, element: DerElement): Uint8Array | null {
  const extensions = reader.enter(element).sequence('Extensions');
  let nonce: Uint8Array | null = null;
  while (extensions.hasMore()) {
    const extension = extensions.sequence('Extension');
    const oid = readOid(extension.bytes, extension.expect(0x06, 'extnID'));
    extension.optional(0x01);
    const value = readOctetString(extension.bytes, extension.expect(0x04, 'extnValue'));
    extension.finish('Extension');
    if (oid === OID_OCSP_NONCE) nonce = value;
  }
  return nonce;
}

/**
 * Parse a DER OCSPRequest.
 *
 * @throws OcspRequestError (400) for anything that is not a well-formed request with at least one
 *   entry and supported CertID hash algorithms.
 */
export function parseOcspRequest(der: Uint8Array): OcspRequest {
  try {
    const top = new DerReader(der);
    const request = top.sequence('OCSPRequest');
    top.finish('OCSPRequest');
    const tbs = request.sequence('TBSRequest');
    const version = tbs.optional(0xa0);
    if (version !== null) {
      const versionReader = tbs.enter(version);
      const value = elementContent(der, versionReader.expect(0x02, 'version'));
      if (value.length !== 1 || value[0] !== 0) throw new OcspRequestError('unsupported OCSP request version');
    }
    const requestorName = tbs.optional(0xa1);
    const list = tbs.sequence('requestList');
    const certIds: CertId[] = [];
    let nonce: Uint8Array | null = null;
    while (list.hasMore()) {
      const entry = list.sequence('Request');
      certIds.push(readCertId(entry));
      const single = entry.optional(0xa0);
      if (single !== null) findNonce(entry, single);
      entry.finish('Request');
    }
    if (certIds.length === 0) throw new OcspRequestError('OCSP request has no entries');
    const extensions = tbs.optional(0xa2);
    if (extensions !== null) nonce = findNonce(tbs, extensions);
    tbs.finish('TBSRequest');
    const signature = request.optional(0xa0);
    request.finish('OCSPRequest');
    return { certIds, nonce, signed: signature !== null, hasRequestorName: requestorName !== null };
  } catch (error) {
    if (error instanceof OcspRequestError) throw error;
    throw new OcspRequestError(`malformed OCSP request: ${(error as Error).message}`, { cause: error });
  }
}
