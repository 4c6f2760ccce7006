/**
 * RSA key generation from two primes of OpenSSL's own prime generator (`crypto.generatePrime`),
 * with the key pair criteria of FIPS 186-4 Appendix B.3.1 checked here.
 *
 * Why not `generateKeyPair('rsa')`: OpenSSL 3's default RSA key generation follows FIPS 186-4
 * B.3.6 (probable primes with auxiliary primes), which spends most of its time on the auxiliary
 * prime searches. `generatePrime` runs OpenSSL's plain random prime search (`BN_generate_prime_ex2`:
 * random odd candidate with the top two bits set, trial division, 64 Miller–Rabin rounds — above
 * the 5 rounds FIPS 186-4 Table C.3 asks for 1024-bit primes at 2^-100 error), which is a FIPS
 * 186-4 B.3.3 style search. Two of them run concurrently on libuv's thread pool: a key costs much
 * less CPU than with `generateKeyPair` and arrives sooner, as both primes are searched at once (see
 * docs/performance.md#rsa-keys-from-two-concurrent-prime-searches).
 *
 * What is checked before a pair becomes a key (FIPS 186-4 B.3.1, applied to every size 2048–8192,
 * as OpenSSL does; odd sizes split as ⌈bits/2⌉ + ⌊bits/2⌋):
 * - e = 65537 (criterion 1: odd, 2^16 < e < 2^256) and gcd(e, p−1) = gcd(e, q−1) = 1 (B.3.3 steps
 *   4.5 and 5.6; a failing prime is redrawn on its own);
 * - each prime has its exact size and is at least √2·2^(size−1) (criterion 2(c), B.3.3 steps 4.4
 *   and 5.4), which also makes n exactly `bits` bits long; generatePrime's top-two-bits rule gives
 *   ≥ 1.5·2^(size−1), so this only rejects a broken prime source;
 * - p ≠ q and |p − q| > 2^(⌊bits/2⌋ − 100) (criterion 2(d), B.3.3 step 5.4);
 * - d = e⁻¹ mod λ(n), λ(n) = lcm(p−1, q−1), and 2^(⌈bits/2⌉) < d (criterion 3).
 * A rejected pair is redrawn; every loop is bounded and ends in a 2400 KeyGenerationError.
 *
 * The key is imported through JWK and must pass a sign/verify round trip before it is returned.
 * That round trip alone would not catch wrong CRT parameters: OpenSSL checks each CRT result and
 * silently falls back to exponentiation with d when it is wrong (`rsa_ossl_mod_exp`), so the
 * relations between n, d, dp, dq and qi are asserted here as well.
 *
 * Nothing secret leaves this module except inside the returned key; errors name only the failed
 * check.
 */
import { createPrivateKey, createPublicKey, generatePrime, randomBytes, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

import { bigintToBase64url, bitLength, gcd, lcm, modInverse } from './bigint-arithmetic.js';
import { KeyGenerationError } from './errors.js';

/** The public exponent of every generated RSA key (CFSSL's and Go's, F4). */
export const RSA_PUBLIC_EXPONENT = 65537n;

/** CFSSL's RSA size range (`csr.KeyRequest.Generate`). */
export const MIN_RSA_BITS = 2048;
export const MAX_RSA_BITS = 8192;

/**
 * Draws of one prime before giving up on gcd(e, p−1) = 1. A draw fails with probability 1/65537,
 * so the bound is only reached by a broken prime source.
 */
export const MAX_PRIME_DRAWS = 8;

/** Prime pairs tried before giving up (each fails the B.3.1 checks with probability < 2^-90). */
export const MAX_PRIME_PAIR_ATTEMPTS = 8;

/** Private RSA JWK (RFC 7518 6.3) as node:crypto imports it. */
export interface RsaPrivateJwk {
  kty: 'RSA';
  n: string;
  e: string;
  d: string;
  p: string;
  q: string;
  dp: string;
  dq: string;
  qi: string;
}

/** A key built by {@link generateRsaKeyFromPrimes}. */
export interface RsaKeyFromPrimes {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** Every component, for encoders (SPKI, PKCS#1) that should not re-export the key. */
  jwk: RsaPrivateJwk;
}

/** Where primes come from: `(bits) => prime` with exactly `bits` bits. */
export type PrimeSource = (bits: number) => Promise<bigint>;

/** Options of {@link generateRsaKeyFromPrimes}. */
export interface RsaFromPrimesOptions {
  /**
   * The prime generator (default {@link generatePrimeWithOpenSsl}). Tests inject fixed sequences to
   * drive the rejection paths; a replacement must return primes.
   */
  primeSource?: PrimeSource;
}

/** Why a prime pair was not turned into a key (no secret values, only the failed check). */
export type PrimePairRejection =
  | 'prime-size'
  | 'exponent-not-coprime'
  | 'equal-primes'
  | 'primes-too-close'
  | 'modulus-size'
  | 'private-exponent-too-small';

/** Result of {@link rsaJwkFromPrimes}. */
export type PrimePairResult = { ok: true; jwk: RsaPrivateJwk } | { ok: false; reason: PrimePairRejection };

/** Bit lengths of the two primes of a `bits`-bit modulus: ⌈bits/2⌉ and ⌊bits/2⌋. */
export function rsaPrimeSizes(bits: number): [number, number] {
  return [Math.ceil(bits / 2), Math.floor(bits / 2)];
}

/** A random probable prime of exactly `bits` bits, top two bits set, from OpenSSL on libuv's thread pool. */
export function generatePrimeWithOpenSsl(bits: number): Promise<bigint> {
  return new Promise((resolve, reject) => {
    generatePrime(bits, { bigint: true, safe: false }, (error, prime) => (error ? reject(error) : resolve(prime)));
  });
}

/** FIPS 186-4 B.3.1 criterion 2(c) for a prime of `size` bits: √2·2^(size−1) ≤ prime < 2^size. */
function hasFipsSize(prime: bigint, size: number): boolean {
  // prime ≥ √2·2^(size−1)  ⇔  prime² ≥ 2^(2·size−1), exact in integers.
  return bitLength(prime) === size && prime * prime >= 1n << BigInt(2 * size - 1);
}

function isCoprimeWithExponent(prime: bigint): boolean {
  return gcd(RSA_PUBLIC_EXPONENT, prime - 1n) === 1n;
}

/**
 * The private JWK of the `bits`-bit RSA key with primes `p` and `q` and e = 65537, or the first FIPS
 * 186-4 B.3.1 check the pair fails. Pure arithmetic: primality is the caller's responsibility. The
 * larger prime becomes `p` (so qi = q⁻¹ mod p, as OpenSSL orders them).
 */
export function rsaJwkFromPrimes(first: bigint, second: bigint, bits: number): PrimePairResult {
  const [p, q] = first >= second ? [first, second] : [second, first];
  const [pSize, qSize] = rsaPrimeSizes(bits);
  if (!hasFipsSize(p, pSize) || !hasFipsSize(q, qSize)) return { ok: false, reason: 'prime-size' };
  if (!isCoprimeWithExponent(p) || !isCoprimeWithExponent(q)) return { ok: false, reason: 'exponent-not-coprime' };
  if (p === q) return { ok: false, reason: 'equal-primes' };
  if (p - q <= 1n << BigInt(Math.floor(bits / 2) - 100)) return { ok: false, reason: 'primes-too-close' };
  const n = p * q;
  if (bitLength(n) !== bits) return { ok: false, reason: 'modulus-size' };
  const lambda = lcm(p - 1n, q - 1n);
  const d = modInverse(RSA_PUBLIC_EXPONENT, lambda);
  if (d <= 1n << BigInt(Math.ceil(bits / 2))) return { ok: false, reason: 'private-exponent-too-small' };
  const dp = d % (p - 1n);
  const dq = d % (q - 1n);
  const qi = modInverse(q, p);
  assertConsistentKey({ n, d, p, q, dp, dq, qi, lambda });
  return {
    ok: true,
    jwk: {
      kty: 'RSA',
      n: bigintToBase64url(n),
      e: bigintToBase64url(RSA_PUBLIC_EXPONENT),
      d: bigintToBase64url(d),
      p: bigintToBase64url(p),
      q: bigintToBase64url(q),
      dp: bigintToBase64url(dp),
      dq: bigintToBase64url(dq),
      qi: bigintToBase64url(qi),
    },
  };
}

/**
 * The relations OpenSSL relies on but would not report when broken (see the module note): a
 * defence against a bug here, never expected to fail.
 */
function assertConsistentKey(key: { n: bigint; d: bigint; p: bigint; q: bigint; dp: bigint; dq: bigint; qi: bigint; lambda: bigint }): void {
  const { n, d, p, q, dp, dq, qi, lambda } = key;
  const consistent =
    n === p * q &&
    (d * RSA_PUBLIC_EXPONENT) % lambda === 1n &&
    d < lambda &&
    (dp * RSA_PUBLIC_EXPONENT) % (p - 1n) === 1n &&
    (dq * RSA_PUBLIC_EXPONENT) % (q - 1n) === 1n &&
    (qi * q) % p === 1n &&
    qi < p;
  if (!consistent) throw new KeyGenerationError('RSA key generation failed: inconsistent key components');
}

/** A prime of `size` bits with gcd(e, prime − 1) = 1, redrawn at most {@link MAX_PRIME_DRAWS} times. */
async function drawCoprimePrime(source: PrimeSource, size: number): Promise<bigint> {
  for (let draw = 0; draw < MAX_PRIME_DRAWS; draw++) {
    const prime = await source(size);
    if (isCoprimeWithExponent(prime)) return prime;
  }
  throw new KeyGenerationError(`RSA key generation failed: no prime with gcd(e, p-1) = 1 after ${MAX_PRIME_DRAWS} draws`);
}

const SELF_TEST_ALGORITHM = 'sha256';

function signAsync(data: Buffer, key: KeyObject): Promise<Buffer> {
  return new Promise((resolve, reject) => sign(SELF_TEST_ALGORITHM, data, key, (error, signature) => (error ? reject(error) : resolve(signature))));
}

function verifyAsync(data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> {
  return new Promise((resolve, reject) =>
    verify(SELF_TEST_ALGORITHM, data, key, signature, (error, result) => (error ? reject(error) : resolve(result))),
  );
}

/**
 * Import the JWK and prove the pair works: RSA-SHA256 (PKCS#1 v1.5) signature with the private key,
 * verified with a public key built from n and e alone. Asynchronous so an 8192-bit signature does
 * not hold the calling thread.
 */
async function importAndSelfTest(jwk: RsaPrivateJwk, bits: number): Promise<RsaKeyFromPrimes> {
  let privateKey: KeyObject;
  let publicKey: KeyObject;
  try {
    privateKey = createPrivateKey({ key: { ...jwk }, format: 'jwk' });
    publicKey = createPublicKey({ key: { kty: 'RSA', n: jwk.n, e: jwk.e }, format: 'jwk' });
  } catch (cause) {
    throw new KeyGenerationError('RSA key generation failed: the key could not be imported', { cause });
  }
  const details = privateKey.asymmetricKeyDetails;
  if (details?.modulusLength !== bits || details.publicExponent !== RSA_PUBLIC_EXPONENT) {
    throw new KeyGenerationError('RSA key generation failed: the imported key has the wrong size');
  }
  const challenge = randomBytes(32);
  let verified: boolean;
  try {
    verified = await verifyAsync(challenge, publicKey, await signAsync(challenge, privateKey));
  } catch (cause) {
    throw new KeyGenerationError('RSA key generation failed: sign/verify self-test error', { cause });
  }
  if (!verified) throw new KeyGenerationError('RSA key generation failed: sign/verify self-test mismatch');
  return { privateKey, publicKey, jwk };
}

/**
 * Generate a `bits`-bit RSA key (2048–8192, any integer; e = 65537) from two concurrently generated
 * primes, checked against FIPS 186-4 B.3.1 and self-tested (see the module note). Asynchronous: the
 * prime searches, the self-test signature and its verification run on libuv's thread pool; the
 * BigInt arithmetic runs on the calling thread. Failures are 2400
 * KeyGenerationErrors.
 */
export async function generateRsaKeyFromPrimes(bits: number, options: RsaFromPrimesOptions = {}): Promise<RsaKeyFromPrimes> {
  if (!Number.isInteger(bits) || bits < MIN_RSA_BITS) throw new KeyGenerationError('RSA key is too weak');
  if (bits > MAX_RSA_BITS) throw new KeyGenerationError('RSA key size too large');
  const source = options.primeSource ?? generatePrimeWithOpenSsl;
  const [pSize, qSize] = rsaPrimeSizes(bits);
  let lastRejection: PrimePairRejection | undefined;
  for (let attempt = 0; attempt < MAX_PRIME_PAIR_ATTEMPTS; attempt++) {
    let primes: [bigint, bigint];
    try {
      primes = await Promise.all([drawCoprimePrime(source, pSize), drawCoprimePrime(source, qSize)]);
    } catch (cause) {
      if (cause instanceof KeyGenerationError) throw cause;
      throw new KeyGenerationError('RSA key generation failed: prime generation error', { cause });
    }
    const result = rsaJwkFromPrimes(primes[0], primes[1], bits);
    if (result.ok) return importAndSelfTest(result.jwk, bits);
    lastRejection = result.reason;
  }
  throw new KeyGenerationError(
    `RSA key generation failed: no acceptable prime pair after ${MAX_PRIME_PAIR_ATTEMPTS} attempts (last check failed: ${lastRejection})`,
  );
}
