import { generateKeyPairSync, generatePrimeSync } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { bigintFromBase64url, bigintToBase64url, bigintToBytes, bitLength, egcd, gcd, lcm, modInverse } from './bigint-arithmetic.js';

const big = (bits: number) => fc.bigInt({ min: 0n, max: (1n << BigInt(bits)) - 1n });
const positive = (bits: number) => fc.bigInt({ min: 1n, max: (1n << BigInt(bits)) - 1n });

/** Square-and-multiply, independent of the module under test (used for Fermat inverses). */
function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  base %= modulus;
  while (exponent > 0n) {
    if (exponent & 1n) result = (result * base) % modulus;
    base = (base * base) % modulus;
    exponent >>= 1n;
  }
  return result;
}

describe('gcd and egcd', () => {
  it('returns a common divisor that is a Bézout combination, hence the greatest, when given any pair', () => {
    fc.assert(
      fc.property(big(600), big(600), (a, b) => {
        const { gcd: g, x, y } = egcd(a, b);
        expect(gcd(a, b)).toBe(g);
        expect(a * x + b * y).toBe(g);
        if (g !== 0n) {
          expect(a % g).toBe(0n);
          expect(b % g).toBe(0n);
        } else {
          expect([a, b]).toEqual([0n, 0n]);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('finds a planted common factor when the cofactors are coprime', () => {
    fc.assert(
      fc.property(positive(300), positive(200), positive(200), (factor, m, k) => {
        fc.pre(gcd(m, k) === 1n);
        expect(gcd(factor * m, factor * k)).toBe(factor);
      }),
      { numRuns: 200 },
    );
  });

  it('throws RangeError when given a negative value', () => {
    expect(() => gcd(-1n, 2n)).toThrow(RangeError);
    expect(() => egcd(2n, -1n)).toThrow(RangeError);
  });
});

describe('modInverse', () => {
  it('returns x in [1, m) with a·x ≡ 1 (mod m) when gcd(a, m) = 1, and throws otherwise', () => {
    fc.assert(
      fc.property(big(1100), fc.bigInt({ min: 2n, max: (1n << 1100n) - 1n }), (a, m) => {
        if (gcd(a % m, m) === 1n) {
          const inverse = modInverse(a, m);
          expect(inverse >= 1n && inverse < m).toBe(true);
          expect((a * inverse) % m).toBe(1n % m);
        } else {
          expect(() => modInverse(a, m)).toThrow(RangeError);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('agrees with Fermat\'s a^(p−2) mod p when the modulus is a prime', () => {
    const primes = [64, 127, 512, 1024].map((bits) => generatePrimeSync(bits, { bigint: true }));
    fc.assert(
      fc.property(fc.constantFrom(...primes), positive(1100), (p, a) => {
        fc.pre(a % p !== 0n);
        expect(modInverse(a, p)).toBe(modPow(a, p - 2n, p));
      }),
      { numRuns: 100 },
    );
  });

  it('accepts a negative a by reducing it modulo m', () => {
    expect(modInverse(-3n, 7n)).toBe(2n); // −3·2 = −6 ≡ 1 (mod 7)
  });

  it('throws RangeError when the modulus is below 2', () => {
    expect(() => modInverse(3n, 1n)).toThrow(RangeError);
    expect(() => modInverse(3n, 0n)).toThrow(RangeError);
  });
});

describe('lcm', () => {
  it('is a common multiple with lcm·gcd = a·b when given positive integers', () => {
    fc.assert(
      fc.property(positive(700), positive(700), (a, b) => {
        const multiple = lcm(a, b);
        expect(multiple % a).toBe(0n);
        expect(multiple % b).toBe(0n);
        expect(multiple * gcd(a, b)).toBe(a * b);
      }),
      { numRuns: 300 },
    );
  });

  it('throws RangeError when given zero', () => {
    expect(() => lcm(0n, 3n)).toThrow(RangeError);
  });
});

describe('bitLength', () => {
  it('matches the binary string length and brackets the value by powers of two', () => {
    fc.assert(
      fc.property(big(9000), (n) => {
        const length = bitLength(n);
        expect(length).toBe(n === 0n ? 0 : n.toString(2).length);
        if (n > 0n) expect(n >= 1n << BigInt(length - 1) && n < 1n << BigInt(length)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('is exact at powers of two and their neighbours', () => {
    for (const k of [1, 7, 8, 9, 1023, 1024, 1025, 2048, 8192]) {
      const power = 1n << BigInt(k);
      expect([bitLength(power - 1n), bitLength(power), bitLength(power + 1n)]).toEqual([k, k + 1, k + 1]);
    }
  });
});

describe('base64url integers', () => {
  it('round-trips and never writes a leading zero octet when given any non-negative integer', () => {
    fc.assert(
      fc.property(big(4200), (n) => {
        const text = bigintToBase64url(n);
        expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(bigintFromBase64url(text)).toBe(n);
        const bytes = bigintToBytes(n);
        expect(bytes.length).toBe(Math.max(1, Math.ceil(bitLength(n) / 8)));
        if (n > 0n) expect(bytes[0]).not.toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it('reads leading zero octets and the empty string when decoding', () => {
    expect(bigintFromBase64url(Buffer.from([0, 0, 1, 2]).toString('base64url'))).toBe(0x0102n);
    expect(bigintFromBase64url('')).toBe(0n);
    expect(bigintToBase64url(0n)).toBe('AA');
  });

  it('reproduces node:crypto\'s JWK encoding of every RSA component', () => {
    const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
    for (const name of ['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi'] as const) {
      const text = jwk[name] as string;
      expect(bigintToBase64url(bigintFromBase64url(text)), name).toBe(text);
    }
  });
});
