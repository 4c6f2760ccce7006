/**
 * The ports against the real certificate store (SQLite): the store satisfies `OcspResponseStore`
 * and `nextCrlNumber` as is, its rows feed `signOcspForRecord` and CRLs, and a signed response goes
 * back through `upsertOcspResponse` — the whole wiring of revoke → CRL + OCSP, minus HTTP.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Store } from '@certsmith/cert-store';
import { openStore } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { encodePem, parseCertificate } from '@certsmith/x509-core';

import type { RevokedCertificate } from './crl-builder.js';
import { CrlCache } from './crl-cache.js';
import { createOcspIssuer } from './ocsp-issuer.js';
import { refreshOcspResponses, signOcspForRecord } from './ocsp-refresh.js';
import { parseOcspResponse } from './ocsp-response-parser.js';
import { OcspResponder } from './ocsp-responder.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { createRevocationSigner } from './revocation-signer.js';
import { createStoreOcspSource } from './store-ocsp-source.js';
import type { CrlStore } from './store-ports.js';
import { hierarchy, keySigner, openssl, opensslText, scratch } from './test-support/pki.js';

const files = scratch();
const h = hierarchy(new TestPki(), 'store-integration', 'ecdsa-p256');
let store: Store;

/** The one adapter the wiring needs: revoked, unexpired rows of one CA, page by page. */
function crlStore(source: Store): CrlStore {
  return {
    async *revokedCertificates(authorityKeyId, now): AsyncIterable<RevokedCertificate> {
      let cursor: string | undefined;
      do {
        const page = await source.listCertificates({ status: 'revoked', authorityKeyId, expiresAfter: now, limit: 1000, ...(cursor ? { cursor } : {}) });
        yield* page.certificates;
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
    },
    nextCrlNumber: (authorityKeyId) => source.nextCrlNumber(authorityKeyId),
  };
}

beforeAll(async () => {
  store = await openStore({ driver: 'sqlite3', dataSource: join(files.dir, 'certs.db') }, { sqlite: { thread: false } });
  await store.recordCertificate({ certificate: h.leaf.pem });
  await store.recordCertificate({ certificate: h.other.pem });
});
afterAll(async () => {
  await store.close();
  files.cleanup();
});

function requestFor(certificatePem: string): Uint8Array {
  const out = join(files.dir, `req-${Math.random().toString(36).slice(2)}.der`);
  opensslText(['ocsp', '-issuer', files.file('ca.pem', h.ca.pem), '-cert', files.file('cert.pem', certificatePem), '-no_nonce', '-reqout', out]);
  return Uint8Array.from(readFileSync(out));
}

describe('revocation over @certsmith/cert-store', () => {
  it('revokes, lists the certificate in a CRL openssl checks, and answers OCSP revoked from the stored response', async () => {
    const ca = await createRevocationSigner(keySigner(h.ca));
    const identity = createOcspSigningIdentity({ signer: ca });
    const serial = BigInt(`0x${parseCertificate(h.leaf.der).serialNumberHex}`).toString();
    const aki = ca.keyIdentifierHex;

    // Issuance: a response for every recorded certificate.
    const rows = (await store.listCertificates({ authorityKeyId: aki })).certificates;
    expect(rows).toHaveLength(2);
    const refreshed = await refreshOcspResponses({ certificates: rows, identityFor: (key) => (key === aki ? identity : undefined), save: (response) => store.upsertOcspResponse(response) });
    expect(refreshed).toMatchObject({ signed: 2, failed: [] });

    const source = createStoreOcspSource(store);
    const responder = new OcspResponder({ source, issuers: [createOcspIssuer(identity)] });
    const before = await responder.handle({ method: 'POST', path: '/', body: requestFor(h.leaf.pem) });
    expect(parseOcspResponse(before.body).basic!.responses[0]!.status).toBe('good');

    // Revocation: the row, then its response and the CRL, then the caches.
    const revoked = await store.revokeCertificate(serial, aki, 1);
    await store.upsertOcspResponse(await signOcspForRecord(identity, revoked));
    source.invalidate(serial, aki);
    const cache = new CrlCache({ store: crlStore(store) });
    cache.invalidate(aki);
    const crl = await cache.get(ca);
    expect(crl).toMatchObject({ entryCount: 1, crlNumber: 1n });

    const after = await responder.handle({ method: 'POST', path: '/', body: requestFor(h.leaf.pem) });
    expect(parseOcspResponse(after.body).basic!.responses[0]).toMatchObject({ status: 'revoked', reason: 1 });
    const crlFile = files.file('store.crl.pem', encodePem('X509 CRL', crl.der));
    const check = (pem: string) => openssl(['verify', '-crl_check', '-CAfile', files.file('ca.pem', h.ca.pem), '-CRLfile', crlFile, files.file('check.pem', pem)]).output;
    expect(check(h.leaf.pem)).toContain('certificate revoked');
    expect(check(h.other.pem)).toContain(': OK');
    expect((await cache.rebuild(ca)).crlNumber).toBe(2n);
  });
});
