/**
 * Signature verification with node:crypto (OpenSSL, native): RSA PKCS#1 v1.5, RSASSA-PSS with the
 * certificate's parameters, ECDSA (DER `Ecdsa-Sig-Value`, RFC 3279 2.2.3) and Ed25519 (RFC 8410).
 * Chain building calls this on its hot path, so nothing is cached here: callers that verify many
 * signatures with one issuer convert its key once with {@link publicKeyObject} and pass the KeyObject.
 */
import { constants, createPublicKey, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { HashAlgorithm, KeyAlgorithm, PublicKeyInfo, SignatureAlgorithmInfo } from './certificate-model.js';

/** Node/OpenSSL digest names. MD2 has none in OpenSSL 3, so MD2 signatures never verify. */
const NODE_HASH: Readonly<Partial<Record<HashAlgorithm, string>>> = {
  MD5: 'md5',
  SHA1: 'sha1',
  SHA224: 'sha224',
  SHA256: 'sha256',
  SHA384: 'sha384',
  SHA512: 'sha512',
};

/**
 * Node KeyObject of a SubjectPublicKeyInfo (any algorithm OpenSSL knows). Throws Node's error for
 * keys OpenSSL cannot load.
 */
export function publicKeyObject(publicKey: PublicKeyInfo): KeyObject {
  const spki = publicKey.spki;
  return createPublicKey({ key: Buffer.from(spki.buffer, spki.byteOffset, spki.byteLength), format: 'der', type: 'spki' });
}

/** Key family of a KeyObject in the model's terms. */
function keyFamily(key: KeyObject): KeyAlgorithm {
  switch (key.asymmetricKeyType) {
    case 'rsa':
    case 'rsa-pss':
      return 'RSA';
    case 'ec':
      return 'ECDSA';
    case 'ed25519':
      return 'Ed25519';
    case 'ed448':
      return 'Ed448';
    case 'dsa':
      return 'DSA';
    default:
      return 'Unknown';
  }
}

/**
 * True when `signatureAlgorithm` is one this module can verify (what Go's `CheckSignature`
 * implements): RSA PKCS#1 v1.5 with MD5/SHA-1/SHA-2, RSA-PSS with MGF1 using the same SHA-2 hash,
 * ECDSA with SHA-1/SHA-2, Ed25519. DSA, MD2, Ed448 and unknown OIDs are not (Go refuses them too).
 * Whether MD5/SHA-1 are *acceptable* is policy, decided by the caller.
 */
export function isSignatureAlgorithmSupported(signatureAlgorithm: SignatureAlgorithmInfo): boolean {
  const { keyAlgorithm, hash, pss } = signatureAlgorithm;
  if (keyAlgorithm === 'Ed25519') return signatureAlgorithm.name === 'Ed25519';
  if (hash === null || NODE_HASH[hash] === undefined) return false;
  if (pss) {
    const params = signatureAlgorithm.pssParameters;
    return params != null && params.mgf1Hash === params.hash && hash !== 'MD5';
  }
  return keyAlgorithm === 'RSA' || keyAlgorithm === 'ECDSA';
}

/**
 * Verify `signature` over `signed` (a certificate's or CSR's TBS bytes) with the issuer's key.
 * Returns `false` — never throws — when the signature is wrong or malformed, the algorithm is not
 * supported ({@link isSignatureAlgorithmSupported}), or the key's family does not match the
 * algorithm (an RSA signature is never checked with an EC key).
 *
 * @param issuerKey the signer's SPKI facts, or a KeyObject from {@link publicKeyObject} (faster when reused)
 */
export function verifySignature(
  signed: Uint8Array,
  signature: Uint8Array,
  signatureAlgorithm: SignatureAlgorithmInfo,
  issuerKey: PublicKeyInfo | KeyObject,
): boolean {
  if (!isSignatureAlgorithmSupported(signatureAlgorithm)) return false;
  let key: KeyObject;
  try {
    key = 'spki' in issuerKey ? publicKeyObject(issuerKey) : issuerKey;
  } catch {
    return false;
  }
  if (keyFamily(key) !== signatureAlgorithm.keyAlgorithm) return false;
  const data = Buffer.from(signed.buffer, signed.byteOffset, signed.byteLength);
  const sig = Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength);
  try {
    switch (signatureAlgorithm.keyAlgorithm) {
      case 'Ed25519':
        return verify(null, data, key, sig);
      case 'ECDSA':
        return verify(NODE_HASH[signatureAlgorithm.hash!]!, data, { key, dsaEncoding: 'der' }, sig);
      case 'RSA':
        if (signatureAlgorithm.pss) {
          // RFC 4055 3.1: salt length and hash come from the AlgorithmIdentifier, not defaults.
          return verify(
            NODE_HASH[signatureAlgorithm.hash!]!,
            data,
            { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: signatureAlgorithm.pssParameters!.saltLength },
            sig,
          );
        }
        return verify(NODE_HASH[signatureAlgorithm.hash!]!, data, { key, padding: constants.RSA_PKCS1_PADDING }, sig);
      default:
        return false;
    }
  } catch {
    return false;
  }
}
