import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbConfig } from '../db-config.js';
import { checkStore, migrateStore, openStore } from '../open-store.js';
import { serialToDecimal } from '../certificate-row.js';
import { startPostgresCluster } from '../test-support/postgres-cluster.js';
import type { PostgresCluster } from '../test-support/postgres-cluster.js';
import { testIssuer } from '../test-support/certificates.js';

/** SQL access to a database beside the store, to build what CFSSL users have and inspect the result. */
interface RawDatabase {
  exec(sql: string): Promise<void>;
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

interface Driver {
  name: 'sqlite3' | 'postgres';
  fresh(): Promise<DbConfig>;
  raw(config: DbConfig): Promise<RawDatabase>;
  /** CFSSL 1.2.0's 001 (as `goose up` with its files leaves it) and one row as 1.2.0 writes it. */
  legacySql(serial: string, pem: string): string;
}

const dir = mkdtempSync(join(tmpdir(), 'certsmith-migrations-'));
let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  cluster = await startPostgresCluster();
}, 120_000);
afterAll(() => {
  cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
const sqlite: Driver = {
  name: 'sqlite3',
  fresh: async () => ({ driver: 'sqlite3', dataSource: join(dir, `m${(counter += 1)}.db`) }),
  async raw(config) {
    const db = new Database(config.dataSource);
    return {
      exec: async (sql) => void db.exec(sql),
      rows: async (sql) => db.prepare(sql).all() as Array<Record<string, unknown>>,
      close: async () => void db.close(),
    };
  },
  legacySql: (serial, pem) => `
    CREATE TABLE goose_db_version (id INTEGER PRIMARY KEY AUTOINCREMENT, version_id INTEGER NOT NULL, is_applied INTEGER NOT NULL, tstamp TIMESTAMP DEFAULT (datetime('now')));
    INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, 1), (1, 1);
    CREATE TABLE certificates (serial_number blob NOT NULL, authority_key_identifier blob NOT NULL, ca_label blob, status blob NOT NULL,
      reason int, expiry timestamp, revoked_at timestamp, pem blob NOT NULL, PRIMARY KEY(serial_number, authority_key_identifier));
    CREATE TABLE ocsp_responses (serial_number blob NOT NULL, authority_key_identifier blob NOT NULL, body blob NOT NULL, expiry timestamp,
      PRIMARY KEY(serial_number, authority_key_identifier),
      FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier));
    INSERT INTO certificates VALUES ('${serial}', '', '', 'good', 0, '2099-01-01 00:00:00+00:00', '0001-01-01 00:00:00+00:00', '${pem}');`,
};

const postgres: Driver = {
  name: 'postgres',
  fresh: async () => ({ driver: 'postgres', dataSource: await cluster!.createDatabase(`m${(counter += 1)}`) }),
  async raw(config) {
    const client = new pg.Client({ connectionString: config.dataSource, options: '-c TimeZone=UTC' });
    await client.connect();
    return {
      exec: async (sql) => void (await client.query(sql)),
      rows: async (sql) => (await client.query(sql)).rows as Array<Record<string, unknown>>,
      close: async () => await client.end(),
    };
  },
  legacySql: (serial, pem) => `
    CREATE TABLE goose_db_version (id serial NOT NULL, version_id bigint NOT NULL, is_applied boolean NOT NULL, tstamp timestamp NULL default now(), PRIMARY KEY(id));
    INSERT INTO goose_db_version (version_id, is_applied) VALUES (0, true), (1, true);
    CREATE TABLE certificates (serial_number bytea NOT NULL, authority_key_identifier bytea NOT NULL, ca_label bytea, status bytea NOT NULL,
      reason int, expiry timestamptz, revoked_at timestamptz, pem bytea NOT NULL, PRIMARY KEY(serial_number, authority_key_identifier));
    CREATE TABLE ocsp_responses (serial_number bytea NOT NULL, authority_key_identifier bytea NOT NULL, body bytea NOT NULL, expiry timestamptz,
      PRIMARY KEY(serial_number, authority_key_identifier),
      FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier));
    INSERT INTO certificates VALUES ('${serial}', '', '', 'good', 0, '2099-01-01 00:00:00+00', '0001-01-01 00:00:00+00', '${pem}');`,
};

const ALL = [
  '001_CreateCertificates',
  '002_AddMetadataToCertificates',
  'certsmith_001_inventory_indexes',
  'certsmith_002_crl_numbers',
  'certsmith_003_certificate_changes',
  'certsmith_004_sqlite_text_columns',
  'certsmith_005_label_status_index',
  'certsmith_006_leaner_indexes',
];

async function gooseRows(raw: RawDatabase): Promise<Array<[number, boolean]>> {
  return (await raw.rows('SELECT version_id, is_applied FROM goose_db_version ORDER BY id')).map((r) => [Number(r.version_id), Boolean(r.is_applied)]);
}

for (const driver of [sqlite, postgres]) {
  describe(`${driver.name}: migrateStore / checkStore`, () => {
    it('creates the schema once, recording CFSSL migrations in goose_db_version and certsmith ones in certsmith_migrations', async () => {
      const config = await driver.fresh();
      const before = await checkStore(config);
      expect(before).toMatchObject({ applied: [], pending: ALL, gooseVersion: null, upToDate: false });
      expect(await migrateStore(config)).toEqual(ALL);
      expect(await migrateStore(config)).toEqual([]);
      expect(await checkStore(config)).toMatchObject({ applied: ALL, pending: [], gooseVersion: 2, problems: [], upToDate: true });
      const raw = await driver.raw(config);
      try {
        expect(await gooseRows(raw)).toEqual([
          [0, true],
          [1, true],
          [2, true],
        ]);
        expect((await raw.rows('SELECT name FROM certsmith_migrations ORDER BY name')).map((r) => r.name)).toEqual(ALL.slice(2));
      } finally {
        await raw.close();
      }
    });

    it("refuses to open a stale schema in 'check' mode, naming the pending migrations and the fix", async () => {
      const config = await driver.fresh();
      const error = (await openStore(config, { migrations: 'check' }).catch((e: unknown) => e)) as Error & { code: number };
      expect(error.code).toBe(11000);
      expect(error.message).toContain('pending migrations 001_CreateCertificates');
      expect(error.message).toContain('certsmith db migrate');
    });

    it('upgrades a CFSSL 1.2.0 database in place: rows kept (empty AKI, zero revoked_at), 002 added, goose told', async () => {
      const config = await driver.fresh();
      const issuer = testIssuer(`${driver.name} Legacy CA`);
      const leaf = issuer.leaf('legacy-upgrade.example');
      const serial = serialToDecimal(leaf.serialHex);
      const raw = await driver.raw(config);
      try {
        await raw.exec(driver.legacySql(serial, leaf.pem));
        expect(await checkStore(config)).toMatchObject({ applied: ['001_CreateCertificates'], gooseVersion: 1, upToDate: false });
        expect(await migrateStore(config)).toEqual(ALL.slice(1));
        expect(await gooseRows(raw)).toEqual([
          [0, true],
          [1, true],
          [2, true],
        ]);
      } finally {
        await raw.close();
      }
      const store = await openStore(config, { migrations: 'check' });
      try {
        const row = await store.findCertificate(serial, issuer.akiHex);
        expect(row).toMatchObject({ serial, authorityKeyId: '', status: 'good', revokedAt: null, issuedAt: null, commonName: null });
        expect((await store.listCertificates()).certificates.map((c) => c.serial)).toEqual([serial]);
        // The name index was filled for rows that existed before the upgrade (CN from migration 002 is NULL here).
        expect((await store.listCertificates({ name: 'legacy-upgrade.example' })).certificates).toEqual([]);
        await store.revokeCertificate(serial, '', 1);
        expect((await store.getCertificate(serial, ''))!.status).toBe('revoked');
      } finally {
        await store.close();
      }
    });

    it('adopts tables created by hand from CFSSL files (no goose state) without touching them', async () => {
      const config = await driver.fresh();
      const issuer = testIssuer(`${driver.name} Handmade CA`);
      await migrateStore(config);
      const store = await openStore(config);
      await store.recordCertificate({ certificate: issuer.leaf('handmade.example').pem });
      await store.close();
      const raw = await driver.raw(config);
      try {
        await raw.exec('DROP TABLE goose_db_version; DROP TABLE certsmith_migrations;');
      } finally {
        await raw.close();
      }
      expect(await migrateStore(config)).toEqual(ALL);
      const reopened = await openStore(config, { migrations: 'check' });
      try {
        expect((await reopened.listCertificates({ name: 'handmade.example' })).certificates).toHaveLength(1);
      } finally {
        await reopened.close();
      }
    });
  });
}

describe('sqlite3: migrateStore on a 1.2.0-era file (columns declared bytea)', () => {
  it('rebuilds the tables with blob columns and restores the serials SQLite had rounded, from each certificate', async () => {
    const config = await sqlite.fresh();
    const issuer = testIssuer('SQLite Bytea CA');
    const serialHex = (n: number) => `4${n}`.padEnd(40, 'a1b2c3d4e5');
    const leaves = [issuer.leaf('bytea1.example', { serialHex: serialHex(1) }), issuer.leaf('bytea2.example', { serialHex: serialHex(2) })];
    // 20-byte serials, as CFSSL makes them: far beyond what a REAL keeps.
    const serials = leaves.map((leaf) => serialToDecimal(leaf.serialHex));
    const raw = await sqlite.raw(config);
    try {
      await raw.exec(sqlite.legacySql(serials[0]!, leaves[0]!.pem).replaceAll(' blob', ' bytea'));
      await raw.exec(`INSERT INTO certificates VALUES ('${serials[1]}', '${issuer.akiHex}', 'L', 'good', 0, '2099-01-01 00:00:00+00:00', '0001-01-01 00:00:00+00:00', '${leaves[1]!.pem}');
        INSERT INTO ocsp_responses VALUES ('${serials[1]}', '${issuer.akiHex}', CAST(X'3003' AS TEXT), '2099-01-01 00:00:00+00:00');`);
      expect((await raw.rows(`SELECT typeof(serial_number) AS t FROM certificates`)).map((r) => r.t)).toEqual(['real', 'real']);
    } finally {
      await raw.close();
    }
    expect((await checkStore(config)).pending).toContain('certsmith_004_sqlite_text_columns');
    await migrateStore(config);
    expect(await checkStore(config)).toMatchObject({ upToDate: true, problems: [] });
    const store = await openStore(config, { migrations: 'check' });
    try {
      expect((await store.findCertificate(serials[0]!, issuer.akiHex))!.authorityKeyId).toBe('');
      expect((await store.getCertificate(serials[1]!, issuer.akiHex))!.label).toBe('L');
      expect(Buffer.from((await store.getOcspResponse(serials[1]!, issuer.akiHex))!.body).toString('hex')).toBe('3003');
      expect((await store.listCertificates({ name: 'bytea2.example' })).certificates).toEqual([]);
      const leaf = issuer.leaf('bytea3.example');
      const record = await store.recordCertificate({ certificate: leaf.pem });
      expect((await store.listCertificates({ name: 'bytea3.example' })).certificates.map((c) => c.serial)).toEqual([record.serial]);
    } finally {
      await store.close();
    }
  });
});

describe('postgres: checkStore', () => {
  it('names a sans column that is not jsonb (an older CFSSL 002) and how to convert it', async () => {
    const config = await postgres.fresh();
    const raw = await postgres.raw(config);
    try {
      await raw.exec(`CREATE TABLE certificates (serial_number bytea NOT NULL, authority_key_identifier bytea NOT NULL, ca_label bytea,
        status bytea NOT NULL, reason int, expiry timestamptz, revoked_at timestamptz, pem bytea NOT NULL, issued_at timestamptz,
        not_before timestamptz, metadata jsonb, sans TEXT, common_name TEXT, PRIMARY KEY(serial_number, authority_key_identifier))`);
    } finally {
      await raw.close();
    }
    const status = await checkStore(config);
    expect(status.upToDate).toBe(false);
    expect(status.problems).toEqual([
      'certificates.sans is text; certsmith needs jsonb as in CFSSL\'s migration 002: ALTER TABLE certificates ALTER COLUMN sans TYPE jsonb USING sans::jsonb',
    ]);
  });
});
