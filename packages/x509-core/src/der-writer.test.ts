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
import fc from 'fast-check';
import {
  derConstructed,
  derExplicit,
  derIa5String,
  derImplicit,
  derNull,
  derUtf8String,
  encodeIa5String,
  isPrintableString,
  MAX_OID_ARCS,
} from './der-writer.js';
import { DerReader, readElement, readIntegerBytes, readOid, readString, readTime } from './der-reader.js';
import { DerEncodeError, ErrorCode } from './errors.js';
import { derExtension, emptyExtensionFacts, readExtensions } from './extensions.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('derInteger', () => {
  it('prefixes 0x00 when the top bit is set and strips leading zeros', () => {
    expect(hex(derInteger(128))).toBe('02020080');
    expect(hex(derInteger(Uint8Array.of(0, 0, 1)))).toBe('020101');
    expect(hex(derInteger(0))).toBe('020100');
    expect(hex(derInteger(65537n))).toBe('0203010001');
    expect(hex(derInteger(new Uint8Array()))).toBe('020100');
  });

  it.each([-1, -1n, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53])('refuses %s with a coded DerEncodeError', (value) => {
    expect(() => derInteger(value)).toThrow(DerEncodeError);
  });

  it('refuses a value that is not a number', () => {
    expect(() => derInteger('12' as unknown as number)).toThrow(DerEncodeError);
  });

  it('round-trips generated non-negative integers through the reader', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1n << 1100n }), (value) => {
        const encoded = derInteger(value);
        const content = readIntegerBytes(encoded, readElement(encoded, 0));
        expect(content[0]! & 0x80).toBe(0);
        expect(BigInt(`0x${hex(content) || '0'}`)).toBe(value);
        // Minimal: no 0x00 before a byte whose top bit is clear.
        if (content.length > 1) expect(content[0] === 0 && (content[1]! & 0x80) === 0).toBe(false);
      }),
      { seed: 19, numRuns: 2000 },
    );
  });
});

describe('derOid', () => {
  it('encodes multi-byte arcs', () => {
    expect(hex(derOid('1.2.840.113549.1.1.11'))).toBe('06092a864886f70d01010b');
    expect(hex(derOid('2.5.29.17'))).toBe('0603551d11');
  });

  it.each([
    ['7.1', 'the first arc must be 0, 1 or 2'],
    ['3.0', 'the first arc must be 0, 1 or 2'],
    ['1.40', 'the second arc must be 0-39'],
    ['0.45.3', 'the second arc must be 0-39'],
    ['1', 'at least two arcs'],
    ['', 'at least two arcs'],
    ['abc', 'at least two arcs'],
    ['1.2.-1', 'is not a non-negative decimal number'],
    ['1.2.x', 'is not a non-negative decimal number'],
    ['1..2', 'is not a non-negative decimal number'],
    ['1.2.', 'is not a non-negative decimal number'],
    ['1.2.3 ', 'is not a non-negative decimal number'],
    ['1.2.１', 'is not a non-negative decimal number'],
    [`2.25.${(1n << 128n).toString()}`, 'larger than 2^128-1'],
    [`1.2.${'9'.repeat(10_000)}`, 'larger than 2^128-1'],
    [Array.from({ length: MAX_OID_ARCS + 1 }, () => '1').join('.'), `more than ${MAX_OID_ARCS} arcs`],
  ])('refuses %j with a coded DerEncodeError (%s)', (dotted, reason) => {
    expect(() => encodeOidContent(dotted)).toThrow(DerEncodeError);
    expect(() => derOid(dotted)).toThrow(expect.objectContaining({ code: ErrorCode.CertificateUnknown, message: expect.stringContaining(reason) }) as Error);
  });

  it('encodes the widest arcs it accepts: 2^128-1 under 2.25, second arcs above 39 under 2, 128 arcs', () => {
    const uuid = `2.25.${((1n << 128n) - 1n).toString()}`;
    const encoded = derOid(uuid);
    expect(readOid(encoded, readElement(encoded, 0))).toBe(uuid);
    expect(readOid(derOid('2.999.3'), readElement(derOid('2.999.3'), 0))).toBe('2.999.3');
    const long = Array.from({ length: MAX_OID_ARCS }, (_, i) => String(i % 40)).join('.');
    expect(readOid(derOid(long), readElement(derOid(long), 0))).toBe(long);
  });

  it('round-trips generated OIDs through the reader', () => {
    const arc = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
    const oid = fc
      .tuple(fc.constantFrom(0n, 1n, 2n), fc.bigInt({ min: 0n, max: 39n }), fc.bigInt({ min: 0n, max: 1n << 70n }), fc.array(arc, { maxLength: 20 }))
      .map(([first, second, wide, rest]) => [first, first === 2n ? wide : second, ...rest].join('.'));
    fc.assert(
      fc.property(oid, (dotted) => {
        const encoded = derOid(dotted);
        expect(readOid(encoded, readElement(encoded, 0))).toBe(dotted);
      }),
      { seed: 19, numRuns: 2000 },
    );
  });
});

describe('derNamedBitString', () => {
  it.each([-1, 1.5, 2 ** 31, Number.NaN])('refuses %s', (bits) => {
    expect(() => derNamedBitString(bits)).toThrow(DerEncodeError);
  });

  it('round-trips every 9-bit KeyUsage through the certificate extension reader', () => {
    for (let bits = 0; bits < 512; bits++) {
      const encoded = derExtension('2.5.29.15', true, derNamedBitString(bits));
      const facts = emptyExtensionFacts();
      readExtensions(encoded, new DerReader(encoded), facts);
      expect(facts.keyUsage).toBe(bits);
    }
  });

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

  it('uses GeneralizedTime before 1950 and at the edges of its four-digit years', () => {
    expect(derTime(new Date('1949-12-31T23:59:59Z'))[0]).toBe(0x18);
    expect(derTime(new Date('1950-01-01T00:00:00Z'))[0]).toBe(0x17);
    expect(derTime(new Date('2049-12-31T23:59:59Z'))[0]).toBe(0x17);
    expect(Buffer.from(derTime(new Date('9999-12-31T23:59:59Z')).subarray(2)).toString()).toBe('99991231235959Z');
    const yearZero = new Date(0);
    yearZero.setUTCFullYear(0, 0, 1);
    expect(Buffer.from(derTime(yearZero).subarray(2)).toString()).toBe('00000101000000Z');
  });

  it.each([
    ['year 10000', new Date('+010000-01-01T00:00:00Z'), 'cannot represent time as GeneralizedTime'],
    ['year -1', new Date('-000001-01-01T00:00:00Z'), 'cannot represent time as GeneralizedTime'],
    ['an invalid Date', new Date('not a date'), 'not a valid date'],
  ])('refuses %s', (_name, date, reason) => {
    expect(() => derTime(date)).toThrow(expect.objectContaining({ code: ErrorCode.CertificateUnknown, message: expect.stringContaining(reason) }) as Error);
  });

  it('round-trips generated times (whole seconds, years 0000-9999) through the reader', () => {
    const date = fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });
    fc.assert(
      fc.property(date, (value) => {
        const encoded = derTime(value);
        const year = value.getUTCFullYear();
        expect(encoded[0]).toBe(year >= 1950 && year < 2050 ? 0x17 : 0x18);
        expect(readTime(encoded, readElement(encoded, 0)).getTime()).toBe(Math.floor(value.getTime() / 1000) * 1000);
      }),
      { seed: 19, numRuns: 3000 },
    );
  });
});

describe('strings', () => {
  it('derPrintableString refuses characters outside the PrintableString set', () => {
    for (const text of ['a*b', 'a@b', 'a_b', 'Zürich', 'tab\t', 'a&b']) {
      expect(() => derPrintableString(text)).toThrow(expect.objectContaining({ code: ErrorCode.CertificateUnknown, message: expect.stringContaining('PrintableString') }) as Error);
    }
    expect(derPrintableString("Az09 '()+,-./:=?")[0]).toBe(0x13);
  });

  it('derIa5String and encodeIa5String refuse non-ASCII with Go\'s wording', () => {
    expect(() => derIa5String('ü.example')).toThrow(expect.objectContaining({ message: 'x509: "ü.example" cannot be encoded as an IA5String' }) as Error);
    expect(() => encodeIa5String('a\u{1F600}')).toThrow(DerEncodeError);
    expect(hex(encodeIa5String('a.example\u007f'))).toBe(Buffer.from('a.example\x7f').toString('hex'));
  });

  it('shortens a long refused value in the message', () => {
    const error = (() => {
      try {
        derIa5String(`${'a'.repeat(100_000)}ü`);
      } catch (caught) {
        return caught as Error;
      }
      return null;
    })();
    expect(error?.message.length).toBeLessThan(200);
  });

  it('derUtf8String writes a lone surrogate as U+FFFD, as Go\'s JSON decoding does', () => {
    expect(hex(derUtf8String('a\ud800'))).toBe('0c0461efbfbd');
  });

  it('round-trips generated strings through readString', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ unit: 'binary-ascii', maxLength: 300 }), (unicode, ascii) => {
        const directory = derDirectoryString(unicode);
        expect(readString(directory, readElement(directory, 0))).toBe(unicode);
        const ia5 = derIa5String(ascii);
        expect(readString(ia5, readElement(ia5, 0))).toBe(ascii);
        if (isPrintableString(ascii)) expect(readString(derPrintableString(ascii), readElement(derPrintableString(ascii), 0))).toBe(ascii);
      }),
      { seed: 19, numRuns: 2000 },
    );
  });
});

describe('tags', () => {
  it.each([-1, 256, 0x1f, 0x3f, 0xbf, 1.5])('derTlv refuses identifier octet %s', (tag) => {
    expect(() => derTlv(tag, new Uint8Array())).toThrow(DerEncodeError);
    expect(() => derConstructed(tag, [])).toThrow(DerEncodeError);
  });

  it.each([-1, 31, 2.5])('derExplicit and derImplicit refuse tag number %s', (tagNumber) => {
    expect(() => derExplicit(tagNumber, derNull())).toThrow(DerEncodeError);
    expect(() => derImplicit(tagNumber, new Uint8Array(), false)).toThrow(DerEncodeError);
  });

  it('writes tag numbers 0-30 the reader reads back', () => {
    for (let n = 0; n <= 30; n++) {
      expect(readElement(derExplicit(n, derNull()), 0).tag).toBe(0xa0 | n);
      expect(readElement(derImplicit(n, Uint8Array.of(1), false), 0).tag).toBe(0x80 | n);
    }
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
