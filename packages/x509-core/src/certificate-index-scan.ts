/**
 * A flat scan for {@link readCertificateIndex}'s fields: the same elements in the same order, read
 * with integer offsets instead of a `DerReader` and an element object per TLV. Start-up indexes the
 * ≈2,000 trust certificates once, in code V8 has not optimised yet, where the walk's ≈130 calls
 * and ≈60 objects per certificate cost ≈15 µs each
 * (docs/performance.md#start-up-pass-6c-reading-the-trust-files-2026-11-2627-issue-18-item-7).
 *
 * It decides nothing on its own: it returns the index only for a certificate that it has seen pass
 * every check the walk makes (`certificate-opening.ts`, `certificate-index.ts`,
 * `certificate-extension-walk.ts`), and `null` for anything else — malformed, or merely unusual (a
 * version INTEGER of more than one octet, over {@link MAX_EXTENSIONS} extensions) — so that the
 * walk reads it and accepts or refuses it with its own error. `certificate-index-scan.test.ts`
 * holds the two to that on mutated certificates.
 */
import { ID_CE_AUTHORITY_KEY_IDENTIFIER, ID_CE_SUBJECT_KEY_IDENTIFIER, idCeArc, sameBytes } from './certificate-extension-walk.js';
import type { CertificateIndexFields } from './lazy-certificate.js';

/** What the scan reads: `readCertificateIndex`'s result (`CertificateIndex`, not imported: that module imports this one). */
type ScannedIndex = CertificateIndexFields & { readonly spki: Uint8Array };

/** The scan declines certificates with more extensions (the walk reads them). */
const MAX_EXTENSIONS = 64;

/** OID content offsets and lengths of the extensions seen so far (duplicate check), reused per scan. */
const seenOids = new Int32Array(MAX_EXTENSIONS * 2);

// What the last successful `header` call read: the element's content offsets.
let valueStart = 0;
let valueEnd = 0;

/**
 * Whether a DER element with identifier `tag` starts at `at` and fits before `limit`, with
 * `readElement`'s rules (short or minimal long-form length of 1–4 octets); sets `valueStart` and
 * `valueEnd`. Only low-tag-number identifiers are ever asked for.
 */
function header(der: Uint8Array, at: number, limit: number, tag: number): boolean {
  if (at + 2 > limit || der[at] !== tag) return false;
  let length = der[at + 1]!;
  let position = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || position + count > limit || der[position] === 0) return false;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[position++]!;
    if (length < 0x80) return false;
  }
  if (length > limit - position) return false;
  valueStart = position;
  valueEnd = position + length;
  return true;
}

/** Offset just past the element at `at` with identifier `tag`, or -1 (see {@link header}). */
function skip(der: Uint8Array, at: number, limit: number, tag: number): number {
  return header(der, at, limit, tag) ? valueEnd : -1;
}

/**
 * The index fields of the DER certificate `der` (views into it, as `readCertificateIndex` returns
 * them), or `null` when the walk must decide (see the module comment).
 */
export function scanCertificateIndex(der: Uint8Array): ScannedIndex | null {
  const length = der.length;
  // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signatureValue }, nothing after.
  if (!header(der, 0, length, 0x30) || valueEnd !== length) return null;
  const certEnd = valueEnd;
  if (!header(der, valueStart, certEnd, 0x30)) return null;
  const tbsStart = valueStart;
  const tbsEnd = valueEnd;
  const outerStart = tbsEnd;
  const outerEnd = skip(der, outerStart, certEnd, 0x30);
  if (outerEnd < 0 || !header(der, outerEnd, certEnd, 0x03) || valueEnd !== certEnd) return null;
  // signatureValue: BIT STRING padding as readBitString checks it.
  const bitsStart = valueStart;
  const bitsLength = valueEnd - valueStart;
  if (bitsLength < 1) return null;
  const unusedBits = der[bitsStart]!;
  if (unusedBits > 7 || (bitsLength === 1 && unusedBits !== 0)) return null;
  if (unusedBits !== 0 && (der[certEnd - 1]! & ((1 << unusedBits) - 1)) !== 0) return null;

  let position = tbsStart;
  // version [0] EXPLICIT INTEGER: v1–v3, one content octet (other encodings: the walk decides).
  if (position < tbsEnd && der[position] === 0xa0) {
    if (!header(der, position, tbsEnd, 0xa0)) return null;
    const versionEnd = valueEnd;
    if (!header(der, valueStart, versionEnd, 0x02) || valueEnd !== versionEnd || valueEnd - valueStart !== 1 || der[valueStart]! > 2) return null;
    position = versionEnd;
  }
  position = skip(der, position, tbsEnd, 0x02); // serialNumber
  if (position < 0) return null;
  // signature: byte-identical to signatureAlgorithm.
  const innerStart = position;
  position = skip(der, position, tbsEnd, 0x30);
  if (position < 0 || position - innerStart !== outerEnd - outerStart || !sameBytes(der, innerStart, outerStart, outerEnd - outerStart)) return null;
  const issuerStart = position;
  const issuerEnd = skip(der, issuerStart, tbsEnd, 0x30);
  if (issuerEnd < 0) return null;
  position = skip(der, issuerEnd, tbsEnd, 0x30); // validity
  if (position < 0) return null;
  const subjectStart = position;
  const subjectEnd = skip(der, subjectStart, tbsEnd, 0x30);
  if (subjectEnd < 0) return null;
  const spkiStart = subjectEnd;
  const spkiEnd = skip(der, spkiStart, tbsEnd, 0x30);
  if (spkiEnd < 0) return null;
  position = spkiEnd;
  // issuerUniqueID [1], subjectUniqueID [2]: optional, in that order.
  if (position < tbsEnd && der[position] === 0x81) position = skip(der, position, tbsEnd, 0x81);
  if (position >= 0 && position < tbsEnd && der[position] === 0x82) position = skip(der, position, tbsEnd, 0x82);
  if (position < 0) return null;

  let subjectKeyId: Uint8Array | null = null;
  let authorityKeyId: Uint8Array | null = null;
  if (position < tbsEnd && der[position] === 0xa3) {
    // [3] EXPLICIT Extensions: exactly one SEQUENCE OF Extension.
    if (!header(der, position, tbsEnd, 0xa3)) return null;
    const wrapperEnd = valueEnd;
    if (!header(der, valueStart, wrapperEnd, 0x30) || valueEnd !== wrapperEnd) return null;
    const listEnd = valueEnd;
    let entry = valueStart;
    let count = 0;
    while (entry < listEnd) {
      // Extension ::= SEQUENCE { extnID OID, critical BOOLEAN OPTIONAL, extnValue OCTET STRING }
      if (!header(der, entry, listEnd, 0x30)) return null;
      const extensionEnd = valueEnd;
      if (!header(der, valueStart, extensionEnd, 0x06)) return null;
      const oidStart = valueStart;
      const oidLength = valueEnd - valueStart;
      let field = valueEnd;
      if (count === MAX_EXTENSIONS) return null;
      for (let other = 0; other < count; other++) {
        // A duplicate: the walk refuses it.
        if (seenOids[other * 2 + 1] === oidLength && sameBytes(der, seenOids[other * 2]!, oidStart, oidLength)) return null;
      }
      seenOids[count * 2] = oidStart;
      seenOids[count * 2 + 1] = oidLength;
      count++;
      if (field < extensionEnd && der[field] === 0x01) {
        field = skip(der, field, extensionEnd, 0x01);
        if (field < 0) return null;
      }
      if (!header(der, field, extensionEnd, 0x04) || valueEnd !== extensionEnd) return null;
      const contentStart = valueStart;
      const contentEnd = valueEnd;
      // id-ce (2.5.29.x) by its last arc, as walkIdCeExtensions hands them out.
      const arc = idCeArc(der, oidStart, oidStart + oidLength);
      if (arc === ID_CE_SUBJECT_KEY_IDENTIFIER) {
        // SubjectKeyIdentifier ::= OCTET STRING, nothing after it.
        if (!header(der, contentStart, contentEnd, 0x04) || valueEnd !== contentEnd) return null;
        subjectKeyId = der.subarray(valueStart, valueEnd);
      } else if (arc === ID_CE_AUTHORITY_KEY_IDENTIFIER) {
        // AuthorityKeyIdentifier ::= SEQUENCE { keyIdentifier [0] IMPLICIT OCTET STRING OPTIONAL, … }
        if (!header(der, contentStart, contentEnd, 0x30) || valueEnd !== contentEnd) return null;
        const sequenceStart = valueStart;
        const sequenceEnd = valueEnd;
        if (sequenceStart < sequenceEnd && der[sequenceStart] === 0x80) {
          if (!header(der, sequenceStart, sequenceEnd, 0x80)) return null;
          authorityKeyId = der.subarray(valueStart, valueEnd);
        } else {
          authorityKeyId = null;
        }
      }
      entry = extensionEnd;
    }
    position = wrapperEnd;
  }
  if (position !== tbsEnd) return null;
  return {
    subjectDer: der.subarray(subjectStart, subjectEnd),
    issuerDer: der.subarray(issuerStart, issuerEnd),
    subjectKeyId,
    authorityKeyId,
    signature: der.subarray(bitsStart + 1, certEnd),
    spki: der.subarray(spkiStart, spkiEnd),
  };
}
