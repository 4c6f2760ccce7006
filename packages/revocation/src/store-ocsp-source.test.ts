import { describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';

import { buildOcspResponse, ocspValidity } from './ocsp-response-builder.js';
import type { OcspLookup } from './ocsp-responder.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { createRevocationSigner } from './revocation-signer.js';
import { createStoreOcspSource } from './store-ocsp-source.js';
import { keySigner } from './test-support/pki.js';

const lookup = (serial: string, authorityKeyId: string | null): OcspLookup => ({ certId: {} as never, serial, authorityKeyId, issuer: null });

describe('createStoreOcspSource', () => {
  it('queries the store by (serial, AKI), caches answers for the TTL and forgets on invalidate', async () => {
    const identity = createOcspSigningIdentity({ signer: await createRevocationSigner(keySigner(new TestPki().root('store source CA', { key: 'ecdsa-p256' }))) });
    const now = Date.now();
    const der = (await buildOcspResponse({ identity, serialNumber: 5n, status: 'good', ...ocspValidity(new Date(now)) })).der;
    const queries: string[] = [];
    let clock = now;
    const source = createStoreOcspSource(
      { getOcspResponse: async (serial, aki) => (queries.push(`${aki}/${serial}`), serial === '5' ? { body: der } : null) },
      { ttlMs: 5_000, now: () => clock },
    );
    expect((await source.find(lookup('5', 'ab')) as { der: Uint8Array } | null)?.der).toBe(der);
    expect(await source.find(lookup('6', 'ab'))).toBeNull();
    await source.find(lookup('5', 'ab'));
    await source.find(lookup('6', 'ab'));
    expect(queries).toEqual(['ab/5', 'ab/6']);
    clock += 5_001;
    await source.find(lookup('5', 'ab'));
    source.invalidate('5', 'ab');
    await source.find(lookup('5', 'ab'));
    expect(queries).toEqual(['ab/5', 'ab/6', 'ab/5', 'ab/5']);
    expect(await source.find(lookup('5', null))).toBeNull();
  });
});
