/**
 * Signing with a node:crypto `KeyObject` in the form the contract requires, shared by the local
 * signer, the issuer (which signs CSRs with freshly generated keys) and third-party plugins that
 * hold keys in memory. ECDSA and Ed25519 sign synchronously: a P-256 signature costs tens of
 * microseconds, less than a thread-pool round trip. RSA signing (a millisecond or more for 2048+
 * bits) goes to libuv's thread pool so it never blocks the event loop.
 */
import { constants, sign } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

import type { SignatureAlgorithm } from './signature-algorithm.js';
import { signatureHash } from './signature-algorithm.js';

const SALT_LENGTH = { sha256: 32, sha384: 48, sha512: 64 } as const;

/** The algorithms a node:crypto key can produce, most preferred first (CFSSL's choice first). */
export function algorithmsForKeyObject(key: KeyObject): SignatureAlgorithm[] {
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      if (curve === 'secp521r1') return ['ECDSA-SHA512', 'ECDSA-SHA384', 'ECDSA-SHA256'];
      if (curve === 'secp384r1') return ['ECDSA-SHA384', 'ECDSA-SHA256', 'ECDSA-SHA512'];
      return ['ECDSA-SHA256', 'ECDSA-SHA384', 'ECDSA-SHA512'];
    }
    case 'rsa': {
      const bits = key.asymmetricKeyDetails?.modulusLength ?? 2048;
      const pkcs1: SignatureAlgorithm[] =
        bits >= 4096 ? ['RSA-SHA512', 'RSA-SHA384', 'RSA-SHA256'] : bits >= 3072 ? ['RSA-SHA384', 'RSA-SHA256', 'RSA-SHA512'] : ['RSA-SHA256', 'RSA-SHA384', 'RSA-SHA512'];
      return [...pkcs1, 'RSA-PSS-SHA256', 'RSA-PSS-SHA384', 'RSA-PSS-SHA512'];
    }
    case 'ed25519':
      return ['Ed25519'];
    default:
      return [];
  }
}

/**
 * Sign `data` with `key` using `algorithm`; returns the BIT STRING contents (ECDSA as DER
 * `SEQUENCE { r, s }`). The caller guarantees the algorithm fits the key.
 */
export function signWithKeyObject(key: KeyObject, data: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
  const hash = signatureHash(algorithm);
  if (algorithm.startsWith('RSA')) {
    const pss = algorithm.startsWith('RSA-PSS');
    const options = pss ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: SALT_LENGTH[hash as keyof typeof SALT_LENGTH] } : key;
    return new Promise((resolve, reject) => {
      sign(hash, data, options, (error, signature) => {
        if (error) reject(error);
        else resolve(new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength));
      });
    });
  }
  try {
    const signature = sign(hash, data, key);
    return Promise.resolve(new Uint8Array(signature.buffer, signature.byteOffset, signature.byteLength));
  } catch (error) {
    return Promise.reject(error);
  }
}
