/**
 * The certificates of a PKCS#7 / CMS SignedData (RFC 2315 9.1, RFC 5652 5.1) — the "degenerate"
 * certs-only form `openssl crl2pkcs7` and `.p7b`/`.p7c` files (AIA caIssuers) use. CFSSL accepts
 * PKCS#7 wherever it accepts a certificate (behaviour doc 2.2); certsmith also accepts SignedData
 * with or without CRLs. Signatures of the SignedData itself are not checked: only the certificates
 * are wanted, and they are verified on their own by chain building.
 */
import { DerReader, elementBytes, readOid } from './der-reader.js';
import { DerDecodeError, readingCertificate } from './errors.js';
import { Oid } from './oids.js';

/**
 * DER of every certificate in a ContentInfo-wrapped SignedData, as views into `der`, in order.
 * Other CertificateChoices (attribute certificates, `other`) are skipped. Throws DerDecodeError for
 * malformed input, a content type other than SignedData, or a SignedData without a certificates field.
 */
export function readPkcs7Certificates(der: Uint8Array): Uint8Array[] {
  const top = new DerReader(der);
  const contentInfo = top.sequence('ContentInfo');
  top.finish('ContentInfo');
  const contentType = readOid(der, contentInfo.expect(0x06, 'contentType'));
  if (contentType !== Oid.pkcs7SignedData) {
    throw new DerDecodeError('only PKCS #7 SignedData content is supported for certificates', 0);
  }
  const explicit = contentInfo.enter(contentInfo.expect(0xa0, 'content'));
  const signedData = explicit.sequence('SignedData');
  signedData.expect(0x02, 'version');
  signedData.expect(0x31, 'digestAlgorithms');
  signedData.expect(0x30, 'encapContentInfo');
  const certificatesElement = signedData.optional(0xa0);
  if (certificatesElement === null) throw new DerDecodeError('PKCS #7 structure contains no certificates', signedData.pos);
  signedData.optional(0xa1); // crls: accepted and ignored
  signedData.expect(0x31, 'signerInfos');
  signedData.finish('SignedData');

  const certificates: Uint8Array[] = [];
  const choices = signedData.enter(certificatesElement);
  while (choices.hasMore()) {
    const choice = choices.read();
    if (choice.tag === 0x30) certificates.push(elementBytes(der, choice));
  }
  return certificates;
}

/**
 * Public form of {@link readPkcs7Certificates}: the certificates' DER (copies), or
 * CertificateParseError (1003) for anything that is not a PKCS#7 SignedData with certificates.
 */
export function parsePkcs7Certificates(der: Uint8Array): Uint8Array[] {
  return readingCertificate(() => readPkcs7Certificates(der).map((cert) => new Uint8Array(cert)));
}
