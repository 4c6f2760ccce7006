/**
 * DER AlgorithmIdentifiers of the signature algorithms certsmith signs with, encoded as Go's
 * `crypto/x509` writes them (CFSSL certificates are made by Go): RSA PKCS#1 v1.5 with NULL
 * parameters, ECDSA and Ed25519 without parameters (RFC 5758 3.2, RFC 8410 3), RSA-PSS with
 * explicit SHA-2 / MGF1 parameters and a salt as long as the hash (RFC 4055 3.1).
 *
 * The names are the signer contract's (`@certsmith/signer-api` `SignatureAlgorithm`): the contract
 * names an algorithm, this module turns the name into the bytes written into a TBSCertificate,
 * a CertificationRequest and around their signature.
 */
import { derExplicit, derInteger, derNull, derOid, derSequence } from './der-writer.js';

/** Every signature algorithm name this module encodes (the signer contract's list, same order). */
export const SIGNATURE_ALGORITHM_NAMES = [
  'ECDSA-SHA256',
  'ECDSA-SHA384',
  'ECDSA-SHA512',
  'RSA-SHA256',
  'RSA-SHA384',
  'RSA-SHA512',
  'RSA-PSS-SHA256',
  'RSA-PSS-SHA384',
  'RSA-PSS-SHA512',
  'Ed25519',
] as const;

/** A signature algorithm name (see `@certsmith/signer-api` `SignatureAlgorithm`). */
export type SignatureAlgorithmName = (typeof SIGNATURE_ALGORITHM_NAMES)[number];

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

// Encoded once: an identifier is written into every certificate twice (TBS and outer).
const IDENTIFIERS: Readonly<Record<SignatureAlgorithmName, Uint8Array>> = {
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

/** DER AlgorithmIdentifier of a signature algorithm (shared bytes: do not mutate). */
export function signatureAlgorithmIdentifier(algorithm: SignatureAlgorithmName): Uint8Array {
  return IDENTIFIERS[algorithm];
}
