import { describe, expect, it } from 'vitest';

import { decimalSerial, integerContent, integerValue, parseDecimalSerial } from './serial-number.js';

describe('integerContent', () => {
  it.each([
    [0n, '00'],
    [1n, '01'],
    [127n, '7f'],
    [128n, '0080'],
    [255n, '00ff'],
    [256n, '0100'],
    [0x8000n, '008000'],
    [-1n, 'ff'],
    [-128n, '80'],
    [-129n, 'ff7f'],
    [564142266705163047067434699488539944656098241192n, '62d1039eee146265b123e0e3b1f78ac7309b2aa8'],
  ])('encodes %s minimally in two complement', (value, hex) => {
    expect(Buffer.from(integerContent(value)).toString('hex')).toBe(hex);
    expect(integerValue(integerContent(value))).toBe(value);
  });
});

describe('decimalSerial / parseDecimalSerial', () => {
  it('round-trips CFSSL decimal text', () => {
    expect(decimalSerial(Uint8Array.of(0x00, 0xff))).toBe('255');
    expect(parseDecimalSerial('-5')).toBe(-5n);
    expect(() => parseDecimalSerial('0x10', 'serial')).toThrow(expect.objectContaining({ code: 400, message: 'serial must be a decimal integer, got "0x10"' }));
  });
});
