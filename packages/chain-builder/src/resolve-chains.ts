/**
 * The verification step of CFSSL's bundler for the non-force flavors (behaviour doc 2.5 steps 2–4):
 * verify; on an unknown authority, discover intermediates (supplied ones and AIA) and verify again;
 * if discovery finds nothing, the *original* error stands.
 */
import type { Certificate } from '@certsmith/x509-core';
import { ErrorCode } from '@certsmith/x509-core';
import { verifyChains, type ChainVerificationResult } from './build-chains.js';
import type { TrustPools } from './certificate-pool.js';
import { discoverIntermediates, type DiscoverIntermediatesOptions } from './discover-intermediates.js';

/** Result of {@link resolveChains}: the verification plus what discovery learned. */
export interface ResolveChainsResult extends ChainVerificationResult {
  /** Intermediates added to the pool on the way (supplied or fetched). */
  learned: Certificate[];
}

/**
 * All valid chains for `certs[0]`, learning intermediates from `certs[1..]` and AIA when needed.
 * @param certs leaf first, then any supplied intermediates (already in chain order)
 */
export async function resolveChains(
  certs: readonly Certificate[],
  pools: TrustPools,
  options: DiscoverIntermediatesOptions = {},
): Promise<ResolveChainsResult> {
  const leaf = certs[0];
  if (!leaf) throw new RangeError('resolveChains needs at least one certificate');
  const first = verifyChains(leaf, pools, options);
  if (first.result || first.resultCode !== ErrorCode.CertificateUnknownAuthority) return { ...first, learned: [] };
  const discovery = await discoverIntermediates(certs, pools, options);
  if (discovery.chainsFound === 0) return { ...first, learned: discovery.learned };
  return { ...verifyChains(leaf, pools, options), learned: discovery.learned };
}
