#!/usr/bin/env node
/**
 * Inventory listing on a 100,000-row store (issue 20: a page must answer in < 50 ms at p99), for
 * SQLite (store thread) and PostgreSQL. Run `npx tsc -b tsconfig.json` first; through
 * `/work/bin/quiet` on the shared machine:
 *
 *   node tools/bench/cert-store/list-page.bench.mjs [rows=100000] [iterations=200]
 *
 * The rows (`seed-rows.mjs`) are written in CFSSL's formats straight into the migrated schema (so
 * the SQLite name triggers run as they would for CFSSL's inserts): 2 issuers, 5 labels, 5% revoked,
 * expiries spread from 30 days ago to two years ahead, one DNS SAN each. Each scenario asks for a
 * 100-row page `iterations` times through the Store API (thread hop or pool round trip included) and
 * reports p50/p99 latency. The HTTP-level cells (`tools/bench/compare`, `--ops store-list`) use the
 * same rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { DAY, seedPostgres as seedPostgresRows, seedSqlite as seedSqliteRows } from './seed-rows.mjs';
import { startThrowawayPostgres } from './throwaway-postgres.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = join(here, '../../..');
const { openStore, migrateStore } = await import(join(root, 'packages/cert-store/dist/index.js'));

const rowCount = Number(process.argv[2] ?? 100_000);
const iterations = Number(process.argv[3] ?? 200);
const now = Date.now();
const seedSqlite = (file) => seedSqliteRows(file, rowCount, now);
const seedPostgres = (dataSource) => seedPostgresRows(dataSource, rowCount, now);

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

async function scenarios(driver, store) {
  // A cursor half-way through the whole listing.
  let deep = undefined;
  for (let page = 0; page < Math.floor(rowCount / 200); page += 1) deep = (await store.listCertificates({ limit: 100, cursor: deep })).nextCursor;
  const cases = [
    ['first page', () => ({})],
    ['page at 50%', () => ({ cursor: deep })],
    ['label', () => ({ label: 'label3' })],
    ['status revoked', () => ({ status: 'revoked' })],
    ['name (CN or SAN)', (i) => ({ name: `host${(i * 7907) % rowCount}.example` })],
    ['expiring 30 days', () => ({ expiresAfter: new Date(now), expiresBefore: new Date(now + 30 * DAY) })],
    ['label+good+window', () => ({ label: 'label1', status: 'good', expiresAfter: new Date(now), expiresBefore: new Date(now + 90 * DAY) })],
  ];
  for (const [name, options] of cases) {
    for (let i = 0; i < 20; i += 1) await store.listCertificates({ limit: 100, ...options(i) });
    const times = [];
    let rows = 0;
    for (let i = 0; i < iterations; i += 1) {
      const t0 = performance.now();
      rows += (await store.listCertificates({ limit: 100, ...options(i) })).certificates.length;
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    console.log(`${driver.padEnd(8)} ${name.padEnd(20)} p50 ${percentile(times, 50).toFixed(2).padStart(6)} ms  p99 ${percentile(times, 99).toFixed(2).padStart(6)} ms  (${(rows / iterations).toFixed(0)} rows/page)`);
  }
  const t0 = performance.now();
  await store.countCertificates();
  await store.countExpiring();
  console.log(`${driver.padEnd(8)} metrics counts       ${(performance.now() - t0).toFixed(1)} ms (countCertificates + countExpiring)`);
}

console.log(`cert-store listing: ${rowCount} rows, ${iterations} pages per scenario, ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}`);
const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-list-'));
try {
  const sqliteConfig = { driver: 'sqlite3', dataSource: join(dir, 'list.db') };
  await migrateStore(sqliteConfig);
  seedSqlite(sqliteConfig.dataSource);
  const sqlite = await openStore(sqliteConfig);
  await scenarios('sqlite', sqlite);
  await sqlite.close();
  const cluster = await startThrowawayPostgres();
  try {
    const pgConfig = { driver: 'postgres', dataSource: cluster.createDatabase('list') };
    await migrateStore(pgConfig);
    await seedPostgres(pgConfig.dataSource);
    const store = await openStore(pgConfig);
    await scenarios('postgres', store);
    await store.close();
  } finally {
    cluster.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
