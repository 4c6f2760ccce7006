/**
 * X.509 certificate decoding (RFC 5280 4.1) into the {@link Certificate} model, in a single pass
 * over the DER with no intermediate tree. Strictness mirrors Go's `x509.ParseCertificate` (what
 * CFSSL accepts): inner and outer signature algorithms must be identical, duplicate extensions and
 * malformed known extensions are errors, unknown critical extensions are reported, not refused.
 */
import type { Certificate, CertificateExtension } from './certificate-model.js';
import { readSignatureAlgorithm } from './algorithm-identifier.js';
import { openCertificate } from './certificate-opening.js';
import { DerReader, readIntegerBytes, readTime } from './der-reader.js';
import { readDistinguishedName } from './distinguished-name.js';
import { CertificateDecodeError, DerDecodeError, readingCertificate } from './errors.js';
import { emptyExtensionFacts, readExtensions } from './extensions.js';
import { decodePemBlock } from './pem.js';
import { readPkcs7Certificates } from './pkcs7.js';
import { readPublicKeyInfo } from './public-key-info.js';

const HEX = '0123456789abcdef';

/** Lower-case hex of a byte range. */
export function toHex(bytes: Uint8Array, start = 0, end: number = bytes.length): string {
  let out = '';
  for (let i = start; i < end; i++) out += HEX[bytes[i]! >> 4]! + HEX[bytes[i]! & 15]!;
  return out;
}

/** Give the certificate its own exactly-sized buffer so views stay small when structured-cloned. */
function ownedBytes(der: Uint8Array): Uint8Array {
  if (der.byteOffset === 0 && der.byteLength === der.buffer.byteLength) return der;
  return new Uint8Array(der);
}

function decodeCertificate(der: Uint8Array): Certificate {
  const { cert, tbsElement, tbs, outerAlgorithm, signature, version, serialElement } = openCertificate(der);
  const serial = readIntegerBytes(der, serialElement);
  const issuer = readDistinguishedName(der, tbs.expect(0x30, 'issuer'), tbs);
  const validity = tbs.sequence('validity');
  const notBefore = readTime(der, validity.read());
  const notAfter = readTime(der, validity.read());
  validity.finish('validity');
  const subject = readDistinguishedName(der, tbs.expect(0x30, 'subject'), tbs);
  const publicKey = readPublicKeyInfo(der, tbs.expect(0x30, 'subjectPublicKeyInfo'), tbs);
  tbs.optional(0x81); // issuerUniqueID
  tbs.optional(0x82); // subjectUniqueID

  const facts = emptyExtensionFacts();
  let extensions: CertificateExtension[] = [];
  const extensionsElement = tbs.optional(0xa3);
  if (extensionsElement) {
    const wrapper = tbs.enter(extensionsElement);
    const list = wrapper.sequence('Extensions');
    wrapper.finish('extensions');
    extensions = readExtensions(der, list, facts);
  }
  tbs.finish('TBSCertificate');

  return {
    der,
    tbs: der.subarray(tbsElement.start, tbsElement.end),
    version,
    serialNumberHex: toHex(serial),
    signatureAlgorithm: readSignatureAlgorithm(der, outerAlgorithm, cert),
    signature: signature.bytes,
    issuer,
    subject,
    notBefore,
    notAfter,
    publicKey,
    extensions,
    ...facts,
  };
}

/**
 * Parse one DER-encoded X.509 certificate (no trailing bytes). The returned fields are views into
 * an owned copy of `der` (copied only when `der` is a view into a larger buffer or a pooled Buffer),
 * so the result is plain, structured-clone-friendly data.
 *
 * @throws CertificateParseError (1003, CFSSL's `Failed to parse certificate`) for any malformed input;
 *   the DER reader's reason is the error's `cause`.
 */
export function parseCertificate(der: Uint8Array): Certificate {
  return readingCertificate(() => decodeCertificate(ownedBytes(der)));
}


// ---------------------------------------------------------------------------------------------
// Several certificates: PEM (any label), PKCS#7, DER, base64 DER — CFSSL's input rules.

/**
 * How one certificate's DER becomes a {@link Certificate}: parsed (and kept whole or lazily), or
 * taken from a set the caller already holds parsed. Throws DerDecodeError for bytes that are not
 * a certificate, as the parser does, so the PKCS#7 and DER fallbacks see the same errors.
 */
export type DecodeCertificate = (der: Uint8Array) => Certificate;

/** What a caller keeps of each certificate as it is parsed: the certificate, or a lazy copy. */
type Keep = (certificate: Certificate) => Certificate;

/** The parser's own decoding: an owned copy of the bytes, parsed. */
export const decodeOwnedCertificate: DecodeCertificate = (der) => decodeCertificate(ownedBytes(der));

/** Certificates of one DER blob that is a certificate or else a PKCS#7 SignedData; DerDecodeError otherwise. */
function decodeCertificateOrPkcs7(der: Uint8Array, decode: DecodeCertificate): Certificate[] {
  try {
    return [decode(der)];
  } catch (certificateError) {
    if (!(certificateError instanceof DerDecodeError)) throw certificateError;
    let inner: Uint8Array[];
    try {
      inner = readPkcs7Certificates(der);
    } catch (pkcs7Error) {
      if (pkcs7Error instanceof DerDecodeError) throw certificateError;
      throw pkcs7Error;
    }
    return inner.map(decode);
  }
}

/** Concatenated DER certificates (Go's `x509.ParseCertificates`); DerDecodeError on any problem. */
function decodeConcatenatedCertificates(der: Uint8Array, decode: DecodeCertificate): Certificate[] {
  const certificates: Certificate[] = [];
  const reader = new DerReader(der);
  while (reader.hasMore()) {
    const element = reader.expect(0x30, 'Certificate');
    // A copy even when the element spans the whole input: the caller's buffer is not kept.
    certificates.push(decode(new Uint8Array(der.subarray(element.start, element.end))));
  }
  return certificates;
}

/** DER input: PKCS#7 first, then concatenated certificates (CFSSL's `ParseCertificatesDER` order); `null` if neither. */
function tryDerCertificates(der: Uint8Array, decode: DecodeCertificate): Certificate[] | null {
  if (der.length === 0 || der[0] !== 0x30) return null;
  try {
    return readPkcs7Certificates(der).map(decode);
  } catch (error) {
    if (!(error instanceof DerDecodeError)) throw error;
  }
  try {
    const certificates = decodeConcatenatedCertificates(der, decode);
    return certificates.length > 0 ? certificates : null;
  } catch (error) {
    if (!(error instanceof DerDecodeError)) throw error;
    return null;
  }
}

const BASE64_TEXT = /^[A-Za-z0-9+/\s]+={0,2}\s*$/;

/** Bytes of a string for the DER path: code units as Latin-1 when they all fit, else UTF-8. */
function stringBytes(text: string): Uint8Array {
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0xff) return new Uint8Array(Buffer.from(text, 'utf8'));
  }
  return new Uint8Array(Buffer.from(text, 'latin1'));
}

/** PEM path of {@link parseCertificates}; throws the coded error CFSSL's `ParseCertificatesPEM` returns. */
function parsePemCertificates(text: string, decode: DecodeCertificate): Certificate[] {
  const trimmed = text.trim();
  const certificates: Certificate[] = [];
  let position = 0;
  while (position < trimmed.length) {
    const match = decodePemBlock(trimmed, position);
    if (match === null) break;
    position = match.end;
    // A block that decodes but is neither X.509 nor PKCS#7 (e.g. a private key): 1003.
    for (const certificate of readingCertificate(() => decodeCertificateOrPkcs7(match.block.bytes, decode))) certificates.push(certificate);
  }
  // Anything left after the last block (or a text without any block), or nothing at all: CFSSL's 1002.
  if (position < trimmed.length || certificates.length === 0) throw new CertificateDecodeError();
  return certificates;
}

/**
 * Parse every certificate of a bundle/request input with CFSSL's rules (behaviour doc 2.2):
 * surrounding whitespace is trimmed, text before (and between) PEM blocks is skipped, the PEM label
 * is not checked, each block is an X.509 certificate or else a PKCS#7 SignedData (all of its
 * certificates, with or without CRLs). Non-PEM text after the last block, no PEM block at all, or
 * an empty input → 1002; a block that decodes but is not a certificate (a private key…) → 1003.
 * When the PEM reading fails, the input is tried as DER (PKCS#7, then concatenated certificates)
 * and as base64 of DER before the PEM error is thrown, as `BundleFromPEMorDER` does (PKCS#12 is not
 * supported). Order is preserved (leaf first, as given).
 *
 * @throws CertificateDecodeError (1002) or CertificateParseError (1003)
 */
export function parseCertificates(input: string | Uint8Array): Certificate[] {
  return parseCertificatesDecoding(input, decodeOwnedCertificate);
}

/**
 * {@link parseCertificates} with a say in what is kept of each certificate as soon as it is parsed
 * (trust pools keep a lazy certificate, an index of the DER, instead of the full parse).
 */
export function parseCertificatesKeeping(input: string | Uint8Array, keep: Keep): Certificate[] {
  return parseCertificatesDecoding(input, (der) => keep(decodeOwnedCertificate(der)));
}

/**
 * {@link parseCertificates} with a say in how each certificate's DER becomes a certificate: the
 * same input rules, errors and order, with `decode` called once per certificate found (and, as
 * the parser is, on a PEM block before it is tried as PKCS#7). A bundle request passes a decoder
 * that takes certificates its trust pools already hold from the pool instead of parsing them again.
 */
export function parseCertificatesDecoding(input: string | Uint8Array, decode: DecodeCertificate): Certificate[] {
  const text = typeof input === 'string' ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength).toString('latin1');
  let pemError: unknown;
  try {
    return parsePemCertificates(text, decode);
  } catch (error) {
    pemError = error;
  }
  const raw = typeof input === 'string' ? stringBytes(input) : input;
  const fromDer = tryDerCertificates(raw, decode);
  if (fromDer !== null) return fromDer;
  if (BASE64_TEXT.test(text)) {
    const decoded = new Uint8Array(Buffer.from(text.replace(/\s+/g, ''), 'base64'));
    const fromBase64 = tryDerCertificates(decoded, decode);
    if (fromBase64 !== null) return fromBase64;
  }
  throw pemError;
}
