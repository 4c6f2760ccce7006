/**
 * Go's `Certificate.CheckSignatureFrom` (behaviour doc 2.5): RFC 5280 4.2.1.9 (a v3 parent needs
 * basicConstraints cA) and 4.2.1.3 (keyCertSign when keyUsage is present) are checked *before* the
 * signature, so a leaf "signing" a leaf is an unknown authority (1220), as in CFSSL. Unlike Go ≥1.18,
 * SHA-1 signatures are accepted (certsmith still bundles and warns); MD2/MD5 stay refused.
 */
import type { KeyObject } from 'node:crypto';
import { isSignatureAlgorithmSupported, publicKeyObject, verifySignature } from '@certsmith/x509-core';
import type { Certificate, KeyAlgorithm } from '@certsmith/x509-core';
// A cycle with certificate-pool.ts, harmless: each side only calls the other's functions at run time.
import { bytesKey } from './bytes-key.js';

const KEY_CERT_SIGN = 1 << 5;

const keyObjects = new WeakMap<Certificate, KeyObject | null>();

/**
 * KeyObjects by SPKI bytes, for certificates that arrive freshly parsed with every request (the
 * intermediates clients send along): OpenSSL 3 spends more decoding an SPKI than on the signature
 * check itself (see docs/performance.md#public-keys-cached-by-spki). Bounded; the oldest entry goes
 * first (a Map iterates in insertion order).
 */
const keyObjectsBySpki = new Map<string, KeyObject | null>();
const SPKI_CACHE_SIZE = 2048;

function loadPublicKey(cert: Certificate): KeyObject | null {
  const spki = bytesKey(cert.publicKey.spki);
  let key = keyObjectsBySpki.get(spki);
  if (key !== undefined) return key;
  try {
    key = publicKeyObject(cert.publicKey);
  } catch {
    key = null;
  }
  if (keyObjectsBySpki.size >= SPKI_CACHE_SIZE) {
    keyObjectsBySpki.delete(keyObjectsBySpki.keys().next().value as string);
  }
  keyObjectsBySpki.set(spki, key);
  return key;
}

/**
 * The certificate's public key as a KeyObject, created on first use and cached per certificate
 * object (pool certificates live as long as the pool) and by SPKI bytes (re-parsed certificates);
 * `null` when OpenSSL cannot load it.
 */
export function certificatePublicKey(cert: Certificate): KeyObject | null {
  let key = keyObjects.get(cert);
  if (key === undefined) {
    key = loadPublicKey(cert);
    keyObjects.set(cert, key);
  }
  return key;
}

const GO_KEY_TYPES: Record<KeyAlgorithm, string> = {
  RSA: '*rsa.PublicKey',
  ECDSA: '*ecdsa.PublicKey',
  Ed25519: 'ed25519.PublicKey',
  Ed448: 'unknown',
  DSA: '*dsa.PublicKey',
  Unknown: 'unknown',
};

/**
 * Verify `child`'s signature with `parent`'s key, without the CA checks (Go's `checkSignature`).
 * Returns `null` when it verifies, else Go's error text (used in the unknown-authority hint).
 */
export function verifyCertificateSignature(child: Certificate, parent: Certificate): string | null {
  const alg = child.signatureAlgorithm;
  if (alg.hash === 'MD2' || alg.hash === 'MD5') {
    return `x509: cannot verify signature: insecure algorithm ${alg.hash}-RSA`;
  }
  const parentAlgorithm = parent.publicKey.algorithm;
  if (!isSignatureAlgorithmSupported(alg) || parentAlgorithm === 'Unknown') {
    return 'x509: cannot verify signature: algorithm unimplemented';
  }
  if (alg.keyAlgorithm !== parentAlgorithm) {
    return `x509: signature algorithm specifies an ${alg.keyAlgorithm} public key, but have public key of type ${GO_KEY_TYPES[parentAlgorithm]}`;
  }
  const key = certificatePublicKey(parent);
  if (key === null) return 'x509: cannot verify signature: algorithm unimplemented';
  if (verifySignature(child.tbs, child.signature, alg, key)) return null;
  switch (alg.keyAlgorithm) {
    case 'RSA':
      return 'crypto/rsa: verification error';
    case 'ECDSA':
      return 'x509: ECDSA verification failure';
    default:
      return 'x509: Ed25519 verification failure';
  }
}

/** Go's `ConstraintViolationError` text. */
export const PARENT_CANNOT_SIGN = 'x509: invalid signature: parent certificate cannot sign this kind of certificate';

/**
 * The CA-side half of `CheckSignatureFrom`: `null` when `parent` may sign certificates.
 * RFC 5280 4.2.1.9: a v3 certificate without basicConstraints, or with cA false, must not be used to
 * verify certificate signatures; 4.2.1.3: keyUsage, when present, must assert keyCertSign.
 */
export function parentSigningConstraint(parent: Certificate): string | null {
  const bc = parent.basicConstraints;
  if ((parent.version === 3 && bc === null) || (bc !== null && !bc.ca)) return PARENT_CANNOT_SIGN;
  if (parent.keyUsage !== null && parent.keyUsage !== 0 && (parent.keyUsage & KEY_CERT_SIGN) === 0) {
    return PARENT_CANNOT_SIGN;
  }
  return null;
}

/**
 * What {@link checkSignatureFrom} needs of a trust pool: its own copy of a certificate, and its cached
 * verdict for a (child, pooled parent) pair. `CertificatePool` is one; declared here so this module
 * does not depend on the pool that depends on it.
 */
export interface SignatureVerdictCache {
  get(cert: Certificate): Certificate | undefined;
  checkSignature(child: Certificate, parent: Certificate): string | null;
}

/** The pools whose cached verdicts {@link checkSignatureFrom} may use (structurally, `TrustPools`). */
export interface SignatureVerdictCaches {
  roots: SignatureVerdictCache;
  intermediates: SignatureVerdictCache;
}

/**
 * Go's `CheckSignatureFrom(parent)`: `null` on success, else Go's error text.
 *
 * @param pools when given and `parent` is (byte for byte) a certificate of one of them, that pool's
 *   cached result for the pair is used: a client that sends the same intermediate with every
 *   request does not pay a signature verification each time. The answer is the same either way.
 */
export function checkSignatureFrom(child: Certificate, parent: Certificate, pools?: SignatureVerdictCaches): string | null {
  if (pools !== undefined) {
    for (const pool of [pools.intermediates, pools.roots]) {
      const pooled = pool.get(parent);
      if (pooled !== undefined) return pool.checkSignature(child, pooled);
    }
  }
  return parentSigningConstraint(parent) ?? verifyCertificateSignature(child, parent);
}

/**
 * CFSSL's `isSelfSigned`: the certificate's own key verifies its signature *and* it may sign
 * (`CheckSignatureFrom(itself)`). A v3 self-issued certificate without cA is therefore not
 * "self-signed" and ends as an unknown authority, as in CFSSL.
 *
 * @param pools see {@link checkSignatureFrom}
 */
export function isSelfSigned(cert: Certificate, pools?: SignatureVerdictCaches): boolean {
  return checkSignatureFrom(cert, cert, pools) === null;
}

/**
 * CFSSL's `partialVerify`: every certificate is signed by the next one. A single certificate passes;
 * an empty list does not.
 *
 * @param pools see {@link checkSignatureFrom}
 */
export function isSignatureChain(certs: readonly Certificate[], pools?: SignatureVerdictCaches): boolean {
  if (certs.length === 0) return false;
  for (let i = 0; i < certs.length - 1; i++) {
    if (checkSignatureFrom(certs[i] as Certificate, certs[i + 1] as Certificate, pools) !== null) return false;
  }
  return true;
}
