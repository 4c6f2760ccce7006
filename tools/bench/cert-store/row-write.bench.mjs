#!/usr/bin/env node
/**
 * What writing one recorded certificate's row costs on a connection, outside the commit's fsync
 * (docs/performance.md, "Store-on allocation pass"): issued rows (a 20-byte decimal serial, a PEM,
 * DNS SANs, a 480-byte OCSP body) committed 4 to a transaction with `SqliteOperations.
 * insertCertificatesAtOnce`, as the calling-thread writer commits a busy turn's batch. Run
 * `npm run build` first; through `/work/bin/quiet` on the shared machine:
 *
 *   node tools/bench/cert-store/row-write.bench.mjs [rows=8000] [temp_store=default-of-the-store]
 *
 * Reported: user and system CPU µs per row of the timed commits (a fresh database of the store's
 * schema, 2,000 rows written first), and the JavaScript heap bytes the row's JavaScript
 * (`formatSqliteTime`, `rowToRecord`) allocates. `temp_store` (`FILE`, `MEMORY`, `DEFAULT`) overrides the store's
 * setting on the connection, to compare statement journals in a file and in memory; run the same
 * file from another checkout (`node /other/checkout/tools/bench/...`) to compare builds.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

const here = fileURLToPath(new URL('.', import.meta.url));
const load = (path) => import(join(here, '../../..', path));
const { migrateStore } = await load('packages/cert-store/dist/open-store.js');
const { openSqliteDatabase, parseSqliteDataSource } = await load('packages/cert-store/dist/sqlite/sqlite-database.js');
const { SqliteOperations } = await load('packages/cert-store/dist/sqlite/sqlite-operations.js');
const { rowToRecord } = await load('packages/cert-store/dist/record-mapping.js');
const { formatSqliteTime } = await load('packages/cert-store/dist/timestamps.js');

const total = Number(process.argv[2] ?? 8000);
const tempStore = process.argv[3];
const BATCH = 4;
const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-row-write-'));
try {
  const dataSource = join(dir, 'certs.db');
  await migrateStore({ driver: 'sqlite3', dataSource });
  const db = openSqliteDatabase(parseSqliteDataSource(dataSource));
  db.pragma('busy_timeout = 0');
  if (tempStore !== undefined) db.pragma(`temp_store = ${tempStore}`);
  const operations = new SqliteOperations(db);
  const pem = `-----BEGIN CERTIFICATE-----\n${randomBytes(560).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
  const row = () => ({
    serial: BigInt(`0x${randomBytes(20).toString('hex')}`).toString(),
    authorityKeyId: randomBytes(20).toString('hex'),
    label: '',
    status: 'good',
    reason: 0,
    expiry: new Date(Date.now() + 365 * 86_400_000),
    revokedAt: null,
    pem,
    issuedAt: new Date(),
    notBefore: new Date(Date.now() - 300_000),
    metadataJson: 'null',
    sansJson: '["bench.example.com","www.bench.example.com"]',
    commonName: 'bench.example.com',
    ocspResponse: { body: new Uint8Array(randomBytes(480)), expiry: new Date(Date.now() + 4 * 86_400_000) },
  });
  const batches = (rows) => Array.from({ length: Math.ceil(rows / BATCH) }, () => Array.from({ length: BATCH }, row));
  for (const batch of batches(2000)) operations.insertCertificatesAtOnce(batch);
  const timed = batches(total);
  const before = process.cpuUsage();
  // Bounded: one commit per batch.
  for (const batch of timed) {
    const outcome = operations.insertCertificatesAtOnce(batch);
    if (outcome !== 'committed') throw new Error(`commit ${outcome}`);
  }
  const cpu = process.cpuUsage(before);
  const rows = timed.length * BATCH;
  db.close();

  // JavaScript heap bytes per call: new-space usage over 5,000 calls (no GC expected in between with the default semi-space).
  const newSpaceUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_used_size;
  const sample = timed.flat().slice(0, 5000);
  const perCall = (work) => {
    for (const r of sample) work(r);
    const start = newSpaceUsed();
    for (const r of sample) work(r);
    const used = newSpaceUsed() - start;
    return used >= 0 ? `${Math.round(used / sample.length)} B` : 'a GC ran, not measured';
  };
  process.stdout.write(
    `temp_store ${tempStore ?? '(store default)'}: ${rows} rows in ${timed.length} commits, ` +
      `user ${(cpu.user / rows).toFixed(1)} µs/row, system ${(cpu.system / rows).toFixed(1)} µs/row; ` +
      `formatSqliteTime ${perCall((r) => formatSqliteTime(r.issuedAt))}, rowToRecord ${perCall(rowToRecord)}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
