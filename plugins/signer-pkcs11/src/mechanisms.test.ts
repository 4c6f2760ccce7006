import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { ecdsaSignatureToDer, planSignature } from './mechanisms.js';

describe('ecdsaSignatureToDer', () => {
  it.each(['P-256', 'P-384', 'P-521'])('turns a raw r||s signature into DER that verifies when the curve is %s', (namedCurve) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve });
    const data = Buffer.from('tbs');
    for (let round = 0; round < 20; round++) {
      const raw = sign('sha256', data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
      const der = ecdsaSignatureToDer(raw);
      expect(der[0]).toBe(0x30);
      expect(verify('sha256', data, publicKey, der)).toBe(true);
    }
  });

  it('strips leading zeros and pads a set top bit when encoding the integers', () => {
    const raw = new Uint8Array(64);
    raw[31] = 0x05; // r = 5 (31 leading zero bytes)
    raw[32] = 0x80; // s has its top bit set: 32 bytes + 0x00 pad = 33 (0x21)
    const der = ecdsaSignatureToDer(raw);
    expect(Buffer.from(der.subarray(0, 7)).toString('hex')).toBe('30260201050221');
    expect(der[7]).toBe(0x00);
    expect(der[8]).toBe(0x80);
  });

  it('throws when the token answer has odd length', () => {
    expect(() => ecdsaSignatureToDer(new Uint8Array(63))).toThrow(RangeError);
  });
});

describe('planSignature', () => {
  it('wraps the SHA-384 digest in a DigestInfo when the algorithm is RSA-SHA384', () => {
    const plan = planSignature('RSA-SHA384', Buffer.from('abc'));
    const digest = createHash('sha384').update('abc').digest();
    // RFC 8017 §9.2 note 1: the SHA-384 DigestInfo prefix.
    expect(plan.input.toString('hex')).toBe(`3041300d060960864801650304020205000430${digest.toString('hex')}`);
    expect(plan.ecdsa).toBe(false);
  });

  it('hands the bare digest to the token when the algorithm is ECDSA or RSA-PSS', () => {
    expect(planSignature('ECDSA-SHA512', Buffer.from('abc')).input).toEqual(createHash('sha512').update('abc').digest());
    expect(planSignature('ECDSA-SHA512', Buffer.from('abc')).ecdsa).toBe(true);
    expect(planSignature('RSA-PSS-SHA256', Buffer.from('abc')).input).toEqual(createHash('sha256').update('abc').digest());
  });

  it('throws when the algorithm is Ed25519', () => {
    expect(() => planSignature('Ed25519', Buffer.from('abc'))).toThrow(RangeError);
  });
});
