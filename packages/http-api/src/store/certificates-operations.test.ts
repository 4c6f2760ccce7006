import type { Store } from '@certsmith/cert-store';
import { StoreUnavailableError, serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOpenApiDocument } from '../openapi.js';
import { memoryStore, serveApp } from '../test-support/store-app.js';
import type { ServedApp } from '../test-support/store-app.js';
import { createGetCertificateOperation, createListCertificatesOperation } from './certificates-operations.js';
import { STORE_UNAVAILABLE_MESSAGE, storeForRequests } from './request-store.js';
import type { StoredCertificate } from './stored-certificate.js';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const rootA = pki.root({ CN: 'inventory root A' }, { key: 'ecdsa-p256' });
const rootB = pki.root({ CN: 'inventory root B' }, { key: 'ecdsa-p256' });
const day = (n: number): Date => new Date(Date.UTC(2027, 0, 1) + n * 86_400_000);

/** 12 certificates: expiries day 1..12, labels a/b, issuers A/B, names `host<i>.example`. */
const leaves: Array<{ certificate: TestCertificate; label: string }> = Array.from({ length: 12 }, (_, index) => ({
  certificate: pki.leaf(`host${index}.example`, index % 3 === 0 ? rootB : rootA, { key: 'ecdsa-p256', notAfter: day(12 - index), dns: [`host${index}.example`, `alt${index}.example`] }),
  label: index % 2 === 0 ? 'a' : 'b',
}));
const serialOf = (certificate: TestCertificate): string => serialToDecimal(certificate.serialHex.toLowerCase());

type Listed = { certificates: StoredCertificate[]; next_cursor: string | null };

describe('GET /api/v1/certsmith/certificates', () => {
  let store: Store;
  let app: ServedApp;
  beforeAll(async () => {
    store = await memoryStore();
    await Promise.all(leaves.map(({ certificate, label }) => store.recordCertificate({ certificate: certificate.pem, label })));
    await store.revokeCertificate(serialOf(leaves[4]!.certificate), toHex(rootA.subjectKeyId!), 1);
    const requestStore = storeForRequests(store, pino({ level: 'silent' }));
    app = await serveApp({ operations: [createListCertificatesOperation({ store: requestStore }), createGetCertificateOperation({ store: requestStore })] });
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  const list = async (query: string): Promise<Listed> => {
    const response = await app.call(`/api/v1/certsmith/certificates${query}`);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.result as Listed;
  };

  it('lists every certificate in expiry order, without PEMs unless asked', async () => {
    const page = await list('');
    expect(page.certificates.map((row) => row.common_name)).toEqual(leaves.map((_, index) => `host${index}.example`).reverse());
    expect(page.next_cursor).toBeNull();
    expect(page.certificates[0]).toEqual({
      serial_number: serialOf(leaves[11]!.certificate),
      authority_key_identifier: toHex(rootA.subjectKeyId!),
      ca_label: 'b',
      status: 'good',
      reason: 0,
      expiry: '2027-01-02T00:00:00Z',
      revoked_at: null,
      issued_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      not_before: expect.stringMatching(/Z$/),
      common_name: 'host11.example',
      sans: ['host11.example', 'alt11.example'],
      metadata: null,
    });
    expect((await list('?include_pem=true')).certificates[0]!.pem).toBe(leaves[11]!.certificate.pem);
  });

  it('answers the compact envelope JSON.stringify would write (the rows come as JSON text from the store)', async () => {
    for (const query of ['', '?include_pem=true&limit=3', '?label=a&limit=2']) {
      const response = await fetch(`${app.url}/api/v1/certsmith/certificates${query}`);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await response.text();
      const body = JSON.parse(text) as { result: Listed };
      expect(Object.keys(body)).toEqual(['success', 'result', 'errors', 'messages']);
      expect(Object.keys(body.result)).toEqual(['certificates', 'next_cursor']);
      expect(text).toBe(`${JSON.stringify(body)}\n`);
    }
  });

  it('walks pages with the cursor: each row once, in order, and the last page says so', async () => {
    const seen: string[] = [];
    let query = '?limit=5';
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await list(query);
      seen.push(...page.certificates.map((row) => row.common_name!));
      if (page.next_cursor === null) break;
      query = `?limit=5&cursor=${encodeURIComponent(page.next_cursor)}`;
    }
    expect(seen).toEqual(leaves.map((_, index) => `host${index}.example`).reverse());
  });

  it.each<[string, string, string[]]>([
    ['label', '?label=a', ['host10.example', 'host8.example', 'host6.example', 'host4.example', 'host2.example', 'host0.example']],
    ['status', '?status=revoked', ['host4.example']],
    ['CN', '?name=host7.example', ['host7.example']],
    ['DNS SAN', '?name=alt7.example', ['host7.example']],
    ['issuer (AKI with colons, upper case)', `?authority_key_id=${toHex(rootB.subjectKeyId!).toUpperCase().match(/../g)!.join(':')}`, ['host9.example', 'host6.example', 'host3.example', 'host0.example']],
    ['expiry window', `?expires_after=${day(3).toISOString()}&expires_before=${day(5).toISOString()}`, ['host8.example', 'host7.example']],
    ['label and status', '?label=a&status=good', ['host10.example', 'host8.example', 'host6.example', 'host2.example', 'host0.example']],
  ])('filters by %s', async (_filter, query, names) => {
    expect((await list(query)).certificates.map((row) => row.common_name)).toEqual(names);
  });

  it.each<[string, string]>([
    ['?limit=0', 'limit must be an integer from 1 to 1000, got "0"'],
    ['?limit=1001', 'limit must be an integer from 1 to 1000, got "1001"'],
    ['?limit=ten', 'limit must be an integer from 1 to 1000, got "ten"'],
    ['?status=valid', 'status must be "good" or "revoked" or "unknown", got "valid"'],
    ['?expires_after=tomorrow', 'expires_after must be an RFC 3339 time such as 2027-01-01T00:00:00Z, got "tomorrow"'],
    ['?authority_key_id=xyz', 'authority_key_id must be the hex of a key identifier (colons allowed), got "xyz"'],
    ['?label=', 'label must be 1 to 128 characters'],
    ['?label=a&label=b', 'query parameter "label" is given more than once'],
    ['?colour=red', 'unknown query parameter "colour"'],
    ['?cursor=bm90LWEtY3Vyc29y', 'invalid cursor'],
    ['?expires_after=2027-02-01T00:00:00Z&expires_before=2027-01-01T00:00:00Z', 'expires_before must not be earlier than expires_after'],
  ])('answers %s with 400 naming the problem', async (query, message) => {
    const response = await app.call(`/api/v1/certsmith/certificates${query}`);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ code: 400, message }]);
  });

  it('refuses a cursor replayed with other filters', async () => {
    const first = await list('?limit=2&label=a');
    const response = await app.call(`/api/v1/certsmith/certificates?limit=2&label=b&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ code: 400, message: 'the cursor belongs to a listing with other filters' }]);
  });

  describe('GET /api/v1/certsmith/certificates/{aki}/{serial}', () => {
    it('returns one certificate with its PEM, the AKI in any case and with colons', async () => {
      const { certificate } = leaves[3]!;
      const aki = toHex(rootB.subjectKeyId!).toUpperCase().match(/../g)!.join(':');
      const response = await app.call(`/api/v1/certsmith/certificates/${encodeURIComponent(aki)}/${serialOf(certificate)}`);
      expect(response.status).toBe(200);
      expect(response.body.result).toMatchObject({ serial_number: serialOf(certificate), authority_key_identifier: toHex(rootB.subjectKeyId!), ca_label: 'b', pem: certificate.pem });
    });

    it('answers 404 for a certificate it does not have', async () => {
      const response = await app.call(`/api/v1/certsmith/certificates/${toHex(rootA.subjectKeyId!)}/12345`);
      expect(response.status).toBe(404);
      expect(response.body.errors).toEqual([{ code: 404, message: `no certificate with serial 12345 and authority key identifier ${toHex(rootA.subjectKeyId!)}` }]);
    });

    it.each<[string, string]>([
      [`/${'ab'.repeat(20)}/0x1F`, 'serial must be the decimal serial number'],
      ['/not-hex/1', 'aki must be the hex of a key identifier (colons allowed), got "not-hex"'],
      [`/${'ab'.repeat(20)}/1?serial=2`, 'query parameter "serial" is given more than once'],
    ])('answers %s with 400', async (path, message) => {
      const response = await app.call(`/api/v1/certsmith/certificates${path}`);
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([{ code: 400, message }]);
    });

    it('answers 404 for paths beyond the template and 405 for POST', async () => {
      expect((await app.call(`/api/v1/certsmith/certificates/${'ab'.repeat(20)}/1/pem`)).status).toBe(404);
      expect((await app.call('/api/v1/cfssl/certificates')).status).toBe(404);
      const post = await app.call('/api/v1/certsmith/certificates', { method: 'POST', body: '{}' });
      expect(post.status).toBe(405);
      expect(post.body.errors).toEqual([{ code: 405, message: 'Method is not allowed:"POST"' }]);
    });
  });
});

describe('the inventory when the store is unreachable', () => {
  it('answers 503 with Retry-After and a fixed message, never the driver\'s text', async () => {
    const unavailable = new StoreUnavailableError('the certificate database is unavailable: connect ECONNREFUSED 10.1.2.3:5432', { retryAfterSeconds: 3 });
    const down = { driver: 'postgres', listCertificates: () => Promise.reject(unavailable), listCertificatesJson: () => Promise.reject(unavailable), findCertificate: () => Promise.reject(unavailable) } as unknown as Store;
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const requestStore = storeForRequests(down, logger);
    const app = await serveApp({ operations: [createListCertificatesOperation({ store: requestStore }), createGetCertificateOperation({ store: requestStore })] });
    try {
      for (const path of ['/api/v1/certsmith/certificates', `/api/v1/certsmith/certificates/${'ab'.repeat(20)}/1`, '/api/v1/certsmith/certificates']) {
        const response = await app.call(path);
        expect(response.status).toBe(503);
        expect(response.headers.get('retry-after')).toBe('3');
        expect(response.body.errors).toEqual([{ code: 503, message: STORE_UNAVAILABLE_MESSAGE }]);
      }
      // The operator reads the driver's text once, with the count of failures not logged since.
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'certificate store unavailable: requests that need it answer 503', driver: 'postgres', err: { message: unavailable.message } });
    } finally {
      await app.close();
    }
  });
});

describe('the inventory in the OpenAPI document', () => {
  it('describes the path and query parameters and the 404', async () => {
    const store = await memoryStore();
    try {
      const document = createOpenApiDocument([createListCertificatesOperation({ store }), createGetCertificateOperation({ store })]) as {
        paths: Record<string, Record<string, { operationId: string; parameters: Array<{ name: string; in: string; required: boolean }>; responses: Record<string, unknown> }>>;
      };
      expect(Object.keys(document.paths)).toEqual(['/api/v1/certsmith/certificates/{aki}/{serial}', '/api/v1/certsmith/certificates']);
      const one = document.paths['/api/v1/certsmith/certificates/{aki}/{serial}']!['get']!;
      expect(one.operationId).toBe('certificate');
      expect(one.parameters.map(({ name, in: where, required }) => [name, where, required])).toEqual([['aki', 'path', true], ['serial', 'path', true]]);
      expect(one.responses['404']).toEqual({ $ref: '#/components/responses/NotFound' });
      const many = document.paths['/api/v1/certsmith/certificates']!['get']!;
      expect(many.parameters.map(({ name, in: where, required }) => [name, where, required])).toEqual([
        ['label', 'query', false],
        ['status', 'query', false],
        ['name', 'query', false],
        ['authority_key_id', 'query', false],
        ['expires_after', 'query', false],
        ['expires_before', 'query', false],
        ['limit', 'query', false],
        ['cursor', 'query', false],
        ['include_pem', 'query', false],
      ]);
      expect(many.responses['404']).toBeUndefined();
    } finally {
      await store.close();
    }
  });
});
