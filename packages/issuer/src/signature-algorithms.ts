/**
 * Signature algorithm choice, as CFSSL's `helpers.SignerAlgo` makes it (behaviour doc 3.3, 3.7):
 * the *signing key* decides — RSA ≥4096 bits SHA-512, ≥3072 SHA-384, else SHA-256; ECDSA P-521
 * SHA-512, P-384 SHA-384, P-256 SHA-256; Ed25519 pure. The AlgorithmIdentifier encodings are
 * x509-core's (`signatureAlgorithmIdentifier`).
 */
import type { SignatureAlgorithm } from '@certsmith/signer-api';
import type { PublicKeyInfo } from '@certsmith/x509-core';

/** The key family an algorithm signs with. */
export function algorithmKeyFamily(algorithm: SignatureAlgorithm): 'RSA' | 'ECDSA' | 'Ed25519' {
  if (algorithm === 'Ed25519') return 'Ed25519';
  return algorithm.startsWith('ECDSA') ? 'ECDSA' : 'RSA';
}

/**
 * CFSSL's choice for a key (`helpers.SignerAlgo`); `null` for keys CFSSL cannot sign with. RSA keys
 * under 2048 bits get SHA-256 rather than Go's SHA-1 (the contract has no SHA-1 algorithms).
 */
export function preferredSignatureAlgorithm(key: Pick<PublicKeyInfo, 'algorithm' | 'bits'>): SignatureAlgorithm | null {
  switch (key.algorithm) {
    case 'RSA':
      return key.bits >= 4096 ? 'RSA-SHA512' : key.bits >= 3072 ? 'RSA-SHA384' : 'RSA-SHA256';
    case 'ECDSA':
      return key.bits >= 521 ? 'ECDSA-SHA512' : key.bits >= 384 ? 'ECDSA-SHA384' : 'ECDSA-SHA256';
    case 'Ed25519':
      return 'Ed25519';
    default:
      return null;
  }
}

/**
 * Pick the algorithm to sign with: CFSSL's preference when the signer offers it, else the first
 * offered algorithm of the key's family, else the signer's first algorithm (an HSM that only
 * offers, say, RSA-PSS). `null` when the signer offers none.
 */
export function chooseSignatureAlgorithm(
  key: Pick<PublicKeyInfo, 'algorithm' | 'bits'>,
  offered: readonly SignatureAlgorithm[],
): SignatureAlgorithm | null {
  const preferred = preferredSignatureAlgorithm(key);
  if (preferred !== null && offered.includes(preferred)) return preferred;
  const sameFamily = offered.find((algorithm) => algorithmKeyFamily(algorithm) === key.algorithm);
  return sameFamily ?? offered[0] ?? null;
}
