import { checkPrimeSync, createPrivateKey, createPublicKey, generateKeyPairSync, generatePrimeSync, sign, verify } from 'node:crypto';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { bigintFromBase64url, bitLength, gcd, lcm } from './bigint-arithmetic.js';
import { generateKey, resolveKeySpec } from './key-generation.js';
import {
  MAX_PRIME_DRAWS,
  MAX_PRIME_PAIR_ATTEMPTS,
  generateRsaKeyFromPrimes,
  rsaJwkFromPrimes,
  rsaPrimeSizes,
} from './rsa-key-from-primes.js';
import type { PrimeSource } from './rsa-key-from-primes.js';
import { openssl } from './test-support/openssl.js';

const E = 65537n;

/** The RSA members of a JWK (node:crypto's JsonWebKey or the module's RsaPrivateJwk). */
type RsaJwkMembers = Partial<Record<'n' | 'e' | 'd' | 'p' | 'q' | 'dp' | 'dq' | 'qi', string>>;

/** JWK components as BigInts. */
function components(jwk: RsaJwkMembers) {
  const value = (name: 'n' | 'e' | 'd' | 'p' | 'q' | 'dp' | 'dq' | 'qi') => bigintFromBase64url(jwk[name] as string);
  return { n: value('n'), e: value('e'), d: value('d'), p: value('p'), q: value('q'), dp: value('dp'), dq: value('dq'), qi: value('qi') };
}

/**
 * Every relation an RSA private key must satisfy, plus the FIPS 186-4 B.3.1 criteria for `bits`
 * (primality is left to `openssl rsa -check`: OpenSSL 3 runs at least 64 Miller–Rabin rounds per
 * check, ≈ 70 ms for a 1024-bit prime).
 */
function expectValidRsaComponents(jwk: RsaJwkMembers, bits: number): void {
  const { n, e, d, p, q, dp, dq, qi } = components(jwk);
  const [pSize, qSize] = rsaPrimeSizes(bits);
  const lambda = lcm(p - 1n, q - 1n);
  expect(e).toBe(E);
  expect(n).toBe(p * q);
  expect(bitLength(n)).toBe(bits);
  expect([bitLength(p), bitLength(q)]).toEqual([pSize, qSize]);
  expect(p * p >= 1n << BigInt(2 * pSize - 1) && q * q >= 1n << BigInt(2 * qSize - 1)).toBe(true);
  expect(gcd(E, p - 1n)).toBe(1n);
  expect(gcd(E, q - 1n)).toBe(1n);
  expect(p > q ? p - q : q - p).toBeGreaterThan(1n << BigInt(Math.floor(bits / 2) - 100));
  expect((d * e) % lambda).toBe(1n);
  expect(d > 1n << BigInt(Math.ceil(bits / 2)) && d < lambda).toBe(true);
  expect(dp).toBe(d % (p - 1n));
  expect(dq).toBe(d % (q - 1n));
  expect((qi * q) % p).toBe(1n);
  expect(qi < p).toBe(true);
}

const pemBody = (pem: string): string => pem.split('\n').filter((line) => line && !line.startsWith('-----')).join('');

/** A prime of `bits` bits at or after `start` (odd), found with OpenSSL's primality test. */
function nextPrime(start: bigint): bigint {
  let candidate = start | 1n;
  while (!checkPrimeSync(candidate)) candidate += 2n;
  return candidate;
}

/** A prime source that answers from a list per size, then from OpenSSL; counts calls. */
function scriptedSource(script: Record<number, bigint[]>): { source: PrimeSource; calls: () => number } {
  let calls = 0;
  const source: PrimeSource = async (bits) => {
    calls++;
    return script[bits]?.shift() ?? generatePrimeSync(bits, { bigint: true });
  };
  return { source, calls: () => calls };
}

/**
 * A 1024-bit prime with its top two bits set and p − 1 divisible by e (p ≡ 1 mod 2e), so
 * gcd(e, p − 1) = e. (With `add`, OpenSSL sets only the top bit; redraw until both are set.)
 */
function primeWithEDividingPMinus1(): bigint {
  for (;;) {
    const prime = generatePrimeSync(1024, { bigint: true, add: 2n * E, rem: 1n });
    if (prime >> 1022n === 3n) return prime;
  }
}

/**
 * A fixed pair for a 2049-bit modulus with p = 4R + 1 and q = 2R + 1 (R not divisible by e): both
 * of full size with their top two bits set and far apart, but λ = lcm(4R, 2R) = 4R < 2^1025, so d
 * can never exceed 2^⌈2049/2⌉ (FIPS 186-4 B.3.1 criterion 3). Found offline by random search; public
 * test values.
 */
const SMALL_LAMBDA_P = BigInt(
  '0x1b1d091b8029ba4ff920b54d6b38037a3731c1fd93495a660c629dc3b837a85efceac762ea57518a595363ba39ae441c43e7ca4720ff58c606ba8d1e587755a0b1512aadebc80fad9d72f7d2d61722b2012cfced7e91d80a6d53777bd5b88a12a2f4e22633ea8ec887e3ffa518c0b7cca1a16199e27506256ef9952e11caa46e5',
);
const SMALL_LAMBDA_Q = BigInt(
  '0xd8e848dc014dd27fc905aa6b59c01bd1b98e0fec9a4ad3306314ee1dc1bd42f7e7563b1752ba8c52ca9b1dd1cd7220e21f3e523907fac63035d468f2c3baad058a89556f5e407d6ceb97be96b0b915900967e76bf48ec0536a9bbbdeadc4509517a711319f5476443f1ffd28c605be650d0b0ccf13a8312b77cca9708e552373',
);

/** The error a promise rejects with (fails the test when it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<Error & { code: number; cause?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code: number; cause?: unknown };
  }
  throw new Error('expected a rejection');
}

/** No number long enough to be key material appears in an error text. */
const expectNoSecrets = (message: string): void => expect(message).not.toMatch(/[0-9a-f]{24}/i);

describe('rsaPrimeSizes', () => {
  it('splits odd sizes with the larger half first', () => {
    expect(rsaPrimeSizes(2048)).toEqual([1024, 1024]);
    expect(rsaPrimeSizes(2049)).toEqual([1025, 1024]);
    expect(rsaPrimeSizes(8191)).toEqual([4096, 4095]);
  });
});

describe('rsaJwkFromPrimes', () => {
  // Even sizes only: OpenSSL splits an odd size into two primes of its own sizes, not ⌈bits/2⌉ + ⌊bits/2⌋.
  it.each([2048, 2048, 2048, 3072])('reproduces every component of an OpenSSL-generated %i-bit key from its primes', (bits) => {
    const jwk = generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({ format: 'jwk' });
    const { p, q } = components(jwk);
    // Either order in: the larger prime is p, as OpenSSL orders them.
    const result = rsaJwkFromPrimes(q, p, bits);
    expect(result).toEqual({ ok: true, jwk: { kty: 'RSA', n: jwk.n, e: jwk.e, d: jwk.d, p: jwk.p, q: jwk.q, dp: jwk.dp, dq: jwk.dq, qi: jwk.qi } });
  });

  it('rejects a pair when gcd(e, p − 1) ≠ 1', () => {
    const p = primeWithEDividingPMinus1();
    expect((p - 1n) % E).toBe(0n);
    expect(rsaJwkFromPrimes(p, generatePrimeSync(1024, { bigint: true }), 2048)).toEqual({ ok: false, reason: 'exponent-not-coprime' });
  });

  it('rejects equal primes', () => {
    const p = generatePrimeSync(1024, { bigint: true });
    expect(rsaJwkFromPrimes(p, p, 2048)).toEqual({ ok: false, reason: 'equal-primes' });
  });

  it('rejects primes closer than 2^(bits/2 − 100) (FIPS 186-4 B.3.1 2(d))', () => {
    const p = generatePrimeSync(1024, { bigint: true });
    const q = nextPrime(p + 2n);
    expect(bitLength(q)).toBe(1024);
    expect(rsaJwkFromPrimes(p, q, 2048)).toEqual({ ok: false, reason: 'primes-too-close' });
  });

  it('rejects a prime below √2·2^(size−1) or of the wrong size (FIPS 186-4 B.3.1 2(c))', () => {
    const good = generatePrimeSync(1024, { bigint: true });
    const justAboveHalf = nextPrime((1n << 1023n) + (1n << 1000n));
    expect(bitLength(justAboveHalf)).toBe(1024);
    expect(rsaJwkFromPrimes(good, justAboveHalf, 2048)).toEqual({ ok: false, reason: 'prime-size' });
    expect(rsaJwkFromPrimes(good, generatePrimeSync(1023, { bigint: true }), 2048)).toEqual({ ok: false, reason: 'prime-size' });
    expect(rsaJwkFromPrimes(good, generatePrimeSync(1024, { bigint: true }), 2050)).toEqual({ ok: false, reason: 'prime-size' });
  });

  it('rejects a pair whose private exponent cannot exceed 2^(⌈bits/2⌉) (FIPS 186-4 B.3.1 3)', () => {
    expect(checkPrimeSync(SMALL_LAMBDA_P) && checkPrimeSync(SMALL_LAMBDA_Q)).toBe(true);
    expect([bitLength(SMALL_LAMBDA_P), bitLength(SMALL_LAMBDA_Q)]).toEqual([1025, 1024]);
    expect(rsaJwkFromPrimes(SMALL_LAMBDA_P, SMALL_LAMBDA_Q, 2049)).toEqual({ ok: false, reason: 'private-exponent-too-small' });
  });
});

describe('rsaJwkFromPrimes over mixed prime pools', () => {
  /** The first failed check in the documented order, computed independently of the module, or null. */
  function expectedRejection(a: bigint, b: bigint, bits: number): string | null {
    const [p, q] = a >= b ? [a, b] : [b, a];
    const [pSize, qSize] = rsaPrimeSizes(bits);
    const fipsSize = (prime: bigint, size: number) => prime.toString(2).length === size && prime * prime >= 2n ** BigInt(2 * size - 1);
    if (!fipsSize(p, pSize) || !fipsSize(q, qSize)) return 'prime-size';
    if ((p - 1n) % E === 0n || (q - 1n) % E === 0n) return 'exponent-not-coprime';
    if (p === q) return 'equal-primes';
    if (p - q <= 2n ** BigInt(Math.floor(bits / 2) - 100)) return 'primes-too-close';
    return null;
  }

  it('accepts exactly the pairs that meet FIPS 186-4 B.3.1 and builds consistent keys from them', () => {
    const good = Array.from({ length: 6 }, () => generatePrimeSync(1024, { bigint: true }));
    const pool = [
      ...good,
      nextPrime((good[0] as bigint) + 2n), // too close to good[0]
      primeWithEDividingPMinus1(),
      nextPrime((1n << 1023n) + (1n << 1010n)), // 1024 bits, below √2·2^1023
      generatePrimeSync(1023, { bigint: true }),
      generatePrimeSync(1025, { bigint: true }),
    ];
    fc.assert(
      fc.property(fc.constantFrom(...pool), fc.constantFrom(...pool), fc.constantFrom(2048, 2049), (a, b, bits) => {
        const result = rsaJwkFromPrimes(a, b, bits);
        const rejection = expectedRejection(a, b, bits);
        if (rejection === null) {
          expect(result.ok).toBe(true);
          if (result.ok) expectValidRsaComponents(result.jwk, bits);
        } else {
          expect(result).toEqual({ ok: false, reason: rejection });
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('generateRsaKeyFromPrimes', () => {
  it('redraws only the failing prime when gcd(e, p − 1) ≠ 1', async () => {
    const { source, calls } = scriptedSource({ 1024: [primeWithEDividingPMinus1()] });
    const key = await generateRsaKeyFromPrimes(2048, { primeSource: source });
    expect(calls()).toBe(3);
    expectValidRsaComponents(key.jwk, 2048);
  });

  it('fails with 2400 after the bounded draws when every prime has e | p − 1', async () => {
    const bad = primeWithEDividingPMinus1();
    let calls = 0;
    const source: PrimeSource = async () => {
      calls++;
      return bad;
    };
    const error = await rejectionOf(generateRsaKeyFromPrimes(2048, { primeSource: source }));
    expect(error).toMatchObject({ code: 2400, message: `RSA key generation failed: no prime with gcd(e, p-1) = 1 after ${MAX_PRIME_DRAWS} draws` });
    expect(calls).toBeLessThanOrEqual(2 * MAX_PRIME_DRAWS);
    expectNoSecrets(error.message);
  });

  it('fails with 2400 after the bounded pair attempts when the source repeats one prime', async () => {
    const prime = generatePrimeSync(1024, { bigint: true });
    let calls = 0;
    const source: PrimeSource = async () => {
      calls++;
      return prime;
    };
    const error = await rejectionOf(generateRsaKeyFromPrimes(2048, { primeSource: source }));
    expect(error).toMatchObject({ code: 2400, message: expect.stringContaining('(last check failed: equal-primes)') });
    expect(calls).toBe(2 * MAX_PRIME_PAIR_ATTEMPTS);
    expectNoSecrets(error.message);
  });

  it('retries a rejected pair and succeeds with the next one', async () => {
    const prime = generatePrimeSync(1024, { bigint: true });
    const { source, calls } = scriptedSource({ 1024: [prime, prime] });
    const key = await generateRsaKeyFromPrimes(2048, { primeSource: source });
    expect(calls()).toBe(4);
    expectValidRsaComponents(key.jwk, 2048);
  });

  it('fails with 2400 naming the check when d can never be large enough', async () => {
    const source: PrimeSource = async (bits) => (bits === 1025 ? SMALL_LAMBDA_P : SMALL_LAMBDA_Q);
    const error = await rejectionOf(generateRsaKeyFromPrimes(2049, { primeSource: source }));
    expect(error).toMatchObject({ code: 2400, message: expect.stringContaining('private-exponent-too-small') });
    expectNoSecrets(error.message);
  });

  it('wraps a prime generator failure in a 2400 error', async () => {
    const error = await rejectionOf(generateRsaKeyFromPrimes(2048, { primeSource: async () => Promise.reject(new Error('entropy source down')) }));
    expect(error).toMatchObject({ code: 2400, message: 'RSA key generation failed: prime generation error' });
    expect((error.cause as Error).message).toBe('entropy source down');
  });

  it.each([
    [2047, 'RSA key is too weak'],
    [2048.5, 'RSA key is too weak'],
    [8193, 'RSA key size too large'],
  ])('refuses %d bits with CFSSL\'s 2400 text', async (bits, message) => {
    await expect(generateRsaKeyFromPrimes(bits)).rejects.toMatchObject({ code: 2400, message });
  });
});

/** 20 real keys: 2048 mostly, odd and other sizes in CFSSL's range, two 4096. */
const REAL_KEY_SIZES = [2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2048, 2049, 2050, 2055, 3001, 3072, 3072, 4096, 4096];

describe('generateKey with RSA from primes', () => {
  it.each(REAL_KEY_SIZES.map((bits, index) => [index + 1, bits]))('key %i (%i bits) is a valid RSA key for node:crypto and openssl', async (_index, bits) => {
    const key = await generateKey(resolveKeySpec({ algo: 'rsa', size: bits }));

    // The PEM is PKCS#1 and byte-identical to OpenSSL's export of the imported key; same for the SPKI.
    expect(key.privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n$/);
    expect(pemBody(key.privateKeyPem)).toBe(key.privateKey.export({ type: 'pkcs1', format: 'der' }).toString('base64'));
    expect(Buffer.from(key.spki).equals(key.publicKey.export({ type: 'spki', format: 'der' }))).toBe(true);

    // Re-imported from the PEM alone, the key has the size and exponent asked for and signs.
    const reimported = createPrivateKey(key.privateKeyPem);
    expect(reimported.asymmetricKeyDetails).toEqual({ modulusLength: bits, publicExponent: E });
    const publicKey = createPublicKey({ key: Buffer.from(key.spki), format: 'der', type: 'spki' });
    const message = Buffer.from(`certsmith ${bits}`);
    expect(verify('sha256', message, publicKey, sign('sha256', message, reimported))).toBe(true);

    // Components read back from the PEM satisfy every relation and the FIPS 186-4 B.3.1 criteria.
    expectValidRsaComponents(reimported.export({ format: 'jwk' }), bits);

    // An independent check of all of them, including CRT parameters.
    expect(openssl(['rsa', '-check', '-noout'], key.privateKeyPem)).toContain('RSA key ok');
  });

  it('uses OpenSSL\'s generateKeyPair when asked for { rsa: \'openssl\' }', async () => {
    const key = await generateKey(resolveKeySpec({ algo: 'rsa', size: 2048 }), { rsa: 'openssl' });
    expect(createPrivateKey(key.privateKeyPem).asymmetricKeyDetails).toEqual({ modulusLength: 2048, publicExponent: E });
    expectValidRsaComponents(key.privateKey.export({ format: 'jwk' }), 2048);
  });
});
