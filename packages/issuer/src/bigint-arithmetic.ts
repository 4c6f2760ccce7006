/**
 * The little number theory an RSA key needs once its primes exist (gcd, extended gcd, modular
 * inverse, lcm, bit length) and the JWK integer encoding (RFC 7518 6.3: base64url of the unsigned
 * big-endian value, no leading zero octets). Pure BigInt functions; they throw RangeError on
 * arguments outside their domain, which callers treat as a programming error.
 *
 * BigInts are immutable and cannot be wiped; callers holding secret values drop the references.
 */

/** Greatest common divisor of two non-negative integers (gcd(0, 0) = 0). */
export function gcd(a: bigint, b: bigint): bigint {
  if (a < 0n || b < 0n) throw new RangeError('gcd takes non-negative integers');
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

/** Result of {@link egcd}: `a·x + b·y = gcd`. */
export interface ExtendedGcd {
  gcd: bigint;
  x: bigint;
  y: bigint;
}

/** Extended Euclid for non-negative integers: Bézout coefficients with `a·x + b·y = gcd(a, b)`. */
export function egcd(a: bigint, b: bigint): ExtendedGcd {
  if (a < 0n || b < 0n) throw new RangeError('egcd takes non-negative integers');
  let [r0, r1] = [a, b];
  let [x0, x1] = [1n, 0n];
  let [y0, y1] = [0n, 1n];
  while (r1 !== 0n) {
    const quotient = r0 / r1;
    [r0, r1] = [r1, r0 - quotient * r1];
    [x0, x1] = [x1, x0 - quotient * x1];
    [y0, y1] = [y1, y0 - quotient * y1];
  }
  return { gcd: r0, x: x0, y: y0 };
}

/**
 * The inverse of `a` modulo `m` (m > 1), in [1, m). Throws RangeError when gcd(a, m) ≠ 1. Tracks a
 * single Bézout coefficient: half the big multiplications of {@link egcd}, which matters at 4096-bit
 * primes.
 */
export function modInverse(a: bigint, m: bigint): bigint {
  if (m <= 1n) throw new RangeError('modInverse needs a modulus greater than 1');
  let [r0, r1] = [m, ((a % m) + m) % m];
  let [t0, t1] = [0n, 1n];
  while (r1 !== 0n) {
    const quotient = r0 / r1;
    [r0, r1] = [r1, r0 - quotient * r1];
    [t0, t1] = [t1, t0 - quotient * t1];
  }
  if (r0 !== 1n) throw new RangeError('modInverse: the value is not invertible modulo m');
  return t0 < 0n ? t0 + m : t0;
}

/** Least common multiple of two positive integers. */
export function lcm(a: bigint, b: bigint): bigint {
  if (a <= 0n || b <= 0n) throw new RangeError('lcm takes positive integers');
  return (a / gcd(a, b)) * b;
}

/** Number of significant bits of a non-negative integer (0 for 0). */
export function bitLength(value: bigint): number {
  if (value < 0n) throw new RangeError('bitLength takes a non-negative integer');
  if (value === 0n) return 0;
  const hex = value.toString(16);
  return (hex.length - 1) * 4 + Number.parseInt(hex[0] as string, 16).toString(2).length;
}

/** Unsigned big-endian bytes without leading zero octets (one zero octet for 0). */
export function bigintToBytes(value: bigint): Buffer {
  if (value < 0n) throw new RangeError('bigintToBytes takes a non-negative integer');
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
}

/** JWK integer encoding (RFC 7518 6.3.1/6.3.2): base64url, big-endian, no leading zero octets. */
export function bigintToBase64url(value: bigint): string {
  return bigintToBytes(value).toString('base64url');
}

/** Inverse of {@link bigintToBase64url} (accepts leading zero octets; the empty string is 0). */
export function bigintFromBase64url(text: string): bigint {
  const hex = Buffer.from(text, 'base64url').toString('hex');
  return hex === '' ? 0n : BigInt(`0x${hex}`);
}
