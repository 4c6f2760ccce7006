import { describe, expect, it } from 'vitest';
import {
  derBitString,
  derInteger,
  derNamedBitString,
  derOid,
  derSetOf,
  derTime,
  derDirectoryString,
  encodeOidContent,
  derPrintableString,
  derSequence,
  derTlv,
} from './der-writer.js';
import { readElement } from './der-reader.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('derInteger', () => {
  it('prefixes 0x00 when the top bit is set and strips leading zeros', () => {
    expect(hex(derInteger(128))).toBe('02020080');
    expect(hex(derInteger(Uint8Array.of(0, 0, 1)))).toBe('020101');
    expect(hex(derInteger(0))).toBe('020100');
    expect(hex(derInteger(65537n))).toBe('0203010001');
  });
});

describe('derOid', () => {
  it('encodes multi-byte arcs', () => {
    expect(hex(derOid('1.2.840.113549.1.1.11'))).toBe('06092a864886f70d01010b');
    expect(hex(derOid('2.5.29.17'))).toBe('0603551d11');
  });

  it('refuses OIDs that cannot be encoded', () => {
    expect(() => encodeOidContent('7.1')).toThrow(RangeError);
    expect(() => encodeOidContent('abc')).toThrow(RangeError);
  });
});

describe('derNamedBitString', () => {
  it('drops trailing zero bits (digitalSignature + keyEncipherment = 05a0)', () => {
    expect(hex(derNamedBitString(0b101))).toBe('030205a0');
    // keyCertSign (5) + cRLSign (6) → 0x06, 1 unused bit
    expect(hex(derNamedBitString((1 << 5) | (1 << 6)))).toBe('03020106');
    // decipherOnly (8) needs a second octet
    expect(hex(derNamedBitString(1 << 8))).toBe('0303070080');
  });
});

describe('derSetOf', () => {
  it('sorts members by encoding, as Go does for C=US,C=GB', () => {
    const us = derPrintableString('US');
    const gb = derPrintableString('GB');
    expect(hex(derSetOf([us, gb]))).toBe(`3108${hex(gb)}${hex(us)}`);
  });
});

describe('derTime', () => {
  it('uses UTCTime before 2050 and GeneralizedTime after', () => {
    expect(Buffer.from(derTime(new Date('2026-11-22T03:22:00Z')).subarray(2)).toString()).toBe('261122032200Z');
    expect(Buffer.from(derTime(new Date('2050-01-01T00:00:00Z')).subarray(2)).toString()).toBe('20500101000000Z');
  });
});

describe('derDirectoryString', () => {
  it('chooses PrintableString or UTF8String like Go', () => {
    expect(derDirectoryString('Example Inc')[0]).toBe(0x13);
    expect(derDirectoryString('a*b')[0]).toBe(0x0c);
    expect(derDirectoryString('Zürich')[0]).toBe(0x0c);
  });
});

describe('derBitString', () => {
  it('prefixes the unused-bits octet', () => {
    expect(hex(derBitString(Uint8Array.of(1, 2)))).toBe('0303000102');
  });
});

describe('lengths', () => {
  /** X.690 8.1.3 by the book, as a reference: short form below 128, else the minimal long form. */
  function referenceHeader(tag: number, length: number): number[] {
    if (length < 0x80) return [tag, length];
    const octets: number[] = [];
    for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest & 0xff);
    return [tag, 0x80 | octets.length, ...octets];
  }

  it.each([0, 1, 127, 128, 255, 256, 65_535, 65_536, 1_000_000])('writes the minimal length form for %i content octets, and the reader reads it back', (length) => {
    const content = new Uint8Array(length).fill(0xab);
    for (const encoded of [derTlv(0x04, content), derSequence(content), derSequence(content.subarray(0, length >> 1), content.subarray(length >> 1))]) {
      const header = referenceHeader(encoded[0]!, length);
      expect([...encoded.subarray(0, header.length)]).toEqual(header);
      expect(encoded.length).toBe(header.length + length);
      expect(readElement(encoded, 0)).toMatchObject({ valueStart: header.length, end: encoded.length });
    }
    const bits = derBitString(content);
    expect([...bits.subarray(0, referenceHeader(0x03, length + 1).length + 1)]).toEqual([...referenceHeader(0x03, length + 1), 0]);
  });
});
