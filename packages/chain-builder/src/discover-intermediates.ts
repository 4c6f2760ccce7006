/**
 * Intermediate discovery after an unknown-authority failure: CFSSL's `fetchIntermediates` /
 * `verifyChain` (behaviour doc 2.6) — a depth-first walk over the input certificates and their AIA
 * "CA Issuers" links — with the bounds CFSSL lacks (hop and fetch limits; timeouts and size caps
 * live in the {@link AiaFetcher}). Certificates that verify against the pools are *learned*: added
 * permanently to the intermediate pool, as CFSSL does, so later requests need no fetch.
 */
import type { Certificate } from '@certsmith/x509-core';
import type { AiaFetcher } from './aia-fetcher.js';
import { verifyChains, type VerifyChainsOptions } from './build-chains.js';
import { bytesKey } from './bytes-key.js';
import type { TrustPools } from './certificate-pool.js';
import { isSelfSigned } from './signature-check.js';

/** Options of {@link discoverIntermediates}. */
export interface DiscoverIntermediatesOptions extends VerifyChainsOptions {
  /** AIA fetcher; `null`/absent = only the supplied certificates are considered (no network). */
  fetcher?: AiaFetcher | null;
  /** Most fetched certificates stacked above the input (AIA hops). Default 4. */
  maxHops?: number;
  /** Most fetches per discovery. Default 8. */
  maxFetches?: number;
}

/** Outcome of a discovery. */
export interface DiscoverIntermediatesResult {
  /** Stack states whose every certificate verified against the pools (CFSSL's `foundChains`). */
  chainsFound: number;
  /** Certificates added to the intermediate pool, in the order learned. */
  learned: Certificate[];
  /** URLs fetched (successfully or not), for logs. */
  fetchedUrls: string[];
}

interface StackEntry {
  cert: Certificate;
  /** The leaf is never stored (CFSSL gives it an empty file name). */
  isLeaf: boolean;
}

/**
 * CFSSL's `verifyChain`: walk from the top (closest to a root) down to the leaf; known certificates
 * are skipped, every other one must verify against the current pools (and is learned, except a
 * self-signed top and the leaf) — otherwise the walk stops.
 */
function verifyStack(stack: readonly StackEntry[], pools: TrustPools, options: VerifyChainsOptions, learned: Certificate[]): boolean {
  for (let i = stack.length - 1; i >= 0; i--) {
    const { cert, isLeaf } = stack[i] as StackEntry;
    if (pools.roots.hasSignature(cert.signature) || pools.intermediates.hasSignature(cert.signature)) continue;
    if (!verifyChains(cert, pools, options).result) return false;
    if (i === stack.length - 1 && isSelfSigned(cert)) continue;
    if (isLeaf) continue;
    if (pools.intermediates.add(cert)) learned.push(cert);
  }
  return true;
}

/**
 * Discover and learn intermediates for `certs` (leaf first, then any supplied intermediates).
 * Depth-first: verify the current stack, then follow the top certificate's first unseen CA Issuers
 * URL that yields an unseen certificate; step back when none does. Cycles are cut by the seen-sets
 * of URLs and signatures, and the walk by `maxHops`/`maxFetches`.
 */
export async function discoverIntermediates(
  certs: readonly Certificate[],
  pools: TrustPools,
  options: DiscoverIntermediatesOptions = {},
): Promise<DiscoverIntermediatesResult> {
  const maxHops = options.maxHops ?? 4;
  const maxFetches = options.maxFetches ?? 8;
  const fetcher = options.fetcher ?? null;
  const seenUrls = new Set<string>();
  const seenSignatures = new Set<string>();
  const learned: Certificate[] = [];
  const fetchedUrls: string[] = [];
  // Stack top = last element = closest to the roots (the input reversed).
  const stack: StackEntry[] = certs.map((cert, i) => ({ cert, isLeaf: i === 0 })).reverse();
  for (const { cert } of stack) seenSignatures.add(bytesKey(cert.signature));
  let fetched = 0;
  let chainsFound = 0;

  while (stack.length > 0) {
    if (verifyStack(stack, pools, options, learned)) chainsFound++;
    const top = stack[stack.length - 1] as StackEntry;
    let advanced = false;
    const hops = stack.length - certs.length;
    if (fetcher && hops < maxHops) {
      for (const url of top.cert.caIssuerUrls) {
        if (seenUrls.has(url)) continue;
        if (fetched >= maxFetches) break;
        fetched++;
        fetchedUrls.push(url);
        let candidates: Certificate[];
        try {
          candidates = await fetcher.fetchCertificates(url);
        } catch {
          continue;
        }
        // A PKCS#7 bundle may hold several certificates: prefer the one naming the top's issuer.
        const issuerKey = bytesKey(top.cert.issuer.der);
        const next = candidates.find((c) => bytesKey(c.subject.der) === issuerKey) ?? candidates[0];
        if (!next || seenSignatures.has(bytesKey(next.signature))) continue;
        seenUrls.add(url);
        seenSignatures.add(bytesKey(next.signature));
        stack.push({ cert: next, isLeaf: false });
        advanced = true;
        break;
      }
    }
    if (!advanced) stack.pop();
  }
  return { chainsFound, learned, fetchedUrls };
}
