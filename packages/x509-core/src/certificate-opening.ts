/**
 * The part every reading of a Certificate starts with, shared by `parseCertificate` (every field)
 * and `readCertificateIndex` (the fields trust pools index by): one Certificate with nothing after
 * it, TBSCertificate + signatureAlgorithm + signatureValue, the version (1–3), the serial number
 * element, and the inner and outer signature AlgorithmIdentifiers byte-identical (RFC 5280
 * 4.1.1.2; Go compares their bytes). The readers it returns stand after `signature`, at `issuer`.
 */
import type { BitString, DerElement } from './der-reader.js';
import { DerReader, readBitString, readSmallInteger } from './der-reader.js';
import { DerDecodeError } from './errors.js';

/** What {@link openCertificate} has read; `tbs` continues at `issuer`. */
export interface CertificateOpening {
  /** The Certificate SEQUENCE's reader (finished), for reading `outerAlgorithm` in its context. */
  readonly cert: DerReader;
  readonly tbsElement: DerElement;
  /** The TBSCertificate's reader, positioned at `issuer`. */
  readonly tbs: DerReader;
  readonly outerAlgorithm: DerElement;
  readonly signature: BitString;
  /** 1, 2 or 3. */
  readonly version: number;
  readonly serialElement: DerElement;
}

/** Read the opening of the DER certificate `der` (see the module comment); throws DerDecodeError. */
export function openCertificate(der: Uint8Array): CertificateOpening {
  const top = new DerReader(der);
  const certElement = top.expect(0x30, 'Certificate');
  top.finish('Certificate');
  const cert = top.enter(certElement);
  const tbsElement = cert.expect(0x30, 'TBSCertificate');
  const outerAlgorithm = cert.expect(0x30, 'signatureAlgorithm');
  const signature = readBitString(der, cert.expect(0x03, 'signatureValue'));
  cert.finish('Certificate');

  const tbs = cert.enter(tbsElement);
  let version = 1;
  const versionElement = tbs.optional(0xa0);
  if (versionElement) {
    const inner = tbs.enter(versionElement);
    const raw = readSmallInteger(der, inner.expect(0x02, 'version'));
    inner.finish('version');
    // RFC 5280 4.1.2.1: v1(0), v2(1), v3(2).
    if (raw < 0 || raw > 2) throw new DerDecodeError(`invalid certificate version ${raw + 1}`, versionElement.start);
    version = raw + 1;
  }
  const serialElement = tbs.expect(0x02, 'serialNumber');
  const innerAlgorithm = tbs.expect(0x30, 'signature');
  const innerLength = innerAlgorithm.end - innerAlgorithm.start;
  if (innerLength !== outerAlgorithm.end - outerAlgorithm.start) {
    throw new DerDecodeError("inner and outer signature algorithm identifiers don't match", innerAlgorithm.start);
  }
  for (let i = 0; i < innerLength; i++) {
    if (der[innerAlgorithm.start + i] !== der[outerAlgorithm.start + i]) {
      throw new DerDecodeError("inner and outer signature algorithm identifiers don't match", innerAlgorithm.start);
    }
  }
  return { cert, tbsElement, tbs, outerAlgorithm, signature, version, serialElement };
}
