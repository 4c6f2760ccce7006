/**
 * Signature algorithms a signer may offer. The names pair the key family with the hash so that a
 * plugin never has to know ASN.1: the issuer turns a name into the AlgorithmIdentifier it writes
 * into the TBSCertificate, and asks the signer for exactly that signature.
 */
import { SIGNATURE_ALGORITHM_NAMES } from '@certsmith/x509-core';
import type { SignatureAlgorithmName } from '@certsmith/x509-core';

/**
 * Every signature algorithm the contract names, in a stable order: x509-core's list, the names its
 * `signatureAlgorithmIdentifier` encodes, so a name the contract offers always has an encoding.
 */
export const SIGNATURE_ALGORITHMS: typeof SIGNATURE_ALGORITHM_NAMES = SIGNATURE_ALGORITHM_NAMES;

/**
 * A signature algorithm name. `RSA-*` is RSASSA-PKCS1-v1_5, `RSA-PSS-*` is RSASSA-PSS with MGF1 over
 * the same hash and a salt as long as the hash (RFC 4055 / Go's `SHA256WithRSAPSS` family),
 * `ECDSA-*` returns a DER `SEQUENCE { r, s }`, `Ed25519` is pure EdDSA (RFC 8032, no pre-hash).
 */
export type SignatureAlgorithm = SignatureAlgorithmName;

const KNOWN: ReadonlySet<string> = new Set(SIGNATURE_ALGORITHMS);

/** True when `value` is one of {@link SIGNATURE_ALGORITHMS}. */
export function isSignatureAlgorithm(value: unknown): value is SignatureAlgorithm {
  return typeof value === 'string' && KNOWN.has(value);
}

/**
 * The hash a signature algorithm uses, in node:crypto spelling (`'sha256'`…), or `null` for Ed25519
 * (pure EdDSA signs the message itself). Plugins signing with node:crypto pass this straight to
 * `crypto.sign`.
 */
export function signatureHash(algorithm: SignatureAlgorithm): 'sha256' | 'sha384' | 'sha512' | null {
  if (algorithm === 'Ed25519') return null;
  if (algorithm.endsWith('SHA256')) return 'sha256';
  if (algorithm.endsWith('SHA384')) return 'sha384';
  return 'sha512';
}
