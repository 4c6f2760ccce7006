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
import { scanCertificateIndex } from './certificate-index-scan.js';
import { openCertificate } from './certificate-opening.js';
import { ID_CE_AUTHORITY_KEY_IDENTIFIER, ID_CE_SUBJECT_KEY_IDENTIFIER, readAuthorityKeyIdentifierKeyId, walkIdCeExtensions } from './certificate-extension-walk.js';
import { readOctetString } from './der-reader.js';
import { readingCertificate } from './errors.js';
import type { CertificateIndexFields } from './lazy-certificate.js';

/** What {@link readCertificateIndex} returns: views into the DER it was given. */
export interface CertificateIndex extends CertificateIndexFields {
  /** The whole SubjectPublicKeyInfo element (what keystores hash). */
  readonly spki: Uint8Array;
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
  walkIdCeExtensions(der, tbs, (arc, value) => {
    if (arc === ID_CE_SUBJECT_KEY_IDENTIFIER) {
      subjectKeyId = readOctetString(der, value.expect(0x04, 'SubjectKeyIdentifier'));
      value.finish('SubjectKeyIdentifier');
    } else if (arc === ID_CE_AUTHORITY_KEY_IDENTIFIER) {
      authorityKeyId = readAuthorityKeyIdentifierKeyId(der, value);
    }
  });
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
 * {@link readCertificateIndex} by the walk alone (no flat scan first): what the scan is held to in
 * its tests. Not exported from the package.
 */
export function walkCertificateIndex(der: Uint8Array): CertificateIndex {
  return readingCertificate(() => readIndex(der));
}

/**
 * Read the structure and index fields of one DER certificate (no trailing bytes). The fields are
 * views into `der` (no copy).
 * @throws CertificateParseError (1003) when the structure is malformed
 */
export function readCertificateIndex(der: Uint8Array): CertificateIndex {
  // The flat scan takes the certificates it can vouch for; the walk decides the rest (and words the error).
  return scanCertificateIndex(der) ?? walkCertificateIndex(der);
}
