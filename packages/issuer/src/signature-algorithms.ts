/**
 * Signature algorithm choice and AlgorithmIdentifier encodings. The choice follows CFSSL's
 * `helpers.SignerAlgo` (behaviour doc 3.3, 3.7): the *signing key* decides — RSA ≥4096 bits
 * SHA-512, ≥3072 SHA-384, else SHA-256; ECDSA P-521 SHA-512, P-384 SHA-384, P-256 SHA-256;
 * Ed25519 pure. Encodings are Go's (RSA with NULL parameters, ECDSA and Ed25519 without, RSA-PSS
 * with explicit SHA-2/MGF1 parameters and salt = hash length).
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

/** DER AlgorithmIdentifier for a signature algorithm (shared, do not mutate). */
export function algorithmIdentifier(algorithm: SignatureAlgorithm): Uint8Array {
  return IDENTIFIERS[algorithm];
}

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
