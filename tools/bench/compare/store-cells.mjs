/**
 * The certificate-store cells (issue 20), one driver at a time — SQLite, then PostgreSQL (a
 * throwaway cluster on loopback, fsync on):
 *
 * - `store-newcert`: newcert ECDSA P-256 at 16 clients on three servers, rounds alternating —
 *   certsmith recording into the store (`--db-config`), `cfssl serve -db-config` recording into its
 *   certdb on the same driver, and certsmith with `--no-store`. Each keeps its own database: CFSSL's
 *   made with CFSSL's own 001 + 002 SQL (CFSSL never migrates; certsmith's triggers and indexes
 *   would slow CFSSL's inserts down), certsmith's migrated by certsmith when it starts. CFSSL's
 *   SQLite file is switched to WAL as certsmith's is (its default rollback journal is slower: the
 *   comparison gives CFSSL the better setting). Measured with the Node load generator, as every
 *   cell, then on the same three servers with wrk (when installed), which leaves the machine to the
 *   servers. After each, every server's rows are counted: a store that recorded nothing, or fewer
 *   rows than certificates returned, is reported.
 * - `store-list`: `GET /api/v1/certsmith/certificates` pages (100 rows) on a store seeded with
 *   `--store-rows` rows (default 100,000; `tools/bench/cert-store/seed-rows.mjs`), seven scenarios
 *   at 1 and 16 clients: first page, a page half-way (keyset cursor), by label, revoked, by name, expiring
 *   within 30 days, label + status + window. Target: p99 < 50 ms.
 */
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DAY, seedPostgres, seedSqlite } from '../cert-store/seed-rows.mjs';
import { startThrowawayPostgres } from '../cert-store/throwaway-postgres.mjs';
import { alternateRounds, createClient, percentile, runRound, summarise } from './load.mjs';
import { alternateWrkRounds, wrkAvailable } from './ocsp.mjs';
import { NEWCERT_PATH, newcertBody } from './operations.mjs';
import { readCpuMs, sampleRss, startServer } from './servers.mjs';

/** The `--ops` names of the store cells. */
export const STORE_OPS = ['store-newcert', 'store-list'];
/** Issue 20 measures the store's cost on newcert at 16 clients. */
export const STORE_CONCURRENCY = 16;
export const LIST_PATH = '/api/v1/certsmith/certificates';

/** The three servers of a newcert cell, in the order rounds alternate. */
export const NEWCERT_SERVERS = ['store', 'cfssl', 'nostore'];

const DRIVERS = ['sqlite3', 'postgres'];

/** CFSSL's certdb migrations 001 + 002 (certdb/{sqlite,pg}/migrations at HEAD), as an operator runs them with goose. */
const CFSSL_SCHEMA = {
  sqlite3: `
CREATE TABLE certificates (
  serial_number blob NOT NULL, authority_key_identifier blob NOT NULL, ca_label blob, status blob NOT NULL,
  reason int, expiry timestamp, revoked_at timestamp, pem blob NOT NULL,
  PRIMARY KEY(serial_number, authority_key_identifier));
CREATE TABLE ocsp_responses (
  serial_number blob NOT NULL, authority_key_identifier blob NOT NULL, body blob NOT NULL, expiry timestamp,
  PRIMARY KEY(serial_number, authority_key_identifier),
  FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier));
ALTER TABLE certificates ADD COLUMN issued_at timestamp;
ALTER TABLE certificates ADD COLUMN not_before timestamp;
ALTER TABLE certificates ADD COLUMN metadata text;
ALTER TABLE certificates ADD COLUMN sans text;
ALTER TABLE certificates ADD COLUMN common_name text;`,
  postgres: `
CREATE TABLE certificates (
  serial_number bytea NOT NULL, authority_key_identifier bytea NOT NULL, ca_label bytea, status bytea NOT NULL,
  reason int, expiry timestamptz, revoked_at timestamptz, pem bytea NOT NULL,
  PRIMARY KEY(serial_number, authority_key_identifier));
CREATE TABLE ocsp_responses (
  serial_number bytea NOT NULL, authority_key_identifier bytea NOT NULL, body bytea NOT NULL, expiry timestamptz,
  PRIMARY KEY(serial_number, authority_key_identifier),
  FOREIGN KEY(serial_number, authority_key_identifier) REFERENCES certificates(serial_number, authority_key_identifier));
ALTER TABLE certificates ADD COLUMN issued_at timestamptz;
ALTER TABLE certificates ADD COLUMN not_before timestamptz;
ALTER TABLE certificates ADD COLUMN metadata jsonb;
ALTER TABLE certificates ADD COLUMN sans jsonb;
ALTER TABLE certificates ADD COLUMN common_name TEXT;`,
};

/**
 * Database access for the harness itself (schema, seeding, counting), through the store package's
 * own drivers so the bench needs no dependency of its own.
 */
function databaseTools(repoRoot) {
  const requireFromStore = createRequire(join(repoRoot, 'packages/cert-store/package.json'));
  const Database = requireFromStore('better-sqlite3');
  const pg = requireFromStore('pg');
  const withPostgres = async (dataSource, use) => {
    const client = new pg.Client({ connectionString: dataSource });
    await client.connect();
    try {
      return await use(client);
    } finally {
      await client.end();
    }
  };
  return {
    async createCfsslSchema(driver, dataSource) {
      if (driver === 'postgres') return withPostgres(dataSource, (client) => client.query(CFSSL_SCHEMA.postgres));
      const db = new Database(dataSource);
      db.exec(CFSSL_SCHEMA.sqlite3);
      db.pragma('journal_mode = WAL');
      db.close();
    },
    async countRows(driver, dataSource) {
      if (driver === 'postgres') return withPostgres(dataSource, async (client) => Number((await client.query('SELECT count(*) AS n FROM certificates')).rows[0].n));
      const db = new Database(dataSource, { readonly: true });
      try {
        return Number(db.prepare('SELECT count(*) AS n FROM certificates').get().n);
      } finally {
        db.close();
      }
    },
  };
}

/**
 * One bounded round of GETs (`paths` round-robin over `concurrency` closed loops), summarised as
 * `runRound` summarises POSTs. Only 200 answers count.
 */
async function runGetRound({ client, paths, concurrency, durationMs, pid }) {
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let firstError;
  let next = 0;
  let rows = 0;
  const rss = sampleRss(pid);
  const cpuBefore = readCpuMs(pid);
  const started = performance.now();
  const deadline = started + durationMs;
  const loop = async () => {
    while (performance.now() < deadline) {
      const path = paths[next++ % paths.length];
      const sent = performance.now();
      let status = 0;
      let text = '';
      try {
        const response = await client.request({ method: 'GET', path });
        status = response.statusCode;
        text = await response.body.text();
      } catch (error) {
        text = String(error?.code ?? error);
      }
      const took = performance.now() - sent;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === 200) {
        latencies.push(took);
        rows += JSON.parse(text).result.certificates.length;
      } else {
        errors++;
        firstError ??= `${status} ${text.slice(0, 160)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsedMs = performance.now() - started;
  const cpuMs = readCpuMs(pid) - cpuBefore;
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    errors,
    statuses,
    firstError,
    elapsedMs,
    rps: latencies.length / (elapsedMs / 1000),
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    p99Ms: percentile(latencies, 99),
    peakRssBytes: rss.stop(),
    cpuMsPerRequest: latencies.length + errors > 0 ? cpuMs / (latencies.length + errors) : NaN,
    rowsPerPage: latencies.length > 0 ? rows / latencies.length : NaN,
  };
}

/** GET one path; the parsed JSON body, or an error naming the status. */
async function getJson(client, path) {
  const response = await client.request({ method: 'GET', path });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** The listing scenarios: name → the paths to cycle through (one, or many for `name`). */
async function listScenarios(client, rowCount, now) {
  const query = (params) => `${LIST_PATH}?${new URLSearchParams({ limit: '100', ...params })}`;
  // A cursor half-way through the whole listing, reached page by page as a client would.
  let cursor;
  for (let page = 0; page < Math.floor(rowCount / 200); page += 1) cursor = (await getJson(client, query(cursor ? { cursor } : {}))).result.next_cursor;
  const iso = (ms) => new Date(ms).toISOString();
  return [
    ['first page', [query({})]],
    ['page half-way (cursor)', [query({ cursor })]],
    ['by label', [query({ label: 'label3' })]],
    ['revoked', [query({ status: 'revoked' })]],
    ['by name (CN or SAN)', Array.from({ length: 256 }, (_, i) => query({ name: `host${(i * 7907) % rowCount}.example` }))],
    ['expiring within 30 days', [query({ expires_after: iso(now), expires_before: iso(now + 30 * DAY) })]],
    ['label + good + 90-day window', [query({ label: 'label1', status: 'good', expires_after: iso(now), expires_before: iso(now + 90 * DAY) })]],
  ];
}

/**
 * Run the store cells named in `ops`.
 *
 * @param {object} options
 * @param {string[]} options.ops
 * @param {{ ca: string, caKey: string }} options.files  the signer CA (both servers sign with it)
 * @param {string} options.workDir
 * @param {string} options.repoRoot
 * @param {object} options.options  run.mjs's options (rounds, durationMs, warmupMs, settleMs, workers, nodeArgs, storeRows)
 * @param {(message: string) => void} options.log
 */
export async function measureStoreCells({ ops, files, workDir, repoRoot, options, log }) {
  const { migrateStore } = await import(join(repoRoot, 'packages/cert-store/dist/index.js'));
  const db = databaseTools(repoRoot);
  const result = { newcert: [], list: [], listRows: options.storeRows };
  log('store: starting a throwaway PostgreSQL cluster (fsync on)');
  const cluster = await startThrowawayPostgres();
  let databases = 0;
  /** A fresh, empty database of the driver: its data source and a db-config file naming it. */
  const freshDatabase = (driver, name) => {
    databases += 1;
    const dataSource = driver === 'postgres' ? cluster.createDatabase(`${name}_${databases}`) : join(workDir, `${name}-${databases}.db`);
    const file = join(workDir, `${name}-${databases}.json`);
    writeFileSync(file, JSON.stringify({ driver, data_source: dataSource }));
    return { dataSource, file };
  };
  const certsmith = (label, extraArgs) =>
    startServer({ kind: 'certsmith', files, workDir, repoRoot, label, workers: options.workers, processes: options.processes, nodeArgs: options.nodeArgs, extraArgs: ['--tidy-interval', '0', ...extraArgs] });
  try {
    for (const driver of DRIVERS) {
      if (ops.includes('store-newcert')) {
        const ours = freshDatabase(driver, 'certsmith');
        const theirs = freshDatabase(driver, 'cfssl');
        await db.createCfsslSchema(driver, theirs.dataSource);
        const started = [];
        try {
          started.push({ key: 'store', server: await certsmith(`certsmith-store-${driver}`, ['--db-config', ours.file]) });
          started.push({ key: 'cfssl', server: await startServer({ kind: 'cfssl', files: { ...files, dbConfig: theirs.file }, workDir, repoRoot, label: `cfssl-certdb-${driver}` }) });
          started.push({ key: 'nostore', server: await certsmith('certsmith-nostore', ['--no-store']) });
          for (const target of started) target.client = createClient(target.server.url);
          log(`store-newcert ${driver} c=${STORE_CONCURRENCY}: certsmith (store) + cfssl (certdb) + certsmith (--no-store), ${options.rounds} × ${options.durationMs / 1000}s rounds`);
          const bodies = [newcertBody()];
          // Freshly started servers: their warm-up settles them too (run.mjs --settle).
          const warmupMs = options.warmupMs + options.settleMs;
          const measured = await alternateRounds(started, { durationMs: options.durationMs, warmupMs, rounds: options.rounds }, (target, ms) =>
            runRound({ client: target.client, path: NEWCERT_PATH, bodies, concurrency: STORE_CONCURRENCY, durationMs: ms, pid: target.server.pid })
          );
          // Every certificate returned (warm-up included) must have its row: fewer rows than 200s is a
          // store that is off or loses records, and the report says so. Each pass counts the rows it added.
          const rowsSoFar = { store: 0, cfssl: 0 };
          const countRecorded = async (results) => {
            for (const [key, database] of [['store', ours], ['cfssl', theirs]]) {
              const rows = await db.countRows(driver, database.dataSource);
              results[key].certificatesReturned = (results[key].warmup?.ok ?? 0) + results[key].ok;
              results[key].rowsRecorded = rows - rowsSoFar[key];
              rowsSoFar[key] = rows;
            }
          };
          await countRecorded(measured);
          result.newcert.push({ driver, concurrency: STORE_CONCURRENCY, client: 'node', results: measured });
          // The same servers again with wrk, whose few µs per request leave the machine to the
          // servers: the Node load generator takes 0.2–0.4 of the 2 cores, more beside the faster server.
          if (wrkAvailable()) {
            log(`store-newcert ${driver} c=${STORE_CONCURRENCY} with wrk: the same three servers, ${options.rounds} × ${options.durationMs / 1000}s rounds`);
            const withWrk = await alternateWrkRounds(started, {
              path: NEWCERT_PATH,
              body: bodies[0],
              concurrency: STORE_CONCURRENCY,
              durationMs: options.durationMs,
              warmupMs: options.warmupMs,
              rounds: options.rounds,
              scriptFile: join(workDir, `wrk-store-newcert-${driver}.lua`),
            });
            await countRecorded(withWrk);
            result.newcert.push({ driver, concurrency: STORE_CONCURRENCY, client: 'wrk', results: withWrk });
          }
        } finally {
          await Promise.all(started.map((t) => t.client?.close()));
          await Promise.all(started.map((t) => t.server.stop()));
        }
      }
      if (ops.includes('store-list')) {
        const listing = freshDatabase(driver, 'listing');
        const config = { driver, dataSource: listing.dataSource };
        await migrateStore(config);
        const now = Date.now();
        const seeding = performance.now();
        if (driver === 'postgres') await seedPostgres(listing.dataSource, options.storeRows, now);
        else seedSqlite(listing.dataSource, options.storeRows, now);
        log(`store-list ${driver}: seeded ${options.storeRows} rows in ${((performance.now() - seeding) / 1000).toFixed(1)} s (not measured)`);
        const server = await certsmith(`certsmith-list-${driver}`, ['--db-config', listing.file, '--db-migrations', 'check']);
        const client = createClient(server.url);
        try {
          const scenarios = await listScenarios(client, options.storeRows, now);
          const durationMs = options.durationMs / 4;
          // A fresh server first gets twice the warm-up at 16 clients over every scenario's paths: with
          // only each scenario's own short warm-up, whichever scenario came first cost ≈1.5× the CPU per
          // page of the same scenario measured later (docs/performance.md, "Inventory pages at 16 clients").
          if (options.warmupMs > 0) {
            await runGetRound({ client, paths: scenarios.flatMap(([, paths]) => paths), concurrency: STORE_CONCURRENCY, durationMs: 2 * options.warmupMs, pid: server.pid });
          }
          for (const [scenario, paths] of scenarios) {
            for (const concurrency of [1, STORE_CONCURRENCY]) {
              if (options.warmupMs > 0) await runGetRound({ client, paths, concurrency, durationMs: options.warmupMs / 4, pid: server.pid });
              const rounds = [];
              for (let round = 0; round < options.rounds; round++) rounds.push(await runGetRound({ client, paths, concurrency, durationMs, pid: server.pid }));
              const summary = summarise(rounds);
              result.list.push({
                driver,
                scenario,
                concurrency,
                ...summary,
                maxP99Ms: Math.max(...rounds.map((round) => round.p99Ms)),
                rowsPerPage: rounds[0].rowsPerPage,
                rounds,
              });
            }
            log(`store-list ${driver}: ${scenario} measured`);
          }
        } finally {
          await client.close();
          await server.stop();
        }
      }
    }
  } finally {
    cluster.stop();
  }
  return result;
}
