/**
 * The fields a CFSSL certificate store keeps of a certificate (lifecycle spec §2.1: serial, AKI,
 * validity, subject common name, DNS names), read from its DER without decoding the rest: the
 * issuer name, the public key, the signature algorithm and the contents of other extensions stay
 * undecoded. For a certificate this process has just signed and records (the issuer built it; a full
 * parse would read it again for five values): about a third of the cost of `parseCertificate`
 * (docs/performance.md, "Recording at issuance: the hook's own work").
 *
 * Every value is read by the parser's own functions on the same elements, so each equals what
 * `parseCertificate` gives for these bytes. The structure is checked as `readCertificateIndex`
 * checks it (one Certificate, TBSCertificate fields in RFC 5280 order, version 1–3, identical inner
 * and outer signature algorithms, well-formed Extension entries without duplicates, the AKI and SAN
 * extensions in their RFC 5280 form), but the contents it skips are not: a certificate this accepts
 * can still fail `parseCertificate` (e.g. a malformed key usage extension).
 */
import type { SubjectAltNames } from './certificate-model.js';
import { openCertificate } from './certificate-opening.js';
import { ID_CE_AUTHORITY_KEY_IDENTIFIER, ID_CE_SUBJECT_ALT_NAME, readAuthorityKeyIdentifierKeyId, walkIdCeExtensions } from './certificate-extension-walk.js';
import { DerReader, isStringTag, readIntegerBytes, readString, readTime } from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { readingCertificate } from './errors.js';
import { emptySubjectAltNames, readGeneralNames } from './general-name.js';
import { attributeHexValue } from './distinguished-name.js';

/** What {@link readCertificateStoreFields} returns; byte fields are views into the DER it was given. */
export interface CertificateStoreFields {
  /** Content octets of the serial number INTEGER (`parseCertificate`'s `serialNumberHex`, as bytes). */
  readonly serialNumber: Uint8Array;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** The last commonName attribute of the subject, as `commonName(subject)` reads it; `''` when none. */
  readonly commonName: string;
  /** keyIdentifier of the authorityKeyIdentifier extension; `null` when absent. */
  readonly authorityKeyId: Uint8Array | null;
  /** The subjectAltName extension's names (empty lists when absent). */
  readonly subjectAltNames: SubjectAltNames;
}

/** `2.5.4.3` (id-at-commonName) as OID content bytes; `decodeOid` refuses non-minimal arcs, so bytes compare as the OID text does. */
function isCommonNameOid(bytes: Uint8Array, element: DerElement): boolean {
  const start = element.valueStart;
  return element.end - start === 3 && bytes[start] === 0x55 && bytes[start + 1] === 0x04 && bytes[start + 2] === 0x03;
}

/** `commonName(readDistinguishedName(...))`: the value of the last CN attribute, string or `#hex`. */
function readCommonName(bytes: Uint8Array, name: DerReader): string {
  let value = '';
  while (name.hasMore()) {
    const set = name.enter(name.expect(0x31, 'RelativeDistinguishedName'));
    while (set.hasMore()) {
      const atv = set.sequence('AttributeTypeAndValue');
      const oid = atv.expect(0x06, 'attribute type');
      const valueElement = atv.read();
      atv.finish('AttributeTypeAndValue');
      if (!isCommonNameOid(bytes, oid)) continue;
      value = isStringTag(valueElement.tag) ? readString(bytes, valueElement) : attributeHexValue(bytes, valueElement);
    }
  }
  return value;
}

function readFields(der: Uint8Array): CertificateStoreFields {
  const { tbs, serialElement } = openCertificate(der);
  const serialNumber = readIntegerBytes(der, serialElement);
  tbs.expect(0x30, 'issuer');
  const validity = tbs.sequence('validity');
  const notBefore = readTime(der, validity.read());
  const notAfter = readTime(der, validity.read());
  validity.finish('validity');
  const commonName = readCommonName(der, tbs.enter(tbs.expect(0x30, 'subject')));
  tbs.expect(0x30, 'subjectPublicKeyInfo');
  tbs.optional(0x81); // issuerUniqueID
  tbs.optional(0x82); // subjectUniqueID

  let authorityKeyId: Uint8Array | null = null;
  const subjectAltNames = emptySubjectAltNames();
  // Read exactly as `readExtensions` reads them (RFC 5280 4.2.1.1, 4.2.1.6).
  walkIdCeExtensions(der, tbs, (arc, value) => {
    if (arc === ID_CE_AUTHORITY_KEY_IDENTIFIER) {
      authorityKeyId = readAuthorityKeyIdentifierKeyId(der, value);
    } else if (arc === ID_CE_SUBJECT_ALT_NAME) {
      const sequence = value.sequence('SubjectAltName');
      value.finish('SubjectAltName');
      readGeneralNames(der, sequence, subjectAltNames);
    }
  });
  tbs.finish('TBSCertificate');
  return { serialNumber, notBefore, notAfter, commonName, authorityKeyId, subjectAltNames };
}

/**
 * Read the store fields of one DER certificate (no trailing bytes); see the module comment.
 * @throws CertificateParseError (1003) when the structure or a field it reads is malformed
 */
export function readCertificateStoreFields(der: Uint8Array): CertificateStoreFields {
  return readingCertificate(() => readFields(der));
}
