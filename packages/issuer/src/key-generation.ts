/**
 * Key generation for newcert/newkey (behaviour doc 3.3), asynchronous so the event loop (or worker)
 * never blocks on RSA prime search. RSA keys are built from two concurrent `generatePrime` searches
 * ({@link generateRsaKeyFromPrimes}: less CPU per key than OpenSSL 3's FIPS 186-4 B.3.6 key
 * generation, see docs/performance.md#rsa-keys-from-two-concurrent-prime-searches);
 * `{ rsa: 'openssl' }` selects `generateKeyPair` instead, for comparison.
 * Limits and texts are CFSSL's (`csr.KeyRequest.Generate`), all code 2400.
 */
import { createPrivateKey, createPublicKey, generateKeyPair, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

import { loadNativeEc, nativeEcUnavailableReason } from '@certsmith/native-ec';
import type { NativeEcDigest, NativeEcKey } from '@certsmith/native-ec';
import type { SignatureAlgorithm } from '@certsmith/signer-api';

import { derBitString, derExplicit, derInteger, derNull, derOctetString, derOid, derSequence, encodePem, readElement } from '@certsmith/x509-core';

import type { KeyRequest } from './certificate-request.js';
import { DEFAULT_KEY_REQUEST } from './certificate-request.js';
import { KeyGenerationError } from './errors.js';
import { generateRsaKeyFromPrimes } from './rsa-key-from-primes.js';

/*
 * Why every key pair comes with its generation job, kept alive as long as the pair is used: in
 * Node 20, a key pair made by `generateKeyPair(Sync)` shares a mutex with its `KeyGenJob`, whose
 * destructor takes that mutex. `KeyObject.export({ format: 'jwk' })` holds the mutex while it
 * allocates; if that allocation triggers a GC which finalizes the (already unreachable) job, the
 * thread waits on a mutex it holds itself, forever, with no CPU. Caught with gdb in a stuck worker
 * (`~KeyGenJob` → `uv_mutex_lock` under `ExportJWKEcKey`), and reproduced standalone by looping
 * `generateKeyPairSync('ec') + export({ format: 'jwk' }) + sign` (stuck after ≈0.5 s). The
 * asynchronous `generateKeyPair` calls back with the job as `this`: holding it until the pair is
 * dropped means the job can only be finalized together with its keys, never during their use.
 */
const GENERATION_JOB = Symbol('generation job');

/** `generateKeyPair` resolving with the pair and its job (see above). */
function generateKeyPairWithJob(type: 'rsa' | 'ec' | 'ed25519', options: object | undefined): Promise<KeyPairWithJob> {
  return new Promise((resolve, reject) => {
    const callback = function (this: unknown, error: Error | null, publicKey: KeyObject, privateKey: KeyObject): void {
      if (error) reject(error);
      else resolve({ publicKey, privateKey, job: this });
    };
    (generateKeyPair as unknown as (type: string, options: object, callback: (this: unknown, error: Error | null, publicKey: KeyObject, privateKey: KeyObject) => void) => void)(
      type,
      options ?? {},
      callback,
    );
  });
}

interface KeyPairWithJob {
  publicKey: KeyObject;
  privateKey: KeyObject;
  job: unknown;
}

/** A validated key request. */
export type KeySpec =
  | { algorithm: 'RSA'; bits: number }
  | { algorithm: 'ECDSA'; curve: 'P-256' | 'P-384' | 'P-521'; bits: 256 | 384 | 521 }
  | { algorithm: 'Ed25519' };

/** A freshly generated key pair. */
export interface GeneratedKey {
  readonly spec: KeySpec;
  /** The private key for node:crypto (made on first use for keys held by the native addon). */
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  /** SubjectPublicKeyInfo DER. */
  readonly spki: Uint8Array;
  /** Private key PEM in CFSSL's format (PKCS#1, SEC1, or PKCS#8 under `Ed25519 PRIVATE KEY`). */
  readonly privateKeyPem: string;
  /**
   * Sign with this key, for keys that sign for themselves (held by the native addon); other keys
   * are signed with through `privateKey`.
   */
  sign?(data: Uint8Array, algorithm: SignatureAlgorithm): Uint8Array;
  /** Free key material held outside the JavaScript heap now that the key has served (native keys). */
  release?(): void;
}

const CURVES = { 256: 'P-256', 384: 'P-384', 521: 'P-521' } as const;

/**
 * Validate a key request with CFSSL's rules: `rsa` 2048–8192 bits (`RSA key is too weak`, `RSA key
 * size too large`), `ecdsa` 256/384/521 (`invalid curve`), `ed25519` (size ignored), anything else
 * — including `RSA` in upper case — `invalid algorithm`. Missing members take the default
 * (`ecdsa`/256) one by one, as Go's merge does.
 */
export function resolveKeySpec(request: Partial<KeyRequest> | null | undefined): KeySpec {
  const algo = request?.algo ?? DEFAULT_KEY_REQUEST.algo;
  const size = request?.size ?? DEFAULT_KEY_REQUEST.size;
  switch (algo) {
    case 'rsa':
      if (size < 2048) throw new KeyGenerationError('RSA key is too weak');
      if (size > 8192) throw new KeyGenerationError('RSA key size too large');
      return { algorithm: 'RSA', bits: size };
    case 'ecdsa': {
      const curve = CURVES[size as keyof typeof CURVES];
      if (curve === undefined) throw new KeyGenerationError('invalid curve');
      return { algorithm: 'ECDSA', curve, bits: size as 256 | 384 | 521 };
    }
    case 'ed25519':
      return { algorithm: 'Ed25519' };
    default:
      throw new KeyGenerationError('invalid algorithm');
  }
}

const CURVE_OIDS = { 'P-256': '1.2.840.10045.3.1.7', 'P-384': '1.3.132.0.34', 'P-521': '1.3.132.0.35' } as const;
const EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
const ED25519 = '1.3.101.112';

/*
 * Why keys are encoded from their JWK form: with OpenSSL 3, node:crypto's `export` to SPKI/PKCS#8
 * DER costs more than generating a P-256 key, the JWK export little, and it carries every component
 * (see docs/performance.md#keys-encoded-from-their-jwk-form). So the DER is assembled here with the
 * lean writer, byte-identical to OpenSSL's and Go's encodings (checked by the tests).
 */

function base64url(value: string | undefined): Uint8Array {
  if (value === undefined) throw new KeyGenerationError('key export is missing a component');
  const buffer = Buffer.from(value, 'base64url');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

interface Jwk {
  kty?: string;
  crv?: string;
  x?: string;
  y?: string;
  d?: string;
  n?: string;
  e?: string;
  p?: string;
  q?: string;
  dp?: string;
  dq?: string;
  qi?: string;
}

/** SubjectPublicKeyInfo DER (RFC 5280 4.1.2.7, RFC 5480, RFC 8410) from a public or private JWK. */
export function spkiFromJwk(spec: KeySpec, jwk: Jwk): Uint8Array {
  switch (spec.algorithm) {
    case 'ECDSA': {
      const point = new Uint8Array([0x04, ...base64url(jwk.x), ...base64url(jwk.y)]);
      return derSequence(derSequence(derOid(EC_PUBLIC_KEY), derOid(CURVE_OIDS[spec.curve])), derBitString(point));
    }
    case 'RSA':
      return derSequence(
        derSequence(derOid(RSA_ENCRYPTION), derNull()),
        derBitString(derSequence(derInteger(base64url(jwk.n)), derInteger(base64url(jwk.e)))),
      );
    case 'Ed25519':
      return derSequence(derSequence(derOid(ED25519)), derBitString(base64url(jwk.x)));
  }
}

/**
 * Private key PEM as CFSSL writes it (behaviour doc 3.3): RSA PKCS#1 `RSA PRIVATE KEY`; ECDSA SEC 1
 * `EC PRIVATE KEY` with the curve OID and public key (Go's `MarshalECPrivateKey`); Ed25519 RFC 8410
 * PKCS#8 under the label `Ed25519 PRIVATE KEY`.
 */
export function privateKeyPemFromJwk(spec: KeySpec, jwk: Jwk): string {
  switch (spec.algorithm) {
    case 'ECDSA': {
      // The scalar is fixed-length (JWK requires full length, Go pads to the curve size).
      const point = new Uint8Array([0x04, ...base64url(jwk.x), ...base64url(jwk.y)]);
      const der = derSequence(
        derInteger(1),
        derOctetString(base64url(jwk.d)),
        derExplicit(0, derOid(CURVE_OIDS[spec.curve])),
        derExplicit(1, derBitString(point)),
      );
      return encodePem('EC PRIVATE KEY', der);
    }
    case 'RSA': {
      const der = derSequence(
        derInteger(0),
        ...[jwk.n, jwk.e, jwk.d, jwk.p, jwk.q, jwk.dp, jwk.dq, jwk.qi].map((component) => derInteger(base64url(component))),
      );
      return encodePem('RSA PRIVATE KEY', der);
    }
    case 'Ed25519': {
      const der = derSequence(derInteger(0), derSequence(derOid(ED25519)), derOctetString(derOctetString(base64url(jwk.d))));
      return encodePem('Ed25519 PRIVATE KEY', der);
    }
  }
}

/** Private key PEM as CFSSL writes it, from a node:crypto key (see {@link privateKeyPemFromJwk}). */
export function exportPrivateKeyPem(spec: KeySpec, privateKey: KeyObject): string {
  return privateKeyPemFromJwk(spec, privateKey.export({ format: 'jwk' }) as Jwk);
}

/**
 * How RSA keys are generated: `primes` (default) builds them from two `generatePrime` searches with
 * the FIPS 186-4 B.3.1 checks ({@link generateRsaKeyFromPrimes}); `openssl` uses OpenSSL's own
 * `generateKeyPair('rsa')` (FIPS 186-4 B.3.6 primes with auxiliary primes, more CPU per key; an odd
 * size gives a modulus one bit short), kept for comparison and benchmarks.
 */
export type RsaKeyGenerationMethod = 'primes' | 'openssl';

/** Options of {@link generateKey} and {@link generateKeyInThread}. */
export interface GenerateKeyOptions {
  /** RSA generation method (default `primes`). */
  rsa?: RsaKeyGenerationMethod;
}

/** Generate a key pair for a validated spec (asynchronous; never blocks the calling thread on prime search). */
export async function generateKey(spec: KeySpec, options: GenerateKeyOptions = {}): Promise<GeneratedKey> {
  if (spec.algorithm === 'RSA' && options.rsa !== 'openssl') return generateRsaKey(spec);
  if (spec.algorithm === 'ECDSA') return generateEcKey(spec);
  let pair: KeyPairWithJob;
  try {
    switch (spec.algorithm) {
      case 'RSA':
        pair = await generateKeyPairWithJob('rsa', { modulusLength: spec.bits, publicExponent: 0x10001 });
        break;
      case 'Ed25519':
        pair = await generateKeyPairWithJob('ed25519', undefined);
        break;
    }
  } catch (cause) {
    throw new KeyGenerationError(cause instanceof Error ? cause.message : String(cause), { cause });
  }
  return completeKey(spec, pair);
}

/*
 * Why ECDSA keys are made synchronously and read from their SEC 1 DER: an ECDSA key costs less CPU
 * than the round trip through libuv's thread pool that `generateKeyPair` takes (see
 * docs/performance.md#ecdsa-keys-made-synchronously). The deadlock described at GENERATION_JOB needs the key's mutex
 * held while V8 allocates; the JWK export does that, but the SEC 1 DER export does not (OpenSSL
 * writes into a memory BIO, and the Buffer is made after; Node 20's `WritePrivateKey`), and neither
 * does `crypto.sign` (its output is copied after the signature is made). So the generation job may
 * be finalized at any time without harm. A regression test runs tens of thousands of generate +
 * export + sign rounds in a child process. Nothing may call `export({ format: 'jwk' })` or
 * `asymmetricKeyDetails` on these keys.
 *
 * OpenSSL's SEC 1 encoding (`ECPrivateKey` with the named curve and the public key, the scalar
 * padded to the order's length) is byte-identical to Go's `x509.MarshalECPrivateKey`, which CFSSL
 * writes: it is used as is.
 */
function generateEcKey(spec: Extract<KeySpec, { algorithm: 'ECDSA' }>): GeneratedKey {
  const native = loadNativeEc();
  if (native !== null) {
    try {
      return new NativeGeneratedKey(spec, native.generateKey(spec.curve));
    } catch (cause) {
      throw new KeyGenerationError(cause instanceof Error ? cause.message : String(cause), { cause });
    }
  }
  let pair: { privateKey: KeyObject; publicKey: KeyObject };
  let sec1: Buffer;
  try {
    pair = generateKeyPairSync('ec', { namedCurve: spec.curve });
    sec1 = pair.privateKey.export({ format: 'der', type: 'sec1' });
  } catch (cause) {
    throw new KeyGenerationError(cause instanceof Error ? cause.message : String(cause), { cause });
  }
  const der = new Uint8Array(sec1.buffer, sec1.byteOffset, sec1.byteLength);
  return { spec, privateKey: pair.privateKey, publicKey: pair.publicKey, spki: ecSpkiFromSec1(spec, der), privateKeyPem: encodePem('EC PRIVATE KEY', der) };
}

/** The digest of each ECDSA signature algorithm a native key signs with. */
const NATIVE_DIGESTS: Partial<Record<SignatureAlgorithm, NativeEcDigest>> = {
  'ECDSA-SHA256': 'sha256',
  'ECDSA-SHA384': 'sha384',
  'ECDSA-SHA512': 'sha512',
};

/**
 * An ECDSA key made by the native addon (`@certsmith/native-ec`), cheaper than node:crypto's for the
 * key and the CSR signature (see docs/performance.md#the-native-ecdsa-addon). It signs for itself; the
 * node:crypto `KeyObject`s are made only if someone asks for them. A class, so that every key
 * shares one hidden class.
 */
class NativeGeneratedKey implements GeneratedKey {
  readonly spki: Uint8Array;
  readonly privateKeyPem: string;
  private keyObject: KeyObject | undefined = undefined;

  constructor(
    readonly spec: Extract<KeySpec, { algorithm: 'ECDSA' }>,
    private readonly native: NativeEcKey,
  ) {
    this.spki = ecSpkiFromSec1(spec, native.sec1);
    this.privateKeyPem = encodePem('EC PRIVATE KEY', native.sec1);
  }

  get privateKey(): KeyObject {
    this.keyObject ??= createPrivateKey({ key: Buffer.from(this.native.sec1), format: 'der', type: 'sec1' });
    return this.keyObject;
  }

  get publicKey(): KeyObject {
    return createPublicKey(this.privateKey);
  }

  sign(data: Uint8Array, algorithm: SignatureAlgorithm): Uint8Array {
    const digest = NATIVE_DIGESTS[algorithm];
    if (digest === undefined) throw new KeyGenerationError(`an ECDSA key cannot sign with ${algorithm}`);
    return this.native.sign(digest, data);
  }

  release(): void {
    this.native.dispose();
  }
}

/** How this thread makes ECDSA keys: the native addon, or node:crypto (with the reason). */
export function ecdsaKeyBackend(): { backend: 'native' | 'node:crypto'; openssl: string; reason?: string } {
  const native = loadNativeEc();
  if (native !== null) return { backend: 'native', openssl: native.openssl };
  return { backend: 'node:crypto', openssl: process.versions.openssl, reason: nativeEcUnavailableReason() ?? 'unknown' };
}

/**
 * SubjectPublicKeyInfo of an ECDSA key from its SEC 1 `ECPrivateKey` DER (RFC 5915): the `[1]`
 * public key BIT STRING, after `version`, `privateKey` and `[0] parameters`.
 */
export function ecSpkiFromSec1(spec: Extract<KeySpec, { algorithm: 'ECDSA' }>, sec1: Uint8Array): Uint8Array {
  const outer = readElement(sec1, 0);
  let element = readElement(sec1, outer.valueStart, outer.end);
  while (element.tag !== 0xa1) {
    if (element.end >= outer.end) throw new KeyGenerationError('key export is missing a component');
    element = readElement(sec1, element.end, outer.end);
  }
  const publicKey = readElement(sec1, element.valueStart, element.end);
  if (publicKey.tag !== 0x03 || sec1[publicKey.valueStart] !== 0) throw new KeyGenerationError('key export is missing a component');
  return derSequence(derSequence(derOid(EC_PUBLIC_KEY), derOid(CURVE_OIDS[spec.curve])), derBitString(sec1.subarray(publicKey.valueStart + 1, publicKey.end)));
}

/** RSA from primes: the generator already holds every component, so no JWK export is needed. */
async function generateRsaKey(spec: Extract<KeySpec, { algorithm: 'RSA' }>): Promise<GeneratedKey> {
  const { privateKey, publicKey, jwk } = await generateRsaKeyFromPrimes(spec.bits);
  return { spec, privateKey, publicKey, spki: spkiFromJwk(spec, jwk), privateKeyPem: privateKeyPemFromJwk(spec, jwk) };
}

function completeKey(spec: KeySpec, pair: KeyPairWithJob): GeneratedKey {
  // One JWK export serves both the SPKI and the private key PEM (see the note above).
  const jwk = pair.privateKey.export({ format: 'jwk' }) as Jwk;
  const generated: GeneratedKey = {
    spec,
    privateKey: pair.privateKey,
    publicKey: pair.publicKey,
    spki: spkiFromJwk(spec, jwk),
    privateKeyPem: privateKeyPemFromJwk(spec, jwk),
  };
  // Not enumerable: invisible to callers, dropped with the key (see GENERATION_JOB).
  Object.defineProperty(generated, GENERATION_JOB, { value: pair.job });
  return generated;
}

/**
 * {@link generateKey} for threads whose only job is the request at hand (worker threads); kept as a
 * name for callers. Same keys, same errors: ECDSA keys are made synchronously everywhere (see
 * `generateEcKey`), Ed25519 and OpenSSL RSA keys through `generateKeyPair` (see GENERATION_JOB).
 */
export async function generateKeyInThread(spec: KeySpec, options: GenerateKeyOptions = {}): Promise<GeneratedKey> {
  return generateKey(spec, options);
}
