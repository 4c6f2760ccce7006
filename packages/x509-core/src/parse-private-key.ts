/**
 * Private key parsing, certificate matching and re-encoding with CFSSL's rules
 * (`helpers.ParsePrivateKeyPEM`, `derhelpers.ParsePrivateKeyDER`, `bundler.Bundle`; behaviour doc
 * 2.2, 2.3, 2.9 and 3.3). The key bytes are handed to Node's native `createPrivateKey` (OpenSSL):
 * it is fast, constant-time where it matters, and the resulting KeyObject is what signers use.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { Certificate, PublicKeyInfo } from './certificate-model.js';
import { DerReader } from './der-reader.js';
import {
  DerDecodeError,
  EncryptedPrivateKeyError,
  KeyMismatchError,
  PrivateKeyDecodeError,
  PrivateKeyParseError,
  UnsupportedKeyAlgorithmError,
  isCodedError,
} from './errors.js';
import { decodePemBlock, encodePem } from './pem.js';
import type { PemBlock } from './pem.js';
import { readPrivateKeyStructure } from './private-key-structure.js';
import type { PrivateKeyStructure } from './private-key-structure.js';
import { ecPublicKeyCoordinates, readPublicKeyInfo, rsaPublicKeyComponents } from './public-key-info.js';

/** Key algorithms CFSSL accepts for private keys (2200 `Private key algorithm is not RSA or ECC or Ed25519` otherwise). */
export type PrivateKeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519';

/** The DER container a private key was found in. */
export type PrivateKeyFormat = 'pkcs8' | 'pkcs1' | 'sec1';

/** A parsed private key. */
export interface ParsedPrivateKey {
  /** Node KeyObject of the private key (use it to sign). */
  keyObject: KeyObject;
  algorithm: PrivateKeyAlgorithm;
  /** Container the DER was parsed from (the order tried is PKCS#8, PKCS#1, SEC 1, as CFSSL does). */
  format: PrivateKeyFormat;
  /** The matching public key's facts (bits, curve, SPKI), parsed like a certificate's. */
  publicKey: PublicKeyInfo;
}

/**
 * The first PEM block that is not `EC PARAMETERS` (openssl writes those before SEC 1 keys by
 * default; Go's `GetKeyDERFromPEM` skips them), or `null`.
 */
function firstKeyBlock(pem: string): PemBlock | null {
  let from = 0;
  for (;;) {
    const match = decodePemBlock(pem, from);
    if (match === null) return null;
    if (match.block.type !== 'EC PARAMETERS') return match.block;
    from = match.end;
  }
}

/** Node's key type for each algorithm the structure check accepts. */
const NODE_KEY_TYPES: Readonly<Record<PrivateKeyAlgorithm, string>> = { RSA: 'rsa', ECDSA: 'ec', Ed25519: 'ed25519' };

/**
 * Parse DER as PKCS#8 (covers RFC 8410 Ed25519 keys), then PKCS#1, then SEC 1 — the order of
 * CFSSL's `ParsePrivateKeyDER`. Only RSA, ECDSA on Go's curves and Ed25519 are accepted; anything
 * else (DSA, X25519, a certificate pasted as a key…) is 2003. The structure is checked the way Go
 * checks it (strict DER, curve order, RSA consistency; `private-key-structure.ts`) before OpenSSL
 * sees the bytes.
 */
export function parsePrivateKeyDer(der: Uint8Array): ParsedPrivateKey {
  let structure: PrivateKeyStructure;
  try {
    structure = readPrivateKeyStructure(der);
  } catch (error) {
    if (error instanceof DerDecodeError) throw new PrivateKeyParseError(undefined, { cause: error });
    throw error;
  }
  const { format, algorithm } = structure;
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey({ key: Buffer.from(der.buffer, der.byteOffset, der.byteLength), format: 'der', type: format });
  } catch (cause) {
    throw new PrivateKeyParseError(undefined, { cause });
  }
  // The curve comes from the checked structure, not from asymmetricKeyDetails: see private-key-structure.ts.
  if (keyObject.asymmetricKeyType !== NODE_KEY_TYPES[algorithm]) throw new PrivateKeyParseError();
  let publicKey: PublicKeyInfo;
  try {
    const spki = new Uint8Array(createPublicKey(keyObject).export({ type: 'spki', format: 'der' }));
    const reader = new DerReader(spki);
    publicKey = readPublicKeyInfo(spki, reader.expect(0x30, 'SubjectPublicKeyInfo'), reader);
  } catch (error) {
    if (error instanceof DerDecodeError || !isCodedError(error)) throw new PrivateKeyParseError(undefined, { cause: error });
    throw error;
  }
  return { keyObject, algorithm, format, publicKey };
}

/**
 * Parse a PEM private key the way CFSSL's bundler does (behaviour doc 2.2 step 1): leading
 * `EC PARAMETERS` blocks are skipped; no PEM block → 2002; a `Proc-Type: …ENCRYPTED` header
 * (traditional OpenSSL encryption) or the PKCS#8 `ENCRYPTED PRIVATE KEY` label → 2100 (CFSSL
 * itself reports the latter as 2003; 2100 says what is actually wrong); DER that is not an RSA,
 * ECDSA or Ed25519 key in PKCS#8, PKCS#1, SEC 1 or RFC 8410 form → 2003. The PEM label is not
 * otherwise checked.
 *
 * @throws PrivateKeyDecodeError (2002), EncryptedPrivateKeyError (2100), PrivateKeyParseError (2003)
 */
export function parsePrivateKey(pem: string): ParsedPrivateKey {
  const block = firstKeyBlock(pem);
  if (block === null) throw new PrivateKeyDecodeError();
  if ((block.headers['Proc-Type'] ?? '').includes('ENCRYPTED') || block.type === 'ENCRYPTED PRIVATE KEY') {
    throw new EncryptedPrivateKeyError();
  }
  return parsePrivateKeyDer(block.bytes);
}

/** Compare unsigned big-endian integers, ignoring leading zero octets. */
function sameUnsigned(a: Uint8Array, b: Uint8Array): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && a[i] === 0) i++;
  while (j < b.length && b[j] === 0) j++;
  if (a.length - i !== b.length - j) return false;
  for (; i < a.length; i++, j++) if (a[i] !== b[j]) return false;
  return true;
}

/**
 * CFSSL's key check for the leaf (`bundler.Bundle`, behaviour doc 2.3). A leaf whose key is not
 * RSA, ECDSA or Ed25519 → 2200, with or without a key. With a key: RSA needs an RSA key with the
 * same modulus; ECDSA an ECDSA key with the same X coordinate (Y and curve are not compared, as in
 * CFSSL); Ed25519 the same 32 public bytes. Any mismatch, including of type → 2300.
 *
 * @param key the parsed private key, or `null` when the request has none (only the 2200 check runs)
 * @throws UnsupportedKeyAlgorithmError (2200), KeyMismatchError (2300)
 */
export function assertKeyMatchesCertificate(key: ParsedPrivateKey | null, cert: Certificate): void {
  const leafKey = cert.publicKey;
  if (leafKey.algorithm !== 'RSA' && leafKey.algorithm !== 'ECDSA' && leafKey.algorithm !== 'Ed25519') {
    throw new UnsupportedKeyAlgorithmError();
  }
  if (key === null) return;
  if (key.algorithm !== leafKey.algorithm) throw new KeyMismatchError();
  let matches: boolean;
  try {
    switch (leafKey.algorithm) {
      case 'RSA':
        matches = sameUnsigned(rsaPublicKeyComponents(leafKey)!.modulus, rsaPublicKeyComponents(key.publicKey)!.modulus);
        break;
      case 'ECDSA':
        matches = sameUnsigned(ecPublicKeyCoordinates(leafKey)!.x, ecPublicKeyCoordinates(key.publicKey)!.x);
        break;
      case 'Ed25519':
        matches = Buffer.compare(Buffer.from(leafKey.subjectPublicKey), Buffer.from(key.publicKey.subjectPublicKey)) === 0;
        break;
    }
  } catch (error) {
    if (error instanceof DerDecodeError) throw new KeyMismatchError(undefined, { cause: error });
    throw error;
  }
  if (!matches) throw new KeyMismatchError();
}

/**
 * CFSSL's re-encoding of a private key for the bundle `key` field (behaviour doc 2.9) and for
 * generated keys (3.3): RSA → PKCS#1 `RSA PRIVATE KEY`; ECDSA → SEC 1 `EC PRIVATE KEY` (with the
 * curve OID and public key, as Go's `MarshalECPrivateKey`); Ed25519 → RFC 8410 PKCS#8 DER under the
 * label `Ed25519 PRIVATE KEY`. Returned trimmed (no trailing newline), as CFSSL's JSON has it.
 */
export function encodePrivateKeyCfssl(key: ParsedPrivateKey | KeyObject): string {
  const keyObject = 'keyObject' in key ? key.keyObject : key;
  switch (keyObject.asymmetricKeyType) {
    case 'rsa':
      return (keyObject.export({ type: 'pkcs1', format: 'pem' }) as string).trim();
    case 'ec':
      return (keyObject.export({ type: 'sec1', format: 'pem' }) as string).trim();
    case 'ed25519':
      return encodePem('Ed25519 PRIVATE KEY', keyObject.export({ type: 'pkcs8', format: 'der' })).trim();
    default:
      throw new UnsupportedKeyAlgorithmError();
  }
}
