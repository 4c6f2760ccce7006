/**
 * Name (RFC 5280 4.1.2.4) decoding: RDNs in DER order with their attribute values as text, plus the
 * byte-exact DER that issuer/subject matching compares (RFC 5280 7.1: binary comparison suffices
 * when both names come from the same CA).
 */
import type { DistinguishedName, NameAttribute } from './certificate-model.js';
import { DerReader, decodeOid, isStringTag, readString } from './der-reader.js';
import type { DerElement } from './der-reader.js';

const HEX = '0123456789abcdef';

/** RFC 4514 2.4 `#hex` form of a whole TLV, for attribute values that are not strings. */
export function attributeHexValue(bytes: Uint8Array, element: DerElement): string {
  let out = '#';
  for (let i = element.start; i < element.end; i++) out += HEX[bytes[i]! >> 4]! + HEX[bytes[i]! & 15]!;
  return out;
}

/**
 * Decode a Name SEQUENCE element. String values (UTF8, Printable, IA5, T61, BMP, Universal…) become
 * text; any other value type is kept as RFC 4514 `#<hex of the DER>` rather than failing the whole
 * certificate.
 */
export function readDistinguishedName(bytes: Uint8Array, element: DerElement, parent: DerReader): DistinguishedName {
  const reader = parent.enter(element);
  const rdns: NameAttribute[][] = [];
  while (reader.hasMore()) {
    const set = reader.enter(reader.expect(0x31, 'RelativeDistinguishedName'));
    const rdn: NameAttribute[] = [];
    while (set.hasMore()) {
      const atv = set.sequence('AttributeTypeAndValue');
      const oidElement = atv.expect(0x06, 'attribute type');
      const oid = decodeOid(bytes, oidElement.valueStart, oidElement.end);
      const valueElement = atv.read();
      atv.finish('AttributeTypeAndValue');
      const value = isStringTag(valueElement.tag) ? readString(bytes, valueElement) : attributeHexValue(bytes, valueElement);
      rdn.push({ oid, value });
    }
    rdns.push(rdn);
  }
  return { der: bytes.subarray(element.start, element.end), rdns };
}

/** Parse a standalone Name DER (e.g. from a CSR or a CRL) into a {@link DistinguishedName}. */
export function parseDistinguishedName(der: Uint8Array): DistinguishedName {
  const reader = new DerReader(der);
  const element = reader.expect(0x30, 'Name');
  reader.finish('Name');
  return readDistinguishedName(der, element, reader);
}
