/**
 * The structure of a private key DER, checked the way Go's `x509.ParsePKCS8PrivateKey`,
 * `ParsePKCS1PrivateKey` and `ParseECPrivateKey` check it (what CFSSL accepts), before any byte
 * reaches OpenSSL. Why before: OpenSSL decodes BER and keys Go refuses, and some of what it builds
 * from them is not a usable key — a SEC 1 key whose private scalar is a constructed OCTET STRING
 * longer than the curve made Node's `asymmetricKeyDetails` hit a native assertion and abort the
 * whole process (found by tools/fuzz). Strict DER and Go's value checks keep such keys out.
 */
import { DerReader, readBitString, readIntegerBytes, readOctetString, readOid, readSmallInteger } from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { DerDecodeError } from './errors.js';
import { Oid } from './oids.js';

/** The container and algorithm found, and the curve of an EC key. */
export interface PrivateKeyStructure {
  format: 'pkcs8' | 'pkcs1' | 'sec1';
  algorithm: 'RSA' | 'ECDSA' | 'Ed25519';
  /** Go's curve name (`P-256`…) for ECDSA keys, else `null`. */
  curve: string | null;
}

/** Largest RSA modulus accepted (Go 1.24 refuses larger keys too); bounds the consistency check's work. */
export const MAX_RSA_MODULUS_BITS = 16384;

/** Curves Go's ECDSA supports: OID → name and group order (SEC 2). */
const CURVES: ReadonlyMap<string, { name: string; order: bigint }> = new Map([
  [Oid.secp224r1, { name: 'P-224', order: 0xffffffffffffffffffffffffffff16a2e0b8f03e13dd29455c5c2a3dn }],
  [Oid.prime256v1, { name: 'P-256', order: 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n }],
  [Oid.secp384r1, { name: 'P-384', order: 0xffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973n }],
  [
    Oid.secp521r1,
    { name: 'P-521', order: 0x01fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409n },
  ],
]);

function toBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`);
}

/** A positive INTEGER's value (Go: "x509: private key contains zero or negative value"). */
function positiveInteger(bytes: Uint8Array, element: DerElement, what: string): bigint {
  const content = readIntegerBytes(bytes, element);
  const value = toBigInt(content);
  if ((content[0]! & 0x80) !== 0 || value === 0n) throw new DerDecodeError(`RSA ${what} is zero or negative`, element.start);
  return value;
}

function mod(value: bigint, modulus: bigint): bigint {
  const rest = value % modulus;
  return rest < 0n ? rest + modulus : rest;
}

/**
 * RSAPrivateKey (RFC 8017 A.1.2) in `bytes[start, end)`: version 0 or 1 (multi-prime), positive
 * components, and what Go's `rsa.PrivateKey.Validate` checks: the primes multiply to the modulus
 * and d·e ≡ 1 mod (prime − 1) for each prime.
 */
function checkRsaPrivateKey(bytes: Uint8Array, start: number, end: number): void {
  const top = new DerReader(bytes, start, end);
  const key = top.sequence('RSAPrivateKey');
  top.finish('RSAPrivateKey');
  const version = readSmallInteger(bytes, key.expect(0x02, 'version'));
  if (version !== 0 && version !== 1) throw new DerDecodeError(`unsupported RSA private key version ${version}`, start);
  const modulusElement = key.expect(0x02, 'modulus');
  // Checked on the encoding before any arithmetic: a hostile modulus may be megabytes long.
  if ((modulusElement.end - modulusElement.valueStart - 1) * 8 > MAX_RSA_MODULUS_BITS) {
    throw new DerDecodeError(`RSA modulus over ${MAX_RSA_MODULUS_BITS} bits`, start);
  }
  const modulus = positiveInteger(bytes, modulusElement, 'modulus');
  if (modulus.toString(2).length > MAX_RSA_MODULUS_BITS) throw new DerDecodeError(`RSA modulus over ${MAX_RSA_MODULUS_BITS} bits`, start);
  const publicExponent = positiveInteger(bytes, key.expect(0x02, 'publicExponent'), 'publicExponent');
  const privateExponent = positiveInteger(bytes, key.expect(0x02, 'privateExponent'), 'privateExponent');
  const primes = [positiveInteger(bytes, key.expect(0x02, 'prime1'), 'prime1'), positiveInteger(bytes, key.expect(0x02, 'prime2'), 'prime2')];
  for (const what of ['exponent1', 'exponent2', 'coefficient']) readIntegerBytes(bytes, key.expect(0x02, what));
  if (key.hasMore()) {
    if (version !== 1) throw new DerDecodeError('otherPrimeInfos in a version 0 RSA private key', start);
    const others = key.sequence('OtherPrimeInfos');
    while (others.hasMore()) {
      const info = others.sequence('OtherPrimeInfo');
      primes.push(positiveInteger(bytes, info.expect(0x02, 'prime'), 'prime'));
      readIntegerBytes(bytes, info.expect(0x02, 'exponent'));
      readIntegerBytes(bytes, info.expect(0x02, 'coefficient'));
      info.finish('OtherPrimeInfo');
    }
  }
  key.finish('RSAPrivateKey');
  let product = 1n;
  for (const prime of primes) {
    if (prime <= 1n) throw new DerDecodeError('RSA prime is not above 1', start);
    product *= prime;
  }
  if (product !== modulus) throw new DerDecodeError('RSA primes do not multiply to the modulus', start);
  for (const prime of primes) {
    if (mod(privateExponent * publicExponent, prime - 1n) !== 1n) throw new DerDecodeError('RSA private exponent does not match the public exponent', start);
  }
}

/**
 * ECPrivateKey (RFC 5915) in `bytes[start, end)`: version 1, a named curve Go supports (from the
 * key's own [0] parameters or, inside PKCS#8, from the algorithm's), a private scalar no longer
 * than the curve's order and in 1…order−1, an optional [1] public key BIT STRING.
 */
function checkEcPrivateKey(bytes: Uint8Array, start: number, end: number, curveOid: string | null): string {
  const top = new DerReader(bytes, start, end);
  const key = top.sequence('ECPrivateKey');
  top.finish('ECPrivateKey');
  if (readSmallInteger(bytes, key.expect(0x02, 'version')) !== 1) throw new DerDecodeError('unknown EC private key version', start);
  const scalar = readOctetString(bytes, key.expect(0x04, 'privateKey'));
  const parameters = key.optional(0xa0);
  let oid = curveOid;
  if (parameters !== null) {
    const inner = key.enter(parameters);
    const own = readOid(bytes, inner.expect(0x06, 'namedCurve'));
    inner.finish('ECParameters');
    oid ??= own;
  }
  const publicKey = key.optional(0xa1);
  if (publicKey !== null) {
    const inner = key.enter(publicKey);
    readBitString(bytes, inner.expect(0x03, 'publicKey'));
    inner.finish('publicKey');
  }
  key.finish('ECPrivateKey');
  const curve = oid === null ? undefined : CURVES.get(oid);
  if (curve === undefined) throw new DerDecodeError(`unknown elliptic curve ${oid ?? '(none given)'}`, start);
  if (scalar.length > Math.ceil(curve.order.toString(2).length / 8)) throw new DerDecodeError('invalid EC private key length', start);
  const value = toBigInt(scalar);
  if (value === 0n || value >= curve.order) throw new DerDecodeError('invalid elliptic curve private key value', start);
  return curve.name;
}

/** PrivateKeyInfo / OneAsymmetricKey (RFC 5208, RFC 5958) holding an RSA, EC or Ed25519 key. */
function checkPkcs8(bytes: Uint8Array): PrivateKeyStructure {
  const top = new DerReader(bytes);
  const info = top.sequence('PrivateKeyInfo');
  top.finish('PrivateKeyInfo');
  const version = readSmallInteger(bytes, info.expect(0x02, 'version'));
  if (version !== 0 && version !== 1) throw new DerDecodeError(`unsupported PKCS #8 version ${version}`, 0);
  const algorithm = info.sequence('privateKeyAlgorithm');
  const oid = readOid(bytes, algorithm.expect(0x06, 'algorithm'));
  const parameters = algorithm.hasMore() ? algorithm.read() : null;
  algorithm.finish('privateKeyAlgorithm');
  const privateKey = info.expect(0x04, 'privateKey');
  info.optional(0xa0); // attributes
  info.optional(0x81); // publicKey (v2)
  info.finish('PrivateKeyInfo');
  switch (oid) {
    case Oid.rsaEncryption:
      if (parameters !== null && !(parameters.tag === 0x05 && parameters.end === parameters.valueStart)) throw new DerDecodeError('RSA parameters must be NULL', 0);
      checkRsaPrivateKey(bytes, privateKey.valueStart, privateKey.end);
      return { format: 'pkcs8', algorithm: 'RSA', curve: null };
    case Oid.ecPublicKey: {
      if (parameters === null || parameters.tag !== 0x06) throw new DerDecodeError('EC key without a named curve', 0);
      const curve = checkEcPrivateKey(bytes, privateKey.valueStart, privateKey.end, readOid(bytes, parameters));
      return { format: 'pkcs8', algorithm: 'ECDSA', curve };
    }
    case Oid.ed25519: {
      // RFC 8410 7: no parameters; the key is an OCTET STRING of 32 octets inside the OCTET STRING.
      if (parameters !== null) throw new DerDecodeError('Ed25519 key with parameters', 0);
      const inner = new DerReader(bytes, privateKey.valueStart, privateKey.end);
      const seed = readOctetString(bytes, inner.expect(0x04, 'CurvePrivateKey'));
      inner.finish('CurvePrivateKey');
      if (seed.length !== 32) throw new DerDecodeError(`Ed25519 private key of ${seed.length} octets`, 0);
      return { format: 'pkcs8', algorithm: 'Ed25519', curve: null };
    }
    default:
      throw new DerDecodeError(`unsupported private key algorithm ${oid}`, 0);
  }
}

/**
 * Which container `der` is — PKCS#8, then PKCS#1, then SEC 1, CFSSL's order — with the checks Go
 * makes on each. Throws {@link DerDecodeError} (with the PKCS#8 reason) when none fits.
 */
export function readPrivateKeyStructure(der: Uint8Array): PrivateKeyStructure {
  let firstError: unknown;
  try {
    return checkPkcs8(der);
  } catch (error) {
    if (!(error instanceof DerDecodeError)) throw error;
    firstError = error;
  }
  try {
    checkRsaPrivateKey(der, 0, der.length);
    return { format: 'pkcs1', algorithm: 'RSA', curve: null };
  } catch (error) {
    if (!(error instanceof DerDecodeError)) throw error;
  }
  try {
    return { format: 'sec1', algorithm: 'ECDSA', curve: checkEcPrivateKey(der, 0, der.length, null) };
  } catch (error) {
    if (!(error instanceof DerDecodeError)) throw error;
  }
  throw firstError;
}
