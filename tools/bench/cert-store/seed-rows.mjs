/**
 * Rows for the inventory benchmarks (the package-level `list-page.bench.mjs` and the HTTP-level
 * `store-list` cells of `tools/bench/compare`), written in CFSSL's formats straight into a migrated
 * schema — SQL inserts, so the SQLite name triggers run as they would for CFSSL's inserts: 2 issuers,
 * 5 labels (`label0`…`label4`), 5% revoked, expiries spread from 30 days ago to two years ahead, one
 * DNS SAN each (`host<i>.example`, also the CN). The PEM is a placeholder: listings do not return or
 * parse it.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const requireFromStore = createRequire(join(root, 'packages/cert-store/package.json'));
const Database = requireFromStore('better-sqlite3');
const pg = requireFromStore('pg');

export const DAY = 86_400_000;
export const AKIS = ['f9dd6fc8a7b29c06bedc992be61c5000821bcde3', '0a1b2c3d4e5f60718293a4b5c6d7e8f901234567'];
const PEM = `-----BEGIN CERTIFICATE-----\n${'MIIB'.repeat(16)}\n`.repeat(12) + '-----END CERTIFICATE-----\n';

/** Row `i` of `rowCount`, its expiry relative to `now` (ms). */
export function benchRow(i, rowCount, now) {
  const name = `host${i}.example`;
  return {
    serial: (10n ** 30n + BigInt(i) * 7919n).toString(),
    aki: AKIS[i % 2],
    label: `label${i % 5}`,
    status: i % 20 === 0 ? 'revoked' : 'good',
    expiry: new Date(now - 30 * DAY + Math.floor((i * 760 * DAY) / rowCount)),
    name,
  };
}

const sqliteTime = (date) => date.toISOString().replace('T', ' ').replace(/\.000Z$/, '+00:00').replace(/Z$/, '+00:00');

/** Insert `rowCount` rows into the migrated SQLite file (one transaction), then ANALYZE. */
export function seedSqlite(file, rowCount, now = Date.now()) {
  const db = new Database(file);
  const insert = db.prepare(`INSERT INTO certificates (serial_number, authority_key_identifier, ca_label, status, reason, expiry, revoked_at, pem,
    issued_at, not_before, metadata, sans, common_name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < rowCount; i += 1) {
      const r = benchRow(i, rowCount, now);
      insert.run(r.serial, r.aki, r.label, r.status, r.status === 'revoked' ? 1 : 0, sqliteTime(r.expiry), '0001-01-01 00:00:00+00:00', PEM,
        sqliteTime(new Date(now)), sqliteTime(new Date(r.expiry.getTime() - 365 * DAY)), Buffer.from('null'), Buffer.from(JSON.stringify([r.name])), r.name);
    }
  })();
  db.exec('ANALYZE');
  db.close();
}

/** Insert `rowCount` rows into the migrated PostgreSQL database (5,000 per statement), then ANALYZE. */
export async function seedPostgres(dataSource, rowCount, now = Date.now()) {
  const client = new pg.Client({ connectionString: dataSource });
  await client.connect();
  try {
    for (let start = 0; start < rowCount; start += 5000) {
      const values = [];
      const params = [];
      for (let i = start; i < Math.min(rowCount, start + 5000); i += 1) {
        const r = benchRow(i, rowCount, now);
        const b = params.length;
        params.push(Buffer.from(r.serial), Buffer.from(r.aki), Buffer.from(r.label), Buffer.from(r.status), r.status === 'revoked' ? 1 : 0,
          r.expiry.toISOString(), JSON.stringify([r.name]), r.name);
        values.push(`($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, '0001-01-01 00:00:00+00', '${PEM}'::bytea, now(), now(), 'null', $${b + 7}, $${b + 8})`);
      }
      await client.query(`INSERT INTO certificates (serial_number, authority_key_identifier, ca_label, status, reason, expiry, revoked_at, pem,
        issued_at, not_before, metadata, sans, common_name) VALUES ${values.join(', ')}`, params);
    }
    await client.query('ANALYZE certificates');
  } finally {
    await client.end();
  }
}
