import { generateKeyPairSync, sign, verify } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { p1363ToDer } from './ecdsa-der.js';

describe('p1363ToDer', () => {
  it('writes minimal INTEGERs with a 0x00 before a set high bit', () => {
    const r = [0x00, 0x00, 0x01, 0x02];
    const s = [0x80, 0x00, 0x00, 0x01];
    expect(Array.from(p1363ToDer(Uint8Array.from([...r, ...s])))).toEqual([0x30, 0x0b, 0x02, 0x02, 0x01, 0x02, 0x02, 0x05, 0x00, 0x80, 0x00, 0x00, 0x01]);
  });

  it.each(['P-256', 'P-384', 'P-521'])('produces DER that node:crypto verifies when the curve is %s', (namedCurve) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
    const data = Buffer.from('tbs');
    for (let round = 0; round < 16; round++) {
      const p1363 = sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      expect(verify('sha256', data, publicKey, p1363ToDer(p1363))).toBe(true);
    }
  });

  it('throws a RangeError when the length is odd', () => {
    expect(() => p1363ToDer(new Uint8Array(3))).toThrow(RangeError);
  });
});
