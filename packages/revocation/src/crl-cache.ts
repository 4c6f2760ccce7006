/**
 * One CRL per CA, cached: built from the store when first asked for, reused until it is due for
 * renewal or a revocation invalidates it, never signed per request (issue 21). The CRL Number comes
 * from the store, so instances sharing it hand out increasing numbers; across instances, the wiring
 * calls {@link CrlCache.invalidate} when it learns of a revocation made elsewhere.
 */
import type { Crl } from './crl-builder.js';
import { buildCrl } from './crl-builder.js';
import type { RevocationSigner } from './revocation-signer.js';
import type { CrlStore } from './store-ports.js';

/** CFSSL's `/crl` default lifetime: 168 hours. */
export const DEFAULT_CRL_VALIDITY_MS = 168 * 3_600_000;

/** Options of {@link CrlCache}. */
export interface CrlCacheOptions {
  store: CrlStore;
  /** nextUpdate − thisUpdate; default 7 days (CFSSL's `/crl` default). */
  validityMs?: number;
  /**
   * Rebuild a CRL this long after its thisUpdate even without revocations, well before nextUpdate;
   * default the smaller of 24 hours and half the validity.
   */
  refreshAfterMs?: number;
  /** Clock in milliseconds (tests). */
  now?: () => number;
}

interface Slot {
  crl: Promise<Crl>;
  stale: boolean;
}

/** Per-CA CRL cache. */
export class CrlCache {
  private readonly store: CrlStore;
  private readonly validityMs: number;
  private readonly refreshAfterMs: number;
  private readonly now: () => number;
  private readonly slots = new Map<string, Slot>();

  constructor(options: CrlCacheOptions) {
    this.store = options.store;
    this.validityMs = options.validityMs ?? DEFAULT_CRL_VALIDITY_MS;
    this.refreshAfterMs = options.refreshAfterMs ?? Math.min(24 * 3_600_000, this.validityMs / 2);
    this.now = options.now ?? Date.now;
  }

  /**
   * The current CRL of `issuer`: the cached one while it is fresh, else a new one (concurrent callers
   * share one build). A failed build is not cached.
   */
  async get(issuer: RevocationSigner): Promise<Crl> {
    const key = issuer.keyIdentifierHex;
    const slot = this.slots.get(key);
    if (slot !== undefined && !slot.stale) {
      const crl = await slot.crl;
      if (this.now() < crl.thisUpdate.getTime() + this.refreshAfterMs && this.slots.get(key) === slot && !slot.stale) return crl;
      if (this.slots.get(key) !== slot) return this.get(issuer);
    }
    return this.rebuild(issuer);
  }

  /** Build a new CRL of `issuer` now and cache it (after a revocation, or on a timer). */
  rebuild(issuer: RevocationSigner): Promise<Crl> {
    const key = issuer.keyIdentifierHex;
    const crl = this.build(issuer);
    const slot: Slot = { crl, stale: false };
    this.slots.set(key, slot);
    crl.catch(() => {
      if (this.slots.get(key) === slot) this.slots.delete(key);
    });
    return crl;
  }

  /** Mark the CRL of one CA (or of all) as stale: the next {@link get} builds a new one. */
  invalidate(authorityKeyId?: string): void {
    if (authorityKeyId === undefined) for (const slot of this.slots.values()) slot.stale = true;
    else {
      const slot = this.slots.get(authorityKeyId);
      if (slot) slot.stale = true;
    }
  }

  private async build(issuer: RevocationSigner): Promise<Crl> {
    const thisUpdate = new Date(this.now());
    const key = issuer.keyIdentifierHex;
    const crlNumber = await this.store.nextCrlNumber(key);
    return buildCrl({
      issuer,
      crlNumber,
      thisUpdate,
      nextUpdate: new Date(thisUpdate.getTime() + this.validityMs),
      revoked: this.store.revokedCertificates(key, thisUpdate),
    });
  }
}
