import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../open-store.js';
import { describeStoreConformance } from '../test-support/store-conformance.js';
import { startPostgresCluster } from '../test-support/postgres-cluster.js';
import type { PostgresCluster } from '../test-support/postgres-cluster.js';
import { testIssuer } from '../test-support/certificates.js';
import { serialToDecimal } from '../certificate-row.js';

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgresCluster();
}, 120_000);
afterAll(() => cluster?.stop());

let n = 0;
const nextDatabase = async () => await cluster.createDatabase(`store_${(n += 1)}`);

describeStoreConformance('postgres', async () => await openStore({ driver: 'postgres', dataSource: await nextDatabase() }));

describe('postgres: values as CFSSL (lib/pq) writes them', () => {
  it('stores raw bytes in bytea, Go zero time, jsonb null and arrays', async () => {
    const dataSource = await nextDatabase();
    const store = await openStore({ driver: 'postgres', dataSource });
    const issuer = testIssuer('Postgres Raw CA');
    const leaf = issuer.leaf('raw.example', { dns: ['raw.example', 'b.example'] });
    await store.recordCertificate({ certificate: leaf.pem, label: 'L' });
    await store.close();
    const client = new pg.Client({ connectionString: dataSource, options: '-c TimeZone=UTC' });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT encode(serial_number, 'escape') AS serial, encode(authority_key_identifier, 'escape') AS aki, encode(ca_label, 'escape') AS label,
         encode(status, 'escape') AS status, revoked_at::text AS revoked_at, jsonb_typeof(metadata) AS metadata, sans::text AS sans, common_name
         FROM certificates`,
      );
      expect(rows[0]).toEqual({
        serial: serialToDecimal(leaf.serialHex),
        aki: issuer.akiHex,
        label: 'L',
        status: 'good',
        revoked_at: '0001-01-01 00:00:00+00',
        metadata: 'null',
        sans: '["raw.example", "b.example"]',
        common_name: 'raw.example',
      });
    } finally {
      await client.end();
    }
  });

  it('answers 503 while the server is down and recovers when it is back, without reopening', async () => {
    const store = await openStore({ driver: 'postgres', dataSource: await nextDatabase() }, { postgres: { connectionTimeoutMs: 2000 } });
    const issuer = testIssuer('Postgres Restart CA');
    try {
      await store.recordCertificate({ certificate: issuer.leaf('before.example').pem });
      cluster.stopServer();
      try {
        const error = await store.recordCertificate({ certificate: issuer.leaf('down.example').pem }).catch((e: unknown) => e);
        expect((error as { code: number }).code).toBe(503);
        expect((error as { name: string }).name).toBe('StoreUnavailableError');
      } finally {
        cluster.startServer();
      }
      const after = await store.recordCertificate({ certificate: issuer.leaf('after.example').pem });
      expect(await store.getCertificate(after.serial, after.authorityKeyId)).not.toBeNull();
      expect((await store.listCertificates()).certificates).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
});
