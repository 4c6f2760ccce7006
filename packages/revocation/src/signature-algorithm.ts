/**
 * Which signature algorithm signs a CRL or an OCSP response, and its AlgorithmIdentifier. CFSSL signs
 * both with Go's `signingParamsForPublicKey` (lifecycle spec §4, §5.1): RSA keys of any size →
 * sha256WithRSAEncryption, ECDSA by curve (P-256 → SHA-256, P-384 → SHA-384, P-521 → SHA-512).
 * Ed25519 is added where the signer offers it (CFSSL refuses Ed25519 OCSP signers). The
 * AlgorithmIdentifier encodings are x509-core's (`signatureAlgorithmIdentifier`), Go's forms.
 */
import type { SignatureAlgorithm } from '@certsmith/signer-api';
import type { PublicKeyInfo } from '@certsmith/x509-core';

/** CFSSL's (Go's) choice for a CRL or OCSP signature with this key; `null` for other key types. */
export function preferredRevocationAlgorithm(key: Pick<PublicKeyInfo, 'algorithm' | 'bits'>): SignatureAlgorithm | null {
  switch (key.algorithm) {
    case 'RSA':
      return 'RSA-SHA256';
    case 'ECDSA':
      return key.bits >= 521 ? 'ECDSA-SHA512' : key.bits >= 384 ? 'ECDSA-SHA384' : 'ECDSA-SHA256';
    case 'Ed25519':
      return 'Ed25519';
    default:
      return null;
  }
}

function family(algorithm: SignatureAlgorithm): 'RSA' | 'ECDSA' | 'Ed25519' {
  if (algorithm === 'Ed25519') return 'Ed25519';
  return algorithm.startsWith('ECDSA') ? 'ECDSA' : 'RSA';
}

/**
 * The algorithm to sign revocation data with: CFSSL's choice when the signer offers it, else the
 * first offered algorithm of the key's family (an HSM that only does RSA-PSS, say); `null` when the
 * signer offers nothing that fits the key.
 */
export function chooseRevocationAlgorithm(
  key: Pick<PublicKeyInfo, 'algorithm' | 'bits'>,
  offered: readonly SignatureAlgorithm[],
): SignatureAlgorithm | null {
  const preferred = preferredRevocationAlgorithm(key);
  if (preferred === null) return null;
  if (offered.includes(preferred)) return preferred;
  return offered.find((algorithm) => family(algorithm) === key.algorithm) ?? null;
}
