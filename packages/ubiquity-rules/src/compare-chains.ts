/**
 * Chain comparators and CFSSL's stable `Filter` (`ubiquity/filter.go`, `ubiquity/*.go`; behaviour
 * doc 2.7). A comparator returns > 0 when the first chain is better, < 0 when the second is, 0 on a tie.
 */
import type { Certificate } from '@certsmith/x509-core';
import {
  chainHashPriority,
  chainHashUbiquity,
  chainKeyAlgoPriority,
  chainKeyAlgoUbiquity,
  hashUbiquity,
  HashUbiquity,
} from './crypto-scores.js';
import { chainExpiry, validExpiry } from './expiry.js';
import { crossPlatformUbiquity, type Platform } from './platform.js';

/** A chain leaf first, root last. */
export type Chain = readonly Certificate[];

/** A chain comparator (`RankingFunc`). */
export type ChainComparator = (a: Chain, b: Chain) => number;

/**
 * CFSSL's `Filter`: keep the chains that tie with the best one. Scans in order; a strictly better
 * chain restarts the candidate list, a tie is appended, so ties keep their input order and the
 * result's first element is the pick (`best[0]`).
 */
export function filterChains<C extends Chain>(chains: readonly C[], compare: ChainComparator): C[] {
  if (chains.length <= 1) return [...chains];
  let best = chains[0] as C;
  let candidates: C[] = [];
  for (const chain of chains) {
    const r = compare(best, chain);
    if (r < 0) {
      best = chain;
      candidates = [chain];
    } else if (r === 0) {
      candidates.push(chain);
    }
  }
  return candidates;
}

/** Shorter chain wins (`CompareChainLength`). */
export const compareChainLength: ChainComparator = (a, b) => b.length - a.length;

function compareTime(a: Date | null, b: Date | null): number {
  const ta = a?.getTime() ?? Number.NEGATIVE_INFINITY;
  const tb = b?.getTime() ?? Number.NEGATIVE_INFINITY;
  return ta > tb ? 1 : ta < tb ? -1 : 0;
}

/** Later earliest-NotAfter wins (`CompareChainExpiry`). */
export const compareChainExpiry: ChainComparator = (a, b) => compareTime(chainExpiry(a), chainExpiry(b));

/** Larger HashPriority + KeyAlgoPriority wins (`CompareChainCryptoSuite`). */
export const compareChainCryptoSuite: ChainComparator = (a, b) =>
  chainHashPriority(a) + chainKeyAlgoPriority(a) - (chainHashPriority(b) + chainKeyAlgoPriority(b));

/** Larger HashPriority wins (`CompareChainHashPriority`). */
export const compareChainHashPriority: ChainComparator = (a, b) => chainHashPriority(a) - chainHashPriority(b);

/** Larger KeyAlgoPriority wins (`CompareChainKeyAlgoPriority`). */
export const compareChainKeyAlgoPriority: ChainComparator = (a, b) => chainKeyAlgoPriority(a) - chainKeyAlgoPriority(b);

/** Larger minimum hash ubiquity wins, i.e. SHA-1 beats SHA-2 (`CompareChainHashUbiquity`). */
export const compareChainHashUbiquity: ChainComparator = (a, b) => chainHashUbiquity(a) - chainHashUbiquity(b);

/** Larger minimum key ubiquity wins, RSA over ECDSA (`CompareChainKeyAlgoUbiquity`). */
export const compareChainKeyAlgoUbiquity: ChainComparator = (a, b) => chainKeyAlgoUbiquity(a) - chainKeyAlgoUbiquity(b);

/** 1 when every certificate but the last is SHA-2 signed, else 0 (`SHA2Homogeneity`). */
export function sha2Homogeneity(chain: Chain): number {
  for (let i = 0; i < chain.length - 1; i++) {
    if (hashUbiquity(chain[i] as Certificate) !== HashUbiquity.SHA2) return 0;
  }
  return 1;
}

/** SHA-2-homogeneous chains win (`CompareSHA2Homogeneity`). */
export const compareSha2Homogeneity: ChainComparator = (a, b) => sha2Homogeneity(a) - sha2Homogeneity(b);

/**
 * Pairwise from the root end: at the first pair where exactly one certificate has a CA/B-valid
 * lifetime, that one wins; otherwise the later NotAfter wins; equal pairs move on
 * (`CompareExpiryUbiquity`).
 */
export const compareExpiryUbiquity: ChainComparator = (a, b) => {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const c1 = a[a.length - 1 - i] as Certificate;
    const c2 = b[b.length - 1 - i] as Certificate;
    const v1 = validExpiry(c1);
    const v2 = validExpiry(c2);
    if (v1 && !v2) return 1;
    if (!v1 && v2) return -1;
    const r = compareTime(c1.notAfter, c2.notAfter);
    if (r !== 0) return r;
  }
  return 0;
};

/** Larger cross-platform weight wins (`ComparePlatformUbiquity`), over the given platforms. */
export function comparePlatformUbiquity(platforms: readonly Platform[]): ChainComparator {
  return (a, b) => crossPlatformUbiquity(a, platforms) - crossPlatformUbiquity(b, platforms);
}
