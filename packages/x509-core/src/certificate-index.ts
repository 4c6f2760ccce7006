/**
 * A certificate's structure and the fields trust pools index by (subject and issuer DER, key
 * identifiers, signature; the SPKI keystores hash), read without decoding the rest: names, times,
 * the public key and the contents of other extensions stay undecoded. For loading trust data at
 * start-up, where thousands of certificates are indexed and a request later needs a handful in
 * full ({@link LazyCertificate} parses them on first use): about a quarter of the cost of
 * `parseCertificate` (timings in docs/performance.md, start-up section).
 *
 * The structure is checked as `parseCertificate` checks it — one Certificate with nothing after it,
 * TBSCertificate fields in RFC 5280 order, version 1–3, identical inner and outer signature
 * algorithms, well-formed Extension entries without duplicates, the key identifier extensions in
 * their RFC 5280 form — but the contents it skips are not: a certificate this accepts can still fail
 * `parseCertificate` (e.g. a malformed name string or an unparsable SAN extension).
 */
import { openCertificate } from './certificate-opening.js';
import { DerReader, readOctetString } from './der-reader.js';
import { CertificateParseError, DerDecodeError } from './errors.js';
import type { CertificateIndexFields } from './lazy-certificate.js';

/** What {@link readCertificateIndex} returns: views into the DER it was given. */
export interface CertificateIndex extends CertificateIndexFields {
  /** The whole SubjectPublicKeyInfo element (what keystores hash). */
  readonly spki: Uint8Array;
}

/** `2.5.29.14` (subjectKeyIdentifier) and `2.5.29.35` (authorityKeyIdentifier), as OID content bytes. */
const SKI_OID = 14;
const AKI_OID = 35;

/** The last arc of an `id-ce` OID (`2.5.29.x`) given its content bytes, or -1 for any other OID. */
function idCeArc(bytes: Uint8Array, start: number, end: number): number {
  return end - start === 3 && bytes[start] === 0x55 && bytes[start + 1] === 0x1d ? bytes[start + 2]! : -1;
}

function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

function readIndex(der: Uint8Array): CertificateIndex {
  const { tbs, signature } = openCertificate(der);
  const issuer = tbs.expect(0x30, 'issuer');
  tbs.expect(0x30, 'validity');
  const subject = tbs.expect(0x30, 'subject');
  const spki = tbs.expect(0x30, 'subjectPublicKeyInfo');
  tbs.optional(0x81); // issuerUniqueID
  tbs.optional(0x82); // subjectUniqueID

  let subjectKeyId: Uint8Array | null = null;
  let authorityKeyId: Uint8Array | null = null;
  const extensionsElement = tbs.optional(0xa3);
  if (extensionsElement) {
    const wrapper = tbs.enter(extensionsElement);
    const list = wrapper.sequence('Extensions');
    wrapper.finish('extensions');
    const seen: { start: number; length: number }[] = [];
    while (list.hasMore()) {
      const ext = list.sequence('Extension');
      const oid = ext.expect(0x06, 'extnID');
      const oidLength = oid.end - oid.valueStart;
      for (const other of seen) {
        if (other.length === oidLength && sameBytes(der, other.start, oid.valueStart, oidLength)) {
          throw new DerDecodeError('duplicate extension', oid.start);
        }
      }
      seen.push({ start: oid.valueStart, length: oidLength });
      ext.optional(0x01);
      const value = ext.expect(0x04, 'extnValue');
      ext.finish('Extension');
      // The two identifiers read exactly as `readExtensions` reads them (RFC 5280 4.2.1.1, 4.2.1.2).
      const arc = idCeArc(der, oid.valueStart, oid.end);
      if (arc === SKI_OID) {
        const inner = new DerReader(der, value.valueStart, value.end, list.depth + 2);
        subjectKeyId = readOctetString(der, inner.expect(0x04, 'SubjectKeyIdentifier'));
        inner.finish('SubjectKeyIdentifier');
      } else if (arc === AKI_OID) {
        const inner = new DerReader(der, value.valueStart, value.end, list.depth + 2);
        const sequence = inner.sequence('AuthorityKeyIdentifier');
        inner.finish('AuthorityKeyIdentifier');
        const keyId = sequence.optional(0x80);
        if (keyId) authorityKeyId = readOctetString(der, keyId, 0x80);
      }
    }
  }
  tbs.finish('TBSCertificate');
  return {
    subjectDer: der.subarray(subject.start, subject.end),
    issuerDer: der.subarray(issuer.start, issuer.end),
    subjectKeyId,
    authorityKeyId,
    signature: signature.bytes,
    spki: der.subarray(spki.start, spki.end),
  };
}

/**
 * Read the structure and index fields of one DER certificate (no trailing bytes). The fields are
 * views into `der` (no copy).
 * @throws CertificateParseError (1003) when the structure is malformed
 */
export function readCertificateIndex(der: Uint8Array): CertificateIndex {
  try {
    return readIndex(der);
  } catch (error) {
    if (error instanceof DerDecodeError) throw new CertificateParseError(undefined, { cause: error });
    throw error;
  }
}
