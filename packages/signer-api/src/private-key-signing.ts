/**
 * Signing with a private key held in memory, for signers that keep their key in the process (the
 * local signer, third-party plugins): the native ECDSA addon (`@certsmith/native-ec`) signs when
 * it is built and knows the key's curve — a cheaper signature on every certificate issued (see
 * docs/performance.md#the-native-ecdsa-addon) — and node:crypto signs otherwise. A plugin gets
 * the speed by standing on the contract alone.
 */
import type { KeyObject } from 'node:crypto';

import { loadNativeEc } from '@certsmith/native-ec';
import type { NativeEcDigest, NativeEcKey } from '@certsmith/native-ec';

import { algorithmsForKeyObject, signWithKeyObject } from './key-object-signing.js';
import type { SignatureAlgorithm } from './signature-algorithm.js';

/** A private key ready to sign; `dispose` frees the addon's copy (its scalar is cleared). */
export interface PrivateKeySigning {
  /** What the key can produce, most preferred first (see `algorithmsForKeyObject`). */
  readonly algorithms: readonly SignatureAlgorithm[];
  /** Sign `data`; the BIT STRING contents (ECDSA as DER `SEQUENCE { r, s }`). */
  sign(data: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array>;
  /** Release the key; `sign` must not be called afterwards. */
  dispose(): void;
}

/** The digest of each ECDSA algorithm the native addon signs with. */
const NATIVE_DIGESTS: Partial<Record<SignatureAlgorithm, NativeEcDigest>> = {
  'ECDSA-SHA256': 'sha256',
  'ECDSA-SHA384': 'sha384',
  'ECDSA-SHA512': 'sha512',
};

/** The key held by the addon, or `null` where node:crypto signs (not EC, no addon, a curve it lacks). */
function nativeKey(privateKey: KeyObject): NativeEcKey | null {
  if (privateKey.asymmetricKeyType !== 'ec') return null;
  const native = loadNativeEc();
  if (native === null) return null;
  try {
    return native.importKey(privateKey.export({ format: 'der', type: 'sec1' }));
  } catch {
    // A curve the addon does not offer: node:crypto signs with it.
    return null;
  }
}

/** Prepare `privateKey` for signing; the caller checks that it can sign at all (`algorithms` not empty). */
export function createPrivateKeySigning(privateKey: KeyObject): PrivateKeySigning {
  let native = nativeKey(privateKey);
  return {
    algorithms: Object.freeze(algorithmsForKeyObject(privateKey)),
    sign(data: Uint8Array, algorithm: SignatureAlgorithm): Promise<Uint8Array> {
      const digest = native === null ? undefined : NATIVE_DIGESTS[algorithm];
      if (native !== null && digest !== undefined) {
        try {
          return Promise.resolve(native.sign(digest, data));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return signWithKeyObject(privateKey, data, algorithm);
    },
    dispose(): void {
      native?.dispose();
      native = null;
    },
  };
}
