/**
 * The TBSCertificate's extensions as the partial readers (`certificate-index.ts` for trust pools,
 * `certificate-store-fields.ts` for store rows) walk them: the structure checked as
 * `parseCertificate` checks it — well-formed Extension entries, no extension twice — and each
 * `id-ce` extension (`2.5.29.x`) handed to the caller by its last arc, its value undecoded. One walk,
 * so that what both readers accept and refuse stays what the full parse accepts and refuses.
 */
import { DerReader, readOctetString } from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { DerDecodeError } from './errors.js';

/** The last arc of the `id-ce` extensions the partial readers read (RFC 5280 4.2.1.1, 4.2.1.2, 4.2.1.6). */
export const ID_CE_SUBJECT_KEY_IDENTIFIER = 14;
export const ID_CE_SUBJECT_ALT_NAME = 17;
export const ID_CE_AUTHORITY_KEY_IDENTIFIER = 35;

/** The last arc of an `id-ce` OID (`2.5.29.x`) given its content bytes, or -1 for any other OID. */
export function idCeArc(bytes: Uint8Array, start: number, end: number): number {
  return end - start === 3 && bytes[start] === 0x55 && bytes[start + 1] === 0x1d ? bytes[start + 2]! : -1;
}

/** Whether `bytes` holds the same `length` octets at offsets `a` and `b`. */
export function sameBytes(bytes: Uint8Array, a: number, b: number, length: number): boolean {
  for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
  return true;
}

/**
 * Read the optional `[3] Extensions` of `tbs` (positioned after the unique identifiers) and call
 * `visit` with a reader of each `id-ce` extension's value (the OCTET STRING's contents).
 * @throws DerDecodeError when an entry is malformed or an extension appears twice
 */
export function walkIdCeExtensions(der: Uint8Array, tbs: DerReader, visit: (arc: number, value: DerReader) => void): void {
  const extensionsElement = tbs.optional(0xa3);
  if (!extensionsElement) return;
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
    const value: DerElement = ext.expect(0x04, 'extnValue');
    ext.finish('Extension');
    const arc = idCeArc(der, oid.valueStart, oid.end);
    if (arc >= 0) visit(arc, new DerReader(der, value.valueStart, value.end, list.depth + 2));
  }
}

/** The keyIdentifier of an authorityKeyIdentifier extension's value, as `readExtensions` reads it; `null` when absent. */
export function readAuthorityKeyIdentifierKeyId(der: Uint8Array, value: DerReader): Uint8Array | null {
  const sequence = value.sequence('AuthorityKeyIdentifier');
  value.finish('AuthorityKeyIdentifier');
  const keyId = sequence.optional(0x80);
  return keyId ? readOctetString(der, keyId, 0x80) : null;
}
