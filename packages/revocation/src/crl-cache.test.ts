import { describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';

import type { RevokedCertificate } from './crl-builder.js';
import { CrlCache } from './crl-cache.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { CrlStore } from './store-ports.js';
import { keySigner } from './test-support/pki.js';

function memoryStore(): CrlStore & { revoked: Map<string, RevokedCertificate[]>; numbers: Map<string, bigint>; builds: number } {
  const store = {
    revoked: new Map<string, RevokedCertificate[]>(),
    numbers: new Map<string, bigint>(),
    builds: 0,
    revokedCertificates(aki: string) {
      store.builds++;
      return store.revoked.get(aki) ?? [];
    },
    async nextCrlNumber(aki: string) {
      const next = (store.numbers.get(aki) ?? 0n) + 1n;
      store.numbers.set(aki, next);
      return next;
    },
  };
  return store;
}

async function setUp() {
  const pki = new TestPki();
  const issuer = await createRevocationSigner(keySigner(pki.root('cache CA', { key: 'ecdsa-p256', keyLabel: 'cache' })));
  const other = await createRevocationSigner(keySigner(pki.root('cache CA 2', { key: 'ecdsa-p256', keyLabel: 'cache-2' })));
  let now = Date.UTC(2026, 10, 25, 12);
  const store = memoryStore();
  const cache = new CrlCache({ store, now: () => now });
  return { issuer, other, store, cache, advance: (ms: number) => (now += ms) };
}

describe('CrlCache', () => {
  it('builds once and serves the cached CRL to concurrent and later callers', async () => {
    const { issuer, store, cache } = await setUp();
    const [first, second] = await Promise.all([cache.get(issuer), cache.get(issuer)]);
    expect(first).toBe(second);
    expect(await cache.get(issuer)).toBe(first);
    expect(store.builds).toBe(1);
    expect(first.crlNumber).toBe(1n);
    expect(first.nextUpdate.getTime() - first.thisUpdate.getTime()).toBe(168 * 3_600_000);
  });

  it('rebuilds with a higher CRL number after invalidate (a revocation)', async () => {
    const { issuer, store, cache } = await setUp();
    const first = await cache.get(issuer);
    store.revoked.set(issuer.keyIdentifierHex, [{ serial: 9n, revokedAt: new Date(), reason: 1 }]);
    cache.invalidate(issuer.keyIdentifierHex);
    const second = await cache.get(issuer);
    expect(second.crlNumber).toBe(2n);
    expect(second.entryCount).toBe(1);
    expect(first.entryCount).toBe(0);
  });

  it('rebuilds after the refresh interval (24 h), long before nextUpdate', async () => {
    const { issuer, cache, advance } = await setUp();
    const first = await cache.get(issuer);
    advance(23 * 3_600_000);
    expect(await cache.get(issuer)).toBe(first);
    advance(2 * 3_600_000);
    expect((await cache.get(issuer)).crlNumber).toBe(2n);
  });

  it('keeps one CRL per CA', async () => {
    const { issuer, other, store, cache } = await setUp();
    store.revoked.set(other.keyIdentifierHex, [{ serial: 1n, revokedAt: new Date() }]);
    expect((await cache.get(issuer)).entryCount).toBe(0);
    expect((await cache.get(other)).entryCount).toBe(1);
    expect((await cache.get(other)).issuerKeyId).toBe(other.keyIdentifierHex);
  });

  it('does not cache a failed build', async () => {
    const { issuer, store, cache } = await setUp();
    const original = store.nextCrlNumber;
    store.nextCrlNumber = () => Promise.reject(new Error('store down'));
    await expect(cache.get(issuer)).rejects.toThrow('store down');
    store.nextCrlNumber = original;
    expect((await cache.get(issuer)).crlNumber).toBe(1n);
  });
});
