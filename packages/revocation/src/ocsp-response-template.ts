/**
 * The OCSP responses of one signing identity, encoded around what they share. A response about one
 * certificate (RFC 6960 4.2.1, the shape of `buildOcspResponse`: one SingleResponse, no nonce)
 * differs from the next only in the serial, the certStatus, the three times and the signature; the
 * ResponderID, the CertID's hash AlgorithmIdentifier and issuer hashes, the signature
 * AlgorithmIdentifier, the `certs` field and the responseBytes' OID are encoded once per identity
 * here, and each response is written into one buffer of its computed size instead of being
 * assembled from a dozen nested TLV copies. Recording at issuance signs one per certificate, the
 * refresh one per row (docs/performance.md, "Recording at issuance: the hook's own work";
 * tools/bench/revocation/ocsp-response-template.bench.mjs). The bytes are `buildOcspResponse`'s.
 */
import { derOctetString, derOid, Tag } from '@certsmith/x509-core';

import type { CertIdHashAlgorithm } from './cert-id.js';
import { certIdHashIdentifier } from './cert-id.js';
import { lengthFieldSize, tlvSize, writeHeaderAt } from './der-sink.js';
import type { OcspResponseOptions } from './ocsp-response-builder.js';
import { checkUpdateOrder, encodeCertStatus, serialNumberContent } from './ocsp-response-builder.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { writeGeneralizedTime } from './time-encoding.js';

/** id-pkix-ocsp-basic (`OID_OCSP_BASIC`) as a whole OBJECT IDENTIFIER TLV. */
const OCSP_BASIC_OID_TLV = derOid('1.3.6.1.5.5.7.48.1.1');
/** GeneralizedTime `YYYYMMDDHHMMSSZ`: always 17 octets with its header. */
const TIME_SIZE = 17;
/** `[0] EXPLICIT GeneralizedTime` (nextUpdate). */
const NEXT_UPDATE_SIZE = 2 + TIME_SIZE;
/** `ENUMERATED successful` of the OCSPResponse. */
const SUCCESSFUL = Uint8Array.of(0x0a, 0x01, 0x00);

/** What one response says: `OcspResponseOptions` without the identity, hash and nonce (the template's). */
export type OcspSingleResponseFields = Pick<OcspResponseOptions, 'serialNumber' | 'status' | 'revokedAt' | 'reason' | 'thisUpdate' | 'nextUpdate'> & {
  producedAt: Date;
};

/** See the module comment; made by {@link ocspResponseTemplate}. */
export interface OcspResponseTemplate {
  readonly identity: OcspSigningIdentity;
  readonly hashAlgorithm: CertIdHashAlgorithm;
  /**
   * The ResponseData to sign for one certificate.
   *
   * @throws RevocationRequestError (400) for a bad status, reason, serial or date, as `buildOcspResponse` (same checks, same order)
   */
  responseData(single: OcspSingleResponseFields): Uint8Array;
  /** The DER OCSPResponse of `responseData` signed with `signature` (the identity's signer's output). */
  response(responseData: Uint8Array, signature: Uint8Array): Uint8Array;
}

function writeBytes(out: Uint8Array, offset: number, bytes: Uint8Array): number {
  out.set(bytes, offset);
  return offset + bytes.length;
}

function createTemplate(identity: OcspSigningIdentity, hashAlgorithm: CertIdHashAlgorithm): OcspResponseTemplate {
  const hashes = identity.issuerHashes(hashAlgorithm);
  // CertID without its serial: hashAlgorithm, issuerNameHash, issuerKeyHash (RFC 6960 4.1.1).
  const certIdPrefix = new Uint8Array([...certIdHashIdentifier(hashAlgorithm), ...derOctetString(hashes.nameHash), ...derOctetString(hashes.keyHash)]);
  const { responderId } = identity;
  const algorithmIdentifier = identity.signer.algorithmIdentifier;
  const certs = identity.certs;
  return {
    identity,
    hashAlgorithm,
    responseData(single) {
      const { thisUpdate, nextUpdate, producedAt } = single;
      checkUpdateOrder(thisUpdate, nextUpdate);
      const serialContent = serialNumberContent(single.serialNumber);
      const certStatus = encodeCertStatus(single.status, single.revokedAt, single.reason);
      const certIdLength = certIdPrefix.length + tlvSize(serialContent.length);
      const singleLength = tlvSize(certIdLength) + certStatus.length + TIME_SIZE + (nextUpdate === null ? 0 : NEXT_UPDATE_SIZE);
      const responsesLength = tlvSize(singleLength);
      const dataLength = responderId.length + TIME_SIZE + tlvSize(responsesLength);
      const out = new Uint8Array(tlvSize(dataLength));
      let at = writeHeaderAt(out, 0, Tag.Sequence, dataLength);
      at = writeBytes(out, at, responderId);
      at = writeGeneralizedTime(out, at, producedAt);
      at = writeHeaderAt(out, at, Tag.Sequence, responsesLength);
      at = writeHeaderAt(out, at, Tag.Sequence, singleLength);
      at = writeHeaderAt(out, at, Tag.Sequence, certIdLength);
      at = writeBytes(out, at, certIdPrefix);
      at = writeHeaderAt(out, at, Tag.Integer, serialContent.length);
      at = writeBytes(out, at, serialContent);
      at = writeBytes(out, at, certStatus);
      at = writeGeneralizedTime(out, at, thisUpdate);
      if (nextUpdate !== null) {
        at = writeHeaderAt(out, at, 0xa0, TIME_SIZE);
        writeGeneralizedTime(out, at, nextUpdate);
      }
      return out;
    },
    response(responseData, signature) {
      const signatureLength = 1 + signature.length;
      const basicLength = responseData.length + algorithmIdentifier.length + tlvSize(signatureLength) + (certs === null ? 0 : certs.length);
      const bytesLength = OCSP_BASIC_OID_TLV.length + tlvSize(tlvSize(basicLength));
      const explicitLength = tlvSize(bytesLength);
      const totalLength = SUCCESSFUL.length + tlvSize(explicitLength);
      const out = new Uint8Array(1 + lengthFieldSize(totalLength) + totalLength);
      let at = writeHeaderAt(out, 0, Tag.Sequence, totalLength);
      at = writeBytes(out, at, SUCCESSFUL);
      at = writeHeaderAt(out, at, 0xa0, explicitLength);
      at = writeHeaderAt(out, at, Tag.Sequence, bytesLength);
      at = writeBytes(out, at, OCSP_BASIC_OID_TLV);
      at = writeHeaderAt(out, at, Tag.OctetString, tlvSize(basicLength));
      at = writeHeaderAt(out, at, Tag.Sequence, basicLength);
      at = writeBytes(out, at, responseData);
      at = writeBytes(out, at, algorithmIdentifier);
      at = writeHeaderAt(out, at, Tag.BitString, signatureLength);
      out[at] = 0; // no unused bits
      at = writeBytes(out, at + 1, signature);
      if (certs !== null) writeBytes(out, at, certs);
      return out;
    },
  };
}

const templates = new WeakMap<OcspSigningIdentity, Map<CertIdHashAlgorithm, OcspResponseTemplate>>();

/** The response template of `identity` for CertIDs hashed with `hashAlgorithm` (made once, then kept with the identity). */
export function ocspResponseTemplate(identity: OcspSigningIdentity, hashAlgorithm: CertIdHashAlgorithm = 'SHA1'): OcspResponseTemplate {
  let byAlgorithm = templates.get(identity);
  if (byAlgorithm === undefined) {
    byAlgorithm = new Map();
    templates.set(identity, byAlgorithm);
  }
  let template = byAlgorithm.get(hashAlgorithm);
  if (template === undefined) {
    template = createTemplate(identity, hashAlgorithm);
    byAlgorithm.set(hashAlgorithm, template);
  }
  return template;
}
