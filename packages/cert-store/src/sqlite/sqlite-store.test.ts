import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../open-store.js';
import { describeStoreConformance } from '../test-support/store-conformance.js';
import { testIssuer } from '../test-support/certificates.js';
import { serialToDecimal } from '../certificate-row.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-sqlite-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const nextFile = () => join(dir, `store-${(n += 1)}.db`);

describeStoreConformance('sqlite (thread, issued rows committed on the calling thread)', async () => await openStore({ driver: 'sqlite3', dataSource: nextFile() }));
describeStoreConformance('sqlite (thread, every write in the thread)', async () =>
  await openStore({ driver: 'sqlite3', dataSource: nextFile() }, { sqlite: { recordOnCallingThread: false } }),
);
describeStoreConformance('sqlite (inline)', async () => await openStore({ driver: 'sqlite3', dataSource: nextFile() }, { sqlite: { thread: false } }));

describe('sqlite: values as CFSSL writes them', () => {
  it('stores TEXT in blob columns, go-sqlite3 times, JSON as BLOB, the OCSP body as TEXT with its bytes', async () => {
    const file = nextFile();
    const store = await openStore({ driver: 'sqlite3', dataSource: file });
    const issuer = testIssuer('SQLite Raw CA');
    const leaf = issuer.leaf('raw.example', { dns: ['raw.example'] });
    const record = await store.recordCertificate({ certificate: leaf.pem });
    await store.upsertOcspResponse({ serial: record.serial, authorityKeyId: record.authorityKeyId, body: new Uint8Array([0x30, 0x00, 0x41]), expiry: new Date('2030-01-02T03:04:05.600Z') });
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const row = db
        .prepare(
          `SELECT typeof(serial_number) AS ts, serial_number, typeof(authority_key_identifier) AS ta, ca_label, typeof(ca_label) AS tl, status,
           reason, typeof(reason) AS tr, revoked_at, typeof(revoked_at) AS trv, expiry, typeof(metadata) AS tm, CAST(metadata AS TEXT) AS metadata,
           typeof(sans) AS tsans, CAST(sans AS TEXT) AS sans, common_name, typeof(pem) AS tp FROM certificates`,
        )
        .get() as Record<string, unknown>;
      expect(row).toMatchObject({
        ts: 'text',
        serial_number: serialToDecimal(leaf.serialHex),
        ta: 'text',
        ca_label: '',
        tl: 'text',
        status: 'good',
        reason: 0,
        tr: 'integer',
        revoked_at: '0001-01-01 00:00:00+00:00',
        trv: 'text',
        tm: 'blob',
        metadata: 'null',
        tsans: 'blob',
        sans: '["raw.example"]',
        common_name: 'raw.example',
        tp: 'text',
      });
      expect(row.expiry).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\+00:00$/);
      const ocsp = db.prepare(`SELECT typeof(body) AS t, hex(CAST(body AS BLOB)) AS body, expiry FROM ocsp_responses`).get();
      expect(ocsp).toEqual({ t: 'text', body: '300041', expiry: '2030-01-02 03:04:05.6+00:00' });
    } finally {
      db.close();
    }
  });

  it('reads rows as CFSSL 1.2.0 left them: empty AKI, SQLite CURRENT_TIMESTAMP revoked_at, no 002 columns written', async () => {
    const file = nextFile();
    (await openStore({ driver: 'sqlite3', dataSource: file })).close();
    const issuer = testIssuer('SQLite Old CA');
    const leaf = issuer.leaf('legacy.example');
    const serial = serialToDecimal(leaf.serialHex);
    const db = new Database(file);
    db.prepare(
      `INSERT INTO certificates (serial_number, authority_key_identifier, ca_label, status, reason, expiry, revoked_at, pem)
       VALUES (?, '', '', 'revoked', 1, ?, '2026-11-25 23:26:23', ?)`,
    ).run(serial, '2099-02-23 23:21:00+00:00', leaf.pem);
    db.close();
    const store = await openStore({ driver: 'sqlite3', dataSource: file });
    try {
      const row = await store.findCertificate(serial, issuer.akiHex);
      expect(row).toMatchObject({ serial, authorityKeyId: '', status: 'revoked', issuedAt: null, notBefore: null, sans: [], commonName: null, metadata: null });
      expect(row!.revokedAt!.toISOString()).toBe('2026-11-25T23:26:23.000Z');
      expect((await store.listCertificates({ status: 'revoked' })).certificates).toHaveLength(1);
    } finally {
      await store.close();
    }
  });

  it('answers 503 when the file is locked longer than the busy timeout', async () => {
    const file = nextFile();
    const store = await openStore({ driver: 'sqlite3', dataSource: file }, { sqlite: { busyTimeoutMs: 50 } });
    const blocker = new Database(file);
    blocker.exec('BEGIN EXCLUSIVE');
    try {
      const issuer = testIssuer('SQLite Busy CA');
      const error = await store.recordCertificate({ certificate: issuer.leaf('busy.example').pem }).catch((e: unknown) => e);
      expect((error as { code: number }).code).toBe(503);
      expect((error as { retryAfterSeconds: number }).retryAfterSeconds).toBeGreaterThan(0);
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    await expect(store.ping()).resolves.toBeUndefined();
    await store.close();
  });
});
