import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DerReader,
  MAX_DER_DEPTH,
  decodeLatin1,
  decodeOid,
  readBitString,
  readBoolean,
  readElement,
  readIntegerBytes,
  readOid,
  readSmallInteger,
  readString,
  readTime,
  unsignedBitLength,
} from './der-reader.js';
import { derOid, derSequence, derTlv, encodeOidContent } from './der-writer.js';
import { DerDecodeError } from './errors.js';

const bytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex.replace(/\s/g, ''), 'hex'));
const first = (der: Uint8Array) => readElement(der, 0);

describe('readElement', () => {
  it('returns offsets into the buffer when the length is short-form', () => {
    expect(readElement(bytes('ff 04 02 aa bb'), 1)).toEqual({ tag: 0x04, start: 1, valueStart: 3, end: 5 });
  });

  it('reads long-form lengths when the content is 128 bytes or more', () => {
    const der = derTlv(0x04, new Uint8Array(300));
    expect(first(der)).toEqual({ tag: 0x04, start: 0, valueStart: 4, end: 304 });
  });

  it('throws DerDecodeError when the length is indefinite, non-minimal, too long or past the end', () => {
    for (const hex of ['3080 0000', '04 8101 00', '04 820005 0000000000', '04 85 0000000001 00', '04 05 0000', '04', '']) {
      expect(() => first(bytes(hex)), hex).toThrow(DerDecodeError);
    }
  });

  it('throws DerDecodeError when the tag uses the high-tag-number form', () => {
    expect(() => first(bytes('1f 01 00 00'))).toThrow(/high-tag-number/);
  });

  it('respects the limit when the element would run past it', () => {
    expect(() => readElement(bytes('04 02 aa bb'), 0, 3)).toThrow(DerDecodeError);
  });
});

describe('DerReader', () => {
  it('walks children with expect, optional and finish', () => {
    const der = derSequence(derTlv(0x02, Uint8Array.of(5)), derTlv(0x04, Uint8Array.of(1)));
    const reader = new DerReader(der).sequence();
    expect(reader.optional(0x01)).toBeNull();
    expect(readSmallInteger(der, reader.expect(0x02))).toBe(5);
    expect(reader.peekTag()).toBe(0x04);
    reader.read();
    expect(reader.hasMore()).toBe(false);
    expect(reader.peekTag()).toBe(-1);
    expect(() => reader.finish()).not.toThrow();
  });

  it('throws when an expected tag is missing or data is left over', () => {
    const der = derSequence(derTlv(0x02, Uint8Array.of(5)));
    expect(() => new DerReader(der).sequence().expect(0x04, 'OCTET STRING')).toThrow(/expected OCTET STRING/);
    expect(() => new DerReader(der).sequence().finish('x')).toThrow(/trailing data/);
    expect(() => new DerReader(der, 0, 2).read()).toThrow(DerDecodeError);
    expect(() => new DerReader(der, 0, der.length + 1)).toThrow(DerDecodeError);
  });

  it('refuses to enter a primitive element', () => {
    const der = derTlv(0x04, Uint8Array.of(1));
    const reader = new DerReader(der);
    expect(() => reader.enter(reader.read())).toThrow(/not constructed/);
  });

  it('throws when nesting exceeds MAX_DER_DEPTH', () => {
    let der: Uint8Array = derTlv(0x05, new Uint8Array(0));
    for (let i = 0; i < MAX_DER_DEPTH + 2; i++) der = derSequence(der);
    let reader = new DerReader(der);
    expect(() => {
      for (;;) reader = reader.sequence();
    }).toThrow(/too deep/);
  });
});

describe('decodeOid', () => {
  it('decodes common, uncommon and huge-arc OIDs when given content octets', () => {
    for (const oid of ['1.2.840.113549.1.1.11', '2.5.29.17', '1.3.6.1.4.1.55555.1.2.3', '0.9.2342.19200300.100.1.25', '2.999.3', '2.25.329800735698586629295641978511506172918']) {
      const content = encodeOidContent(oid);
      expect(decodeOid(content, 0, content.length)).toBe(oid);
    }
    expect(readOid(derOid('2.5.4.3'), first(derOid('2.5.4.3')))).toBe('2.5.4.3');
  });

  it('throws when the OID is empty, truncated or has a non-minimal arc', () => {
    expect(() => decodeOid(bytes(''), 0, 0)).toThrow(DerDecodeError);
    expect(() => decodeOid(bytes('2a86'), 0, 2)).toThrow(/truncated/);
    expect(() => decodeOid(bytes('2a 80 01'), 0, 3)).toThrow(/non-minimal/);
  });
});

describe('readIntegerBytes / readSmallInteger', () => {
  it('returns content octets with the sign octet and decodes negatives', () => {
    const der = bytes('02 02 00 ff');
    expect(Buffer.from(readIntegerBytes(der, first(der))).toString('hex')).toBe('00ff');
    expect(readSmallInteger(der, first(der))).toBe(255);
    expect(readSmallInteger(bytes('02 01 ff'), first(bytes('02 01 ff')))).toBe(-1);
    expect(readSmallInteger(bytes('02 02 ff 00'), first(bytes('02 02 ff 00')))).toBe(-256);
  });

  it('throws when the INTEGER is empty or too large for a number', () => {
    expect(() => readIntegerBytes(bytes('02 00'), first(bytes('02 00')))).toThrow(/empty INTEGER/);
    const big = bytes('02 07 01 00 00 00 00 00 00');
    expect(() => readSmallInteger(big, first(big))).toThrow(/too large/);
  });
});

describe('unsignedBitLength', () => {
  it('ignores leading zero octets', () => {
    expect(unsignedBitLength(bytes('00 80 00'))).toBe(16);
    expect(unsignedBitLength(bytes('01'))).toBe(1);
    expect(unsignedBitLength(bytes('0000'))).toBe(0);
  });
});

describe('readBoolean', () => {
  it('accepts only 0x00 and 0xFF', () => {
    expect(readBoolean(bytes('01 01 ff'), first(bytes('01 01 ff')))).toBe(true);
    expect(readBoolean(bytes('01 01 00'), first(bytes('01 01 00')))).toBe(false);
    expect(() => readBoolean(bytes('01 01 01'), first(bytes('01 01 01')))).toThrow(DerDecodeError);
  });
});

describe('readBitString', () => {
  it('returns the data octets and unused-bit count', () => {
    const der = bytes('03 03 06 6e 40');
    const bits = readBitString(der, first(der));
    expect(bits.unusedBits).toBe(6);
    expect(Buffer.from(bits.bytes).toString('hex')).toBe('6e40');
  });

  it('throws when padding is invalid or non-zero', () => {
    for (const hex of ['03 00', '03 01 01', '03 02 08 00', '03 02 01 01']) {
      expect(() => readBitString(bytes(hex), first(bytes(hex))), hex).toThrow(DerDecodeError);
    }
  });
});

describe('readString', () => {
  it('decodes every X.509 string type', () => {
    const cases: Array<[number, Uint8Array, string]> = [
      [0x0c, Buffer.from('Zürich ✓'), 'Zürich ✓'],
      [0x13, Buffer.from('Example Inc.'), 'Example Inc.'],
      [0x16, Buffer.from('a@b.c'), 'a@b.c'],
      [0x14, Uint8Array.of(0x4d, 0xfc, 0x6e), 'Mün'],
      [0x1e, Buffer.from('00 4d 00 fc 00 6e'.replace(/ /g, ''), 'hex'), 'Mün'],
      [0x1c, Buffer.from('0000004d 0001f600'.replace(/ /g, ''), 'hex'), 'M😀'],
      [0x12, Buffer.from('123 45'), '123 45'],
    ];
    for (const [tag, content, text] of cases) {
      const der = derTlv(tag, content);
      expect(readString(der, first(der))).toBe(text);
    }
  });

  it('throws when UTF-8 is invalid, BMP/Universal lengths are wrong or the tag is not a string', () => {
    for (const der of [derTlv(0x0c, Uint8Array.of(0xc3)), derTlv(0x1e, Uint8Array.of(0)), derTlv(0x1c, Uint8Array.of(0, 0)), derTlv(0x1c, Uint8Array.of(0, 0x11, 0, 0)), derTlv(0x04, Uint8Array.of(0x41))]) {
      expect(() => readString(der, first(der))).toThrow(DerDecodeError);
    }
  });
});

describe('decodeLatin1', () => {
  it('maps every byte to the code point of the same value, whatever the length and the buffer', () => {
    const reference = (bytes: Uint8Array, start: number, end: number): string => String.fromCharCode(...bytes.subarray(start, end));
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), fc.uint8Array({ maxLength: 80 }), fc.nat(), fc.nat(), (a, b, x, y) => {
        for (const bytes of [a, b.subarray(Math.min(1, b.length)), a]) {
          const start = bytes.length === 0 ? 0 : x % bytes.length;
          const end = start + (bytes.length === 0 ? 0 : y % (bytes.length - start + 1));
          expect(decodeLatin1(bytes, start, end)).toBe(reference(bytes, start, end));
        }
      }),
    );
  });
});

describe('readTime', () => {
  const time = (tag: number, text: string): Date => {
    const der = derTlv(tag, Buffer.from(text));
    return readTime(der, first(der));
  };

  it('maps UTCTime years 50-99 to 19xx and 00-49 to 20xx (RFC 5280 4.1.2.5.1)', () => {
    expect(time(0x17, '491231235959Z').toISOString()).toBe('2049-12-31T23:59:59.000Z');
    expect(time(0x17, '500101000000Z').toISOString()).toBe('1950-01-01T00:00:00.000Z');
  });

  it('accepts UTCTime without seconds and with offsets as Go does', () => {
    expect(time(0x17, '2611220322Z').toISOString()).toBe('2026-11-22T03:22:00.000Z');
    expect(time(0x17, '261122032200+0130').toISOString()).toBe('2026-11-22T01:52:00.000Z');
  });

  it('reads GeneralizedTime with fractional seconds and years before 100', () => {
    expect(time(0x18, '20500101000000Z').toISOString()).toBe('2050-01-01T00:00:00.000Z');
    expect(time(0x18, '20260102030405.25Z').toISOString()).toBe('2026-01-02T03:04:05.250Z');
    expect(time(0x18, '00500101000000Z').getUTCFullYear()).toBe(50);
  });

  it('throws when fields are out of range, the zone is missing or the tag is wrong', () => {
    for (const [tag, text] of [
      [0x17, '260431000000Z'],
      [0x17, '260230000000Z'],
      [0x17, '261122032260Z'],
      [0x17, '261122032200'],
      [0x17, '2611220322000Z'],
      [0x18, '202611220322Z'],
      [0x18, '20261122032200.Z'],
      [0x17, '26112a032200Z'],
      [0x04, '261122032200Z'],
    ] as const) {
      expect(() => time(tag, text), text).toThrow(DerDecodeError);
    }
  });
});

describe('DerReader on arbitrary bytes', () => {
  /** Walk every element recursively, decoding each primitive with the decoder its tag suggests. */
  function walk(reader: DerReader): void {
    while (reader.hasMore()) {
      const element = reader.read();
      if (element.tag & 0x20) {
        walk(reader.enter(element));
        continue;
      }
      const bytes = reader.bytes;
      switch (element.tag) {
        case 0x01:
          readBoolean(bytes, element);
          break;
        case 0x02:
          readSmallInteger(bytes, element);
          break;
        case 0x03:
          readBitString(bytes, element);
          break;
        case 0x06:
          readOid(bytes, element);
          break;
        case 0x17:
        case 0x18:
          readTime(bytes, element);
          break;
        default:
          readString(bytes, element);
      }
    }
  }

  it('throws nothing but DerDecodeError whatever the input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (input) => {
        try {
          walk(new DerReader(input));
        } catch (error) {
          expect(error).toBeInstanceOf(DerDecodeError);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
