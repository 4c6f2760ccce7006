/**
 * A client platform (browser or OS) with its trust store and minimum crypto requirements, as in
 * CFSSL's `ubiquity/ubiquity_platform.go` (behaviour doc 2.7, 2.11). Plain data: a `Set` of SPKI
 * hashes is structured-clone safe, so platforms can be handed to worker threads.
 */
import { spkiSha1Hex } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';
import { chainHashUbiquity, chainKeyAlgoUbiquity } from './crypto-scores.js';

/** One platform of the metadata file. */
export interface Platform {
  /** Display name, used verbatim in `untrusted_root_stores` and the untrusted warning. */
  name: string;
  /** Market weight (may be 0). */
  weight: number;
  /** `hash_algo` as written in the metadata (`SHA1`/`SHA2`). */
  hashAlgo: string;
  /** `key_algo` as written (`RSA`/`ECDSA256`/`ECDSA384`/`ECDSA521`). */
  keyAlgo: string;
  /** Resolved keystore path, `''` when the platform has none. */
  keystoreFile: string;
  /** Minimum hash ubiquity the platform needs (SHA1 → 100, SHA2 → 70). */
  hashUbiquity: number;
  /** Minimum key ubiquity the platform needs (RSA 100, ECDSA256/384 70, ECDSA521 30). */
  keyAlgoUbiquity: number;
  /**
   * Lower-case hex SHA-1 of the full SubjectPublicKeyInfo DER of every trusted root. Empty means
   * "no own store, trusts whatever roots are supplied" (Chrome), so it trusts every root.
   */
  keystore: ReadonlySet<string>;
}

/** Platform hash requirement from `hash_algo`; 0 for unknown values (which fail loading). */
export function platformHashUbiquity(hashAlgo: string): number {
  if (hashAlgo === 'SHA1') return 100;
  if (hashAlgo === 'SHA2') return 70;
  return 0;
}

/** Platform key requirement from `key_algo`; 0 for unknown values (which fail loading). */
export function platformKeyAlgoUbiquity(keyAlgo: string): number {
  switch (keyAlgo) {
    case 'RSA':
      return 100;
    case 'ECDSA256':
    case 'ECDSA384':
      return 70;
    case 'ECDSA521':
      return 30;
    default:
      return 0;
  }
}

const spkiHashes = new WeakMap<Certificate, string>();

/** Lower-case hex SHA-1 of the certificate's full SPKI DER (`SHA1RawPublicKey`), memoised per object. */
export function spkiSha1(cert: Certificate): string {
  let hash = spkiHashes.get(cert);
  if (hash === undefined) {
    hash = spkiSha1Hex(cert);
    spkiHashes.set(cert, hash);
  }
  return hash;
}

/** Whether the platform trusts `root`: an empty keystore trusts all (`Platform.Trust`). */
export function platformTrusts(platform: Platform, root: Certificate): boolean {
  if (platform.keystore.size === 0) return true;
  return platform.keystore.has(spkiSha1(root));
}

/** Names of the platforms that do not trust `root`, in metadata order (`UntrustedPlatforms`). */
export function untrustedPlatforms(root: Certificate, platforms: readonly Platform[]): string[] {
  return platforms.filter((p) => !platformTrusts(p, root)).map((p) => p.name);
}

/**
 * Cross-platform weight of a chain: the summed weight of every platform that trusts the chain's
 * last certificate and whose hash/key requirements the chain meets; 0 without platforms
 * (`CrossPlatformUbiquity`).
 */
export function crossPlatformUbiquity(chain: readonly Certificate[], platforms: readonly Platform[]): number {
  if (platforms.length === 0 || chain.length === 0) return 0;
  const root = chain[chain.length - 1] as Certificate;
  const hash = chainHashUbiquity(chain);
  const key = chainKeyAlgoUbiquity(chain);
  let total = 0;
  for (const platform of platforms) {
    if (platformTrusts(platform, root) && platform.hashUbiquity <= hash && platform.keyAlgoUbiquity <= key) {
      total += platform.weight;
    }
  }
  return total;
}
