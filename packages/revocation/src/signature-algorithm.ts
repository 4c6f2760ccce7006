/**
 * Which signature algorithm signs a CRL or an OCSP response, and its AlgorithmIdentifier. CFSSL signs
 * both with Go's `signingParamsForPublicKey` (lifecycle spec §4, §5.1): RSA keys of any size →
 * sha256WithRSAEncryption, ECDSA by curve (P-256 → SHA-256, P-384 → SHA-384, P-521 → SHA-512).
 * Ed25519 is added where the signer offers it (CFSSL refuses Ed25519 OCSP signers). Encodings are
 * Go's: RSA with NULL parameters, ECDSA and Ed25519 without, RSA-PSS with explicit parameters.
 */
import type { SignatureAlgorithm } from '@certsmith/signer-api';
import type { PublicKeyInfo } from '@certsmith/x509-core';
import { derExplicit, derInteger, derNull, derOid, derSequence } from '@certsmith/x509-core';

const HASH_OIDS = {
  SHA256: '2.16.840.1.101.3.4.2.1',
  SHA384: '2.16.840.1.101.3.4.2.2',
  SHA512: '2.16.840.1.101.3.4.2.3',
} as const;

function pssIdentifier(hash: keyof typeof HASH_OIDS, saltLength: number): Uint8Array {
  const hashAlgorithm = derSequence(derOid(HASH_OIDS[hash]), derNull());
  return derSequence(
    derOid('1.2.840.113549.1.1.10'),
    derSequence(
      derExplicit(0, hashAlgorithm),
      derExplicit(1, derSequence(derOid('1.2.840.113549.1.1.8'), hashAlgorithm)),
      derExplicit(2, derInteger(saltLength)),
    ),
  );
}

const IDENTIFIERS: Readonly<Record<SignatureAlgorithm, Uint8Array>> = {
  'ECDSA-SHA256': derSequence(derOid('1.2.840.10045.4.3.2')),
  'ECDSA-SHA384': derSequence(derOid('1.2.840.10045.4.3.3')),
  'ECDSA-SHA512': derSequence(derOid('1.2.840.10045.4.3.4')),
  'RSA-SHA256': derSequence(derOid('1.2.840.113549.1.1.11'), derNull()),
  'RSA-SHA384': derSequence(derOid('1.2.840.113549.1.1.12'), derNull()),
  'RSA-SHA512': derSequence(derOid('1.2.840.113549.1.1.13'), derNull()),
  'RSA-PSS-SHA256': pssIdentifier('SHA256', 32),
  'RSA-PSS-SHA384': pssIdentifier('SHA384', 48),
  'RSA-PSS-SHA512': pssIdentifier('SHA512', 64),
  Ed25519: derSequence(derOid('1.3.101.112')),
};

/** DER AlgorithmIdentifier of a signature algorithm (shared constant; do not mutate). */
export function signatureAlgorithmIdentifier(algorithm: SignatureAlgorithm): Uint8Array {
  return IDENTIFIERS[algorithm];
}

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
