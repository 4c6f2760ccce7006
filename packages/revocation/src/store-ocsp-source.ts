/**
 * A responder source over the store's `ocsp_responses`, with a small cache of prepared responses so
 * that a hot certificate costs a Map lookup, not a query and a parse. Entries live `ttlMs` (default
 * 5 s: a revocation made through another instance shows within that, issue 21) and never past the
 * response's nextUpdate; unknown serials are cached too (a flood of them must not become a flood of
 * queries). `invalidate` drops an entry at once (on this instance's own revocations and refreshes).
 */
import type { OcspLookup, OcspResponseSource } from './ocsp-responder.js';
import type { PreparedOcspResponse } from './prepared-ocsp-response.js';
import { prepareOcspResponse } from './prepared-ocsp-response.js';
import type { OcspResponseStore } from './store-ports.js';

/** Options of {@link createStoreOcspSource}. */
export interface StoreOcspSourceOptions {
  /** How long a looked-up answer is reused; default 5,000 ms; 0 disables the cache. */
  ttlMs?: number;
  /** Cached answers at most (oldest dropped first); default 100,000. */
  maxEntries?: number;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

/** A store-backed source; {@link invalidate} after writing a response. */
export interface StoreOcspSource extends OcspResponseSource {
  /** Forget the cached answer for one certificate, or everything. */
  invalidate(serial?: string, authorityKeyId?: string): void;
  /** Cached answers. */
  readonly size: number;
}

interface Entry {
  response: PreparedOcspResponse | null;
  until: number;
}

/** Wrap an {@link OcspResponseStore} as a responder source. */
export function createStoreOcspSource(store: OcspResponseStore, options: StoreOcspSourceOptions = {}): StoreOcspSource {
  const ttl = options.ttlMs ?? 5_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();
  return {
    get size() {
      return cache.size;
    },
    invalidate(serial, authorityKeyId) {
      if (serial === undefined || authorityKeyId === undefined) cache.clear();
      else cache.delete(`${authorityKeyId}:${serial}`);
    },
    async find(lookup: OcspLookup) {
      if (lookup.authorityKeyId === null) return null;
      const key = `${lookup.authorityKeyId}:${lookup.serial}`;
      const at = now();
      const hit = cache.get(key);
      if (hit !== undefined && hit.until > at) return hit.response;
      const stored = await store.getOcspResponse(lookup.serial, lookup.authorityKeyId);
      // An unparsable stored body throws here and is answered internalError, as CFSSL.
      const response = stored === null ? null : prepareOcspResponse(stored.body);
      if (ttl > 0) {
        const until = Math.min(at + ttl, response?.nextUpdateMs ?? Number.POSITIVE_INFINITY);
        cache.delete(key);
        if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
        cache.set(key, { response, until });
      }
      return response;
    },
  };
}
