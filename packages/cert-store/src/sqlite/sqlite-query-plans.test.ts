/**
 * The listing queries must be answered from an index in listing order (keyset pages stay fast on
 * a large store: tools/bench/cert-store/list-page.bench.mjs); a plan that scans the table or sorts
 * the whole of it would regress silently, so the plans are checked here.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrateSchema } from '../migrations/migrator.js';
import type { ListCertificatesOptions } from '../model.js';
import { sqliteSchemaConnection } from './sqlite-database.js';
import { SqliteOperations } from './sqlite-operations.js';

async function plansOf(options: ListCertificatesOptions): Promise<string> {
  const db = new Database(':memory:');
  await migrateSchema(sqliteSchemaConnection(db));
  const captured: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    captured.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  new SqliteOperations(db).listCertificates(options);
  const sql = captured.at(-1)!;
  const parameters = (sql.match(/\?/g) ?? []).map(() => null);
  const plan = (prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as Array<{ detail: string }>).map((row) => row.detail).join('\n');
  db.close();
  return plan;
}

const cursorOf = async (options: ListCertificatesOptions): Promise<string> => {
  const db = new Database(':memory:');
  await migrateSchema(sqliteSchemaConnection(db));
  const status = options.status ?? 'revoked';
  db.prepare(
    `INSERT INTO certificates (serial_number, authority_key_identifier, ca_label, status, expiry, pem)
     VALUES ('1', 'aa', 'l', ?, '2030-01-01 00:00:00+00:00', 'p'), ('2', 'aa', 'l', ?, '2030-01-02 00:00:00+00:00', 'p')`,
  ).run(status, status);
  const cursor = new SqliteOperations(db).listCertificates({ ...options, limit: 1 }).nextCursor!;
  db.close();
  return cursor;
};

describe('SqliteOperations.listCertificates query plans', () => {
  const indexed: Array<[string, ListCertificatesOptions, string]> = [
    ['no filter', {}, 'certsmith_certificates_expiry'],
    ['an expiry window', { expiresAfter: new Date('2029-01-01T00:00:00Z'), expiresBefore: new Date('2031-01-01T00:00:00Z') }, 'certsmith_certificates_expiry'],
    ['a label', { label: 'l' }, 'certsmith_certificates_label_expiry'],
    ['a status other than good', { status: 'revoked' }, 'certsmith_certificates_not_good_expiry'],
    ['status good (nearly every row)', { status: 'good' }, 'certsmith_certificates_expiry'],
  ];
  for (const [what, options, index] of indexed) {
    it(`reads ${index} in order for ${what}, without sorting`, async () => {
      const plan = await plansOf(options);
      expect(plan).toContain(`USING INDEX ${index}`);
      expect(plan).not.toContain('TEMP B-TREE');
      const next = await plansOf({ ...options, cursor: await cursorOf(options) });
      expect(next).toContain(`USING INDEX ${index}`);
      expect(next).not.toContain('TEMP B-TREE');
    });
  }

  it('counts by label and status from a covering index (the metrics never read the certificates)', async () => {
    const db = new Database(':memory:');
    await migrateSchema(sqliteSchemaConnection(db));
    const captured: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      captured.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    new SqliteOperations(db).countCertificates();
    const plan = (prepare(`EXPLAIN QUERY PLAN ${captured.at(-1)!}`).all() as Array<{ detail: string }>).map((row) => row.detail).join('\n');
    db.close();
    expect(plan).toContain('COVERING INDEX certsmith_certificates_label_status');
  });

  it('finds names through the name index', async () => {
    expect(await plansOf({ name: 'a.example' })).toMatch(/certsmith_certificate_names/);
  });
});

describe('the SQLite name table (migration certsmith_006)', () => {
  const names = (db: Database.Database) =>
    (db.prepare(`SELECT name, serial_number AS s FROM certsmith_certificate_names ORDER BY name, s`).all() as Array<{ name: string; s: string }>).map(
      (row) => `${row.name}|${row.s}`,
    );

  it('has no index on (serial, AKI), and its triggers still keep it exact through updates and deletes', async () => {
    const db = new Database(':memory:');
    await migrateSchema(sqliteSchemaConnection(db));
    expect(db.prepare(`SELECT name FROM sqlite_master WHERE name = 'certsmith_certificate_names_row'`).all()).toEqual([]);
    db.exec(`INSERT INTO certificates (serial_number, authority_key_identifier, status, pem, common_name, sans)
      VALUES ('1', 'aa', 'good', 'p', 'a.example', '["a.example","b.example"]'), ('2', 'aa', 'good', 'p', 'a.example', 'not json')`);
    expect(names(db)).toEqual(['a.example|1', 'a.example|2', 'b.example|1']);
    db.exec(`UPDATE certificates SET sans = '["c.example"]' WHERE serial_number = '1'`);
    expect(names(db)).toEqual(['a.example|1', 'a.example|2', 'c.example|1']);
    db.exec(`UPDATE certificates SET common_name = NULL WHERE serial_number = '2'`);
    expect(names(db)).toEqual(['a.example|1', 'c.example|1']);
    db.exec(`DELETE FROM certificates WHERE serial_number = '1'`);
    expect(names(db)).toEqual([]);
    db.close();
  });
});
