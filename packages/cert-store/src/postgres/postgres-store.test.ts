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

  it('opens without connecting with connectAtOpen false and migrations off: 503 while down, then served', async () => {
    const dataSource = await nextDatabase();
    // The schema exists (another process migrated it), as under serve --processes.
    await (await openStore({ driver: 'postgres', dataSource })).close();
    const issuer = testIssuer('Postgres Deferred CA');
    cluster.stopServer();
    let store: Awaited<ReturnType<typeof openStore>>;
    try {
      // With the default, the same open fails: it connects to read nothing but reachability.
      const refused = await openStore({ driver: 'postgres', dataSource }, { migrations: 'off', postgres: { connectionTimeoutMs: 2000 } }).catch((e: unknown) => e);
      expect((refused as { code: number }).code).toBe(503);
      store = await openStore({ driver: 'postgres', dataSource }, { migrations: 'off', connectAtOpen: false, postgres: { connectionTimeoutMs: 2000, onBackgroundError: () => undefined } });
      const error = await store.recordCertificate({ certificate: issuer.leaf('down.example').pem }).catch((e: unknown) => e);
      expect((error as { name: string }).name).toBe('StoreUnavailableError');
    } finally {
      cluster.startServer();
    }
    try {
      const recorded = await store.recordCertificate({ certificate: issuer.leaf('up.example').pem });
      expect(await store.getCertificate(recorded.serial, recorded.authorityKeyId)).not.toBeNull();
    } finally {
      await store.close();
    }
  });
});

describe('postgres: several instances on one database', () => {
  /** Resolves with the first change `store` reports, or rejects after `ms`. */
  function nextChange(store: Awaited<ReturnType<typeof openStore>>, ms: number) {
    let resolveChange: (change: import('../model.js').CertificateChange) => void = () => undefined;
    const promise = new Promise<import('../model.js').CertificateChange>((resolve) => (resolveChange = resolve));
    // Polling is slowed to a minute: only NOTIFY (or the catch-up after a reconnect) can deliver in time.
    const watch = store.watchChanges((change) => resolveChange(change), { pollIntervalMs: 60_000 });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no change within ${ms} ms`)), ms);
    });
    return {
      change: Promise.race([promise, timeout]).finally(() => clearTimeout(timer)),
      close: () => watch.close(),
    };
  }

  it('migrates once when instances start together, and shares CRL numbers', async () => {
    const dataSource = await nextDatabase();
    const config = { driver: 'postgres' as const, dataSource };
    const stores = await Promise.all([openStore(config), openStore(config), openStore(config)]);
    try {
      const client = new pg.Client({ connectionString: dataSource });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT version_id FROM goose_db_version ORDER BY id');
        expect(rows.map((r) => Number(r.version_id))).toEqual([0, 1, 2]);
      } finally {
        await client.end();
      }
      const numbers = await Promise.all(stores.flatMap((store) => Array.from({ length: 5 }, () => store.nextCrlNumber('ca'))));
      expect([...numbers].sort((a, b) => Number(a - b))).toEqual(Array.from({ length: 15 }, (_, i) => BigInt(i + 1)));
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("tells another instance about a revocation through NOTIFY, also after the server restarted", async () => {
    const config = { driver: 'postgres' as const, dataSource: await nextDatabase() };
    const a = await openStore(config);
    const b = await openStore(config, { postgres: { onBackgroundError: () => undefined } });
    const issuer = testIssuer('Postgres Notify CA');
    try {
      const first = await a.recordCertificate({ certificate: issuer.leaf('notify1.example').pem });
      const second = await a.recordCertificate({ certificate: issuer.leaf('notify2.example').pem });
      const watch = nextChange(b, 5000);
      // Let the watch take its starting point and LISTEN.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await a.revokeCertificate(first.serial, first.authorityKeyId, 1);
      expect(await watch.change).toMatchObject({ serial: first.serial, status: 'revoked', reason: 1 });
      await watch.close();

      const afterRestart = nextChange(b, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      cluster.stopServer();
      cluster.startServer();
      // The store reconnects by itself; the first calls after a restart may still meet a dead pooled connection.
      let revoked = false;
      for (let attempt = 0; attempt < 20 && !revoked; attempt += 1) {
        revoked = await a.revokeCertificate(second.serial, second.authorityKeyId, 4).then(
          () => true,
          async (error: { code: number }) => {
            expect(error.code).toBe(503);
            await new Promise((resolve) => setTimeout(resolve, 250));
            return false;
          },
        );
      }
      expect(revoked).toBe(true);
      expect(await afterRestart.change).toMatchObject({ serial: second.serial, status: 'revoked', reason: 4 });
      await afterRestart.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
