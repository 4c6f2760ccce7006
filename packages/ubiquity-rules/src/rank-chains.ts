/**
 * The `optimal` and `ubiquitous` chain rankings of CFSSL's bundler (`optimalChains`,
 * `ubiquitousChains`; behaviour doc 2.7).
 */
import {
  compareChainCryptoSuite,
  compareChainExpiry,
  compareChainHashUbiquity,
  compareChainKeyAlgoUbiquity,
  compareChainLength,
  compareExpiryUbiquity,
  comparePlatformUbiquity,
  compareSha2Homogeneity,
  filterChains,
  type Chain,
} from './compare-chains.js';
import type { Platform } from './platform.js';

/** Flavors of the bundle request. Anything else ranks like `ubiquitous` (CFSSL's default case). */
export type BundleFlavor = 'ubiquitous' | 'optimal' | 'force';

/** Shortest, then longest-lived, then most modern crypto suite. Returns the tied best, pick = `[0]`. */
export function rankOptimal<C extends Chain>(chains: readonly C[]): C[] {
  let best = filterChains(chains, compareChainLength);
  best = filterChains(best, compareChainExpiry);
  return filterChains(best, compareChainCryptoSuite);
}

/**
 * Platform weight, SHA-2 homogeneity, length, hash ubiquity, key ubiquity, expiry ubiquity, then
 * {@link rankOptimal}. Without platforms the weight step ties everything, so the remaining steps
 * still run (CFSSL only logs "falls back to Optimal").
 */
export function rankUbiquitous<C extends Chain>(chains: readonly C[], platforms: readonly Platform[]): C[] {
  let best = filterChains(chains, comparePlatformUbiquity(platforms));
  best = filterChains(best, compareSha2Homogeneity);
  best = filterChains(best, compareChainLength);
  best = filterChains(best, compareChainHashUbiquity);
  best = filterChains(best, compareChainKeyAlgoUbiquity);
  best = filterChains(best, compareExpiryUbiquity);
  return rankOptimal(best);
}

/**
 * Rank candidate chains for a flavor: `optimal` → {@link rankOptimal}; everything else (including
 * unknown strings and `force`, whose bundler never ranks) → {@link rankUbiquitous}.
 */
export function rankChains<C extends Chain>(chains: readonly C[], flavor: string, platforms: readonly Platform[]): C[] {
  return flavor === 'optimal' ? rankOptimal(chains) : rankUbiquitous(chains, platforms);
}
