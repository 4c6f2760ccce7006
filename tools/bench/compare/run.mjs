#!/usr/bin/env node
/**
 * certsmith vs CFSSL: side-by-side benchmark of `certsmith serve` and Debian's `cfssl serve`
 * (issue 7). Run by hand, never in the test suite:
 *
 *   npm run build && node tools/bench/compare/run.mjs [--quick] [--ops a,b] [--out file.json]
 *
 * Both servers get the same CA, the same trust files (by path, plus one combined ca-bundle that
 * also trusts the generated bench root) and byte-identical requests over HTTP on 127.0.0.1. Rounds
 * alternate between the servers so drift (thermal, page cache, neighbours) hits both alike; each
 * round is time-bounded; medians over rounds are reported. Progress goes to stderr, the report
 * (Markdown tables) to stdout, everything measured to a JSON file.
 *
 * `--help` lists the options. Default ≈ 7–8 minutes, `--quick` ≈ 2. The `ocsp` cells (`ocspserve` on
 * both sides, load from `wrk`) are described in ocsp.mjs.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { alternateRounds, createClient, firstAnswerAfterReady, median, post, probeLatency, runRound, summarise } from './load.mjs';
import { ALL_OPS, BUNDLE_PATH, HEALTH_UNDER_LOAD, KEY_POOL, LOAD_OPERATIONS, NEWCERT_PATH, bundleBody, newcertBody, prefilterRealIntermediates } from './operations.mjs';
import { createSignerCa, generateBenchPki, generateIntermediates, splitPemCertificates, writeTrustFiles } from './pki.mjs';
import {
  checkTargets,
  describeMachine,
  formatHealthTable,
  formatKeyPoolTable,
  formatLoadTable,
  formatMachine,
  formatPoolTable,
  formatRatioTable,
  formatStartupTable,
  formatTargets,
  writeResults,
} from './report.mjs';
import { killAllServersNow, startServer, stopAllServers, waitUntilIdle } from './servers.mjs';
import { STORE_OPS, measureStoreCells } from './store-cells.mjs';
import { checkStoreTargets, formatStoreListTable, formatStoreNewcertTable } from './store-report.mjs';
import { alternateWrkRounds, formatOcspCpuTable, measureOcsp, wrkAvailable } from './ocsp.mjs';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** Every `--ops` name: issue 7's measurements, then the certificate-store cells (issue 20). */
const KNOWN_OPS = [...ALL_OPS, ...STORE_OPS];
const REPO_ROOT = resolve(HERE, '../../..');

const USAGE = `usage: node tools/bench/compare/run.mjs [options]

  --quick              short rounds (≈2 min in all) instead of the default (≈7–8 min)
  --ops LIST           comma-separated, default all: ${KNOWN_OPS.join(',')}
                       (ocsp: certsmith ocspserve vs cfssl ocspserve, load from wrk)
  --concurrency LIST   default 1,16
  --rounds N           timed rounds per server and cell (default 3, quick 2)
  --duration S         seconds per round (default 4, quick 1; RSA rounds run 2×)
  --warmup S           seconds of untimed warm-up per server and cell (default 2, quick 0.3)
  --settle S           more untimed load per server before an operation's first cell, on a freshly
                       started server (default 3, quick 0): node needs ≈3 s of load to optimise
  --candidates N       real intermediates offered to the cfssl pre-filter (default all, quick 400)
  --starts N           start-ups measured per server (default 5, quick 2)
  --pool-extra N       generated intermediates for pool-size (default 12000)
  --store-rows N       rows in the store the store-list cells page through (default 100000)
  --workers N          certsmith --workers (default: certsmith's own)
  --processes N        certsmith --processes (default: certsmith's own)
  --node-arg ARG       extra node flag for certsmith, repeatable (e.g. --node-arg=--cpu-prof)
  --trust DIR          cfssl_trust files (default /work/shared/trust)
  --out FILE           JSON results (default tools/bench/compare/results/bench-<time>.json)
  --keep               keep the temp dir (CA, PKI, trust files, server logs)
  --help`;

/** Parse and default the command line; throws a usage error on anything unknown. */
function readOptions(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      ops: { type: 'string' },
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      settle: { type: 'string' },
      candidates: { type: 'string' },
      starts: { type: 'string' },
      'pool-extra': { type: 'string' },
      'store-rows': { type: 'string' },
      workers: { type: 'string' },
      processes: { type: 'string' },
      'node-arg': { type: 'string', multiple: true, default: [] },
      trust: { type: 'string', default: '/work/shared/trust' },
      out: { type: 'string' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  const quick = values.quick;
  const number = (name, fallback, min) => {
    if (values[name] === undefined) return fallback;
    const n = Number(values[name]);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}, got ${values[name]}`);
    return n;
  };
  const ops = values.ops
    ? values.ops
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : KNOWN_OPS;
  for (const op of ops) if (!KNOWN_OPS.includes(op)) throw new Error(`--ops: unknown operation ${op} (known: ${KNOWN_OPS.join(', ')})`);
  const concurrency = (values.concurrency ?? '1,16').split(',').map(Number);
  if (concurrency.some((c) => !Number.isInteger(c) || c < 1 || c > 256))
    throw new Error(`--concurrency must list integers 1–256, got ${values.concurrency}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    help: values.help,
    quick,
    ops,
    concurrency,
    rounds: number('rounds', quick ? 2 : 3, 1),
    durationMs: number('duration', quick ? 1 : 4, 0.1) * 1000,
    warmupMs: number('warmup', quick ? 0.3 : 2, 0) * 1000,
    settleMs: number('settle', quick ? 0 : 3, 0) * 1000,
    candidates: number('candidates', quick ? 400 : Infinity, 1),
    starts: number('starts', quick ? 2 : 5, 1),
    poolExtra: number('pool-extra', 12_000, 1),
    storeRows: number('store-rows', 100_000, 1000),
    // The pool-size cost is a throughput question; quick mode measures only the highest concurrency.
    poolConcurrency: quick ? [Math.max(...concurrency)] : concurrency,
    workers: values.workers === undefined ? undefined : number('workers', 0, 0),
    processes: values.processes === undefined ? undefined : number('processes', 0, 1),
    nodeArgs: values['node-arg'],
    trustDir: resolve(values.trust),
    out: resolve(values.out ?? join(HERE, 'results', `bench-${stamp}.json`)),
    keep: values.keep,
  };
}

/** At most `n` items, evenly spaced over the list (so a subset still mixes issuers and key types). */
function spread(items, n) {
  if (items.length <= n) return items;
  return Array.from({ length: n }, (_, i) => items[Math.floor((i * items.length) / n)]);
}

/** The temp dir to remove on the way out, also when a signal ends the run (`--keep`: none). */
let removeOnExit;

/** Progress lines go to stderr so stdout carries only the report. */
const log = (message) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/**
 * Ask each server once whether it serves an operation: a 404 means "not available" (certsmith's
 * bundle and newcert are being wired in; CFSSL disables endpoints the same way, doc 5).
 */
async function probeAvailability(client, path, body) {
  const { status, text } = await post(client, path, body);
  if (status === 404) return { available: false, reason: 'not available (404)' };
  return { available: true, probeStatus: status, probeText: status === 200 ? undefined : text.slice(0, 200) };
}

/**
 * Measure one cell (an operation at one concurrency) on several targets: untimed warm-up on each,
 * then `rounds` timed rounds, alternating which target goes first from round to round.
 * `intervalMs` paces the loops (see `runRound`); `beforeRound(target)` runs before each timed round.
 *
 * @param {Array<{ key: string, server: import('./servers.mjs').RunningServer, client: import('undici').Pool }>} targets
 */
async function measureCell(targets, { path, bodies, concurrency, durationMs, warmupMs, rounds, intervalMs = 0, beforeRound }) {
  return alternateRounds(targets, { durationMs, warmupMs, rounds, beforeRound }, (target, ms) =>
    runRound({ client: target.client, path, bodies, concurrency, durationMs: ms, pid: target.server.pid, intervalMs })
  );
}

/**
 * The cells whose "cores busy" issue 18 judges. They are measured a second time with wrk as the
 * load generator: the Node client costs tens of µs of CPU per request, so the faster server leaves
 * itself less of the machine (at 16 clients it took 0.27 cores beside CFSSL and 0.41 beside
 * certsmith); wrk costs a few µs, and what the servers keep busy is then theirs to use
 * (docs/performance.md, cores busy).
 */
const CORES_BUSY_OPS = ['newcert-ecdsa', 'bundle-generated'];

/** One cell on both servers with wrk (one body, POST), rounds alternating; results shaped as {@link measureCell}'s. */
async function measureCellWithWrk(servers, { path, body, concurrency, durationMs, warmupMs, rounds, workDir }) {
  const targets = ['certsmith', 'cfssl'].map((key) => ({ key, server: servers[key] }));
  return alternateWrkRounds(targets, { path, body, concurrency, durationMs, warmupMs, rounds, scriptFile: join(workDir, `wrk-${path.split('/').at(-1)}.lua`) });
}

/**
 * Start-up time with the full trust data, `starts` times per server, alternating. Besides "ready"
 * (the issue-7 definition) it times the first bundle answer right after it: a server that loads its
 * trust lazily, on first use, looks ready early but makes its first caller wait.
 */
async function measureStartup({ files, workDir, options, firstBundleBody }) {
  const runs = { certsmith: [], cfssl: [] };
  for (let i = 0; i < options.starts; i++) {
    for (const kind of i % 2 === 0 ? ['certsmith', 'cfssl'] : ['cfssl', 'certsmith']) {
      const server = await startServer({
        kind,
        files,
        workDir,
        repoRoot: REPO_ROOT,
        label: `${kind}-startup`,
        // The first answer is what start-up measures (and the first bundle right after it).
        waitForEveryProcess: false,
        workers: options.workers,
        processes: options.processes,
        nodeArgs: options.nodeArgs,
      });
      runs[kind].push(await firstAnswerAfterReady(server, BUNDLE_PATH, firstBundleBody));
    }
  }
  const summary = (list, probe) => ({
    probe,
    medianMs: median(list.map((r) => r.readyMs)),
    minMs: Math.min(...list.map((r) => r.readyMs)),
    maxMs: Math.max(...list.map((r) => r.readyMs)),
    medianFirstBundleMs: median(list.map((r) => r.firstBundleMs)),
    medianRssBytes: median(list.map((r) => r.rssBytes)),
    runs: list,
  });
  return { certsmith: summary(runs.certsmith, 'GET /health → 200'), cfssl: summary(runs.cfssl, 'first HTTP answer (GET /scaninfo)') };
}

/**
 * Health under load: newcert ECDSA at c=64 on one server while a single connection probes its
 * cheapest GET every 20 ms; `rounds` rounds per server, alternating; medians of the probe p50/p99.
 */
async function measureHealthUnderLoad(servers, clients, options) {
  const result = {};
  const perServer = { certsmith: [], cfssl: [] };
  for (let round = 0; round < options.rounds; round++) {
    for (const key of round % 2 === 0 ? ['certsmith', 'cfssl'] : ['cfssl', 'certsmith']) {
      const signal = { stop: false };
      const probing = probeLatency({ url: servers[key].url, path: HEALTH_UNDER_LOAD.probe[key], intervalMs: HEALTH_UNDER_LOAD.intervalMs, signal });
      const load = await runRound({
        client: clients[key],
        path: NEWCERT_PATH,
        bodies: [newcertBody()],
        concurrency: HEALTH_UNDER_LOAD.concurrency,
        durationMs: options.durationMs,
        pid: servers[key].pid,
      });
      signal.stop = true;
      perServer[key].push({ load, probe: await probing });
    }
  }
  for (const [key, rounds] of Object.entries(perServer)) {
    result[key] = {
      path: HEALTH_UNDER_LOAD.probe[key],
      newcertRps: median(rounds.map((r) => r.load.rps)),
      newcertErrors: rounds.reduce((sum, r) => sum + r.load.errors, 0),
      probeP50Ms: median(rounds.map((r) => r.probe.p50Ms)),
      probeP99Ms: median(rounds.map((r) => r.probe.p99Ms)),
      probeMaxMs: Math.max(...rounds.map((r) => r.probe.maxMs)),
      probes: rounds.reduce((sum, r) => sum + r.probe.probes, 0),
      probeErrors: rounds.reduce((sum, r) => sum + r.probe.errors, 0),
      rounds,
    };
  }
  return result;
}

/** The four load operations on one certsmith and one cfssl started with the full trust data. */
async function measureLoadOperations({ ops, files, pki, workDir, options }) {
  const servers = {
    // Like for like: cfssl serve here keeps no certdb, so certsmith records nothing either; what the
    // store costs is the store-newcert cell's question (against cfssl serve -db-config).
    certsmith: await startServer({
      kind: 'certsmith',
      files,
      workDir,
      repoRoot: REPO_ROOT,
      workers: options.workers,
      processes: options.processes,
      nodeArgs: options.nodeArgs,
      extraArgs: ['--no-store'],
    }),
    cfssl: await startServer({ kind: 'cfssl', files, workDir, repoRoot: REPO_ROOT }),
  };
  const clients = { certsmith: createClient(servers.certsmith.url), cfssl: createClient(servers.cfssl.url) };
  log(`servers up: certsmith pid ${servers.certsmith.pid} ${servers.certsmith.url}, cfssl pid ${servers.cfssl.pid} ${servers.cfssl.url}`);

  const bodies = {
    'newcert-ecdsa': [newcertBody()],
    'newcert-rsa': [newcertBody({ algo: 'rsa', size: 2048 })],
    'bundle-generated': [bundleBody(pki.leaf.pem + pki.intermediate.pem)],
  };
  let prefilter;
  if (ops.includes('bundle-real')) {
    const pems = spread(splitPemCertificates(readFileSync(files.intBundle, 'utf8')), options.candidates);
    log(`pre-filtering ${pems.length} real intermediates on cfssl`);
    const prefilterClient = createClient(servers.cfssl.url, { connections: 4, requestTimeoutMs: 10_000 });
    prefilter = await prefilterRealIntermediates(prefilterClient, pems);
    await prefilterClient.close();
    log(`cfssl bundles ${prefilter.accepted.length} of ${prefilter.tried}; rejected: ${JSON.stringify(prefilter.rejected)}`);
    bodies['bundle-real'] = prefilter.accepted.map(bundleBody);
  }

  const cells = [];
  let healthUnderLoad;
  try {
    for (const op of LOAD_OPERATIONS.filter((o) => ops.includes(o.name))) {
      if (bodies[op.name].length === 0) {
        log(`${op.name}: no request bodies (cfssl bundled none of the real intermediates), skipped`);
        continue;
      }
      const availability = {
        certsmith: await probeAvailability(clients.certsmith, op.path, bodies[op.name][0]),
        cfssl: await probeAvailability(clients.cfssl, op.path, bodies[op.name][0]),
      };
      const targets = ['certsmith', 'cfssl']
        .filter((k) => availability[k].available)
        .map((key) => ({ key, server: servers[key], client: clients[key] }));
      for (const [key, a] of Object.entries(availability)) {
        if (!a.available) log(`${op.name}: ${key} ${a.reason}`);
        else if (a.probeStatus !== 200) log(`${op.name}: ${key} answered the probe with ${a.probeStatus}: ${a.probeText}`);
      }
      for (const [index, concurrency] of options.concurrency.entries()) {
        const durationMs = options.durationMs * op.durationFactor;
        // The operation's first cell also settles the servers: a fresh node process runs its
        // first seconds of load unoptimised (docs/performance.md, "The first seconds of load").
        const warmupMs = options.warmupMs + (index === 0 ? options.settleMs : 0);
        log(
          `${op.name} c=${concurrency}: ${targets.map((t) => t.key).join(' + ') || 'nothing to measure'}, ${options.rounds} × ${
            durationMs / 1000
          }s rounds`
        );
        const measured =
          targets.length > 0
            ? await measureCell(targets, {
                path: op.path,
                bodies: bodies[op.name],
                concurrency,
                durationMs,
                warmupMs,
                rounds: options.rounds,
              })
            : {};
        const results = {};
        for (const key of ['certsmith', 'cfssl']) results[key] = availability[key].available ? measured[key] : availability[key];
        cells.push({ name: op.name, title: op.title, concurrency, bodies: bodies[op.name].length, results });
      }
    }
    if (wrkAvailable()) {
      for (const op of LOAD_OPERATIONS.filter((o) => CORES_BUSY_OPS.includes(o.name) && ops.includes(o.name))) {
        log(`${op.name} c=16, wrk as the load generator (cores busy), ${options.rounds} × ${options.durationMs / 1000}s rounds`);
        const results = await measureCellWithWrk(servers, { path: op.path, body: bodies[op.name][0], concurrency: 16, durationMs: options.durationMs, warmupMs: options.warmupMs, rounds: options.rounds, workDir });
        cells.push({ name: op.name, title: `${op.title} (wrk)`, concurrency: 16, client: 'wrk', bodies: 1, results });
      }
    } else {
      log('wrk is not installed: the cores-busy cells are measured with the Node load generator only');
    }
    if (ops.includes('health-under-load')) {
      log(`health-under-load: newcert c=${HEALTH_UNDER_LOAD.concurrency} with a GET probe every ${HEALTH_UNDER_LOAD.intervalMs} ms, ${options.rounds} rounds per server`);
      healthUnderLoad = await measureHealthUnderLoad(servers, clients, options);
    }
  } finally {
    await Promise.all([clients.certsmith.close(), clients.cfssl.close()]);
    await Promise.all([servers.certsmith.stop(), servers.cfssl.stop()]);
  }
  return { cells, healthUnderLoad, prefilter: prefilter && { tried: prefilter.tried, accepted: prefilter.accepted.length, rejected: prefilter.rejected } };
}

/**
 * Key pool: RSA-2048 newcert at c=1, paced ({@link KEY_POOL}), on a certsmith started with
 * `--key-pool` and on cfssl; rounds alternate. Each server is left to go idle first (certsmith fills
 * its pool meanwhile), and between rounds.
 */
async function measureKeyPool({ files, workDir, options }) {
  const body = newcertBody({ algo: 'rsa', size: 2048 });
  const flag = `${KEY_POOL.spec}=${KEY_POOL.size}`;
  const started = [];
  try {
    for (const kind of ['certsmith', 'cfssl']) {
      const server = await startServer({
        kind,
        files,
        workDir,
        repoRoot: REPO_ROOT,
        label: `${kind}-key-pool`,
        workers: kind === 'certsmith' ? options.workers : undefined,
        processes: kind === 'certsmith' ? options.processes : undefined,
        nodeArgs: kind === 'certsmith' ? options.nodeArgs : undefined,
        extraArgs: kind === 'certsmith' ? ['--key-pool', flag, '--no-store'] : [],
      });
      started.push({ key: kind, server, client: createClient(server.url, { connections: 1 }) });
    }
    const availability = await probeAvailability(started[0].client, NEWCERT_PATH, body);
    if (!availability.available) return { certsmith: availability, flag, intervalMs: KEY_POOL.intervalMs };
    const durationMs = options.durationMs * 2;
    log(`key-pool: newcert RSA-2048 c=1, one request every ${KEY_POOL.intervalMs} ms, certsmith --key-pool ${flag}, ${options.rounds} × ${durationMs / 1000}s rounds`);
    const filled = [];
    const measured = await measureCell(started, {
      path: NEWCERT_PATH,
      bodies: [body],
      concurrency: 1,
      durationMs,
      warmupMs: 0,
      rounds: options.rounds,
      intervalMs: KEY_POOL.intervalMs,
      async beforeRound(target) {
        const idle = await waitUntilIdle(target.server.pid, { quietMs: 1_000, timeoutMs: 60_000 });
        if (target.key === 'certsmith') filled.push(idle);
      },
    });
    return {
      flag,
      intervalMs: KEY_POOL.intervalMs,
      poolFillMs: filled.map((f) => Math.round(f.waitedMs)),
      poolFillTimedOut: filled.some((f) => f.timedOut),
      ...measured,
    };
  } finally {
    await Promise.all(started.map((t) => t.client.close()));
    await Promise.all(started.map((t) => t.server.stop()));
  }
}

/**
 * Pool size: bundle one fixed generated leaf (its intermediate only in the pool, not in the
 * request) with the cfssl_trust pool vs the same pool plus `poolExtra` generated intermediates.
 * Per server kind, the small- and large-pool servers alternate round by round.
 */
async function measurePoolSize({ files, ca, pki, workDir, options }) {
  const body = bundleBody(pki.leaf.pem);
  const result = { smallCount: files.poolSmallCount, largeCount: files.poolLargeCount, servers: {} };
  for (const kind of ['certsmith', 'cfssl']) {
    const started = [];
    try {
      for (const size of ['small', 'large']) {
        const server = await startServer({
          kind,
          // The signer CA too, as in every other phase: without one certsmith would create a development CA.
          files: {
            ca: ca.certFile,
            caKey: ca.keyFile,
            caBundle: files.caBundle,
            metadata: files.metadata,
            intBundle: size === 'small' ? files.poolSmall : files.poolLarge,
          },
          workDir,
          repoRoot: REPO_ROOT,
          label: `${kind}-pool-${size}`,
          workers: kind === 'certsmith' ? options.workers : undefined,
        processes: kind === 'certsmith' ? options.processes : undefined,
          nodeArgs: kind === 'certsmith' ? options.nodeArgs : undefined,
        });
        started.push({ key: size, server, client: createClient(server.url) });
      }
      log(`pool-size ${kind}: ready in ${started.map((t) => `${t.key} ${t.server.readyMs.toFixed(0)} ms`).join(', ')}`);
      const availability = await probeAvailability(started[0].client, BUNDLE_PATH, body);
      if (!availability.available) {
        log(`pool-size ${kind}: bundle ${availability.reason}`);
        result.servers[kind] = availability;
        continue;
      }
      const entry = { available: true, readyMs: { small: started[0].server.readyMs, large: started[1].server.readyMs }, byConcurrency: {} };
      for (const concurrency of options.poolConcurrency) {
        log(`pool-size ${kind} c=${concurrency}: ${options.rounds} × ${options.durationMs / 1000}s rounds per pool`);
        entry.byConcurrency[concurrency] = await measureCell(started, {
          path: BUNDLE_PATH,
          bodies: [body],
          concurrency,
          durationMs: options.durationMs,
          warmupMs: options.warmupMs,
          rounds: options.rounds,
        });
      }
      result.servers[kind] = entry;
    } finally {
      await Promise.all(started.map((t) => t.client.close()));
      await Promise.all(started.map((t) => t.server.stop()));
    }
  }
  return result;
}

async function main() {
  let options;
  try {
    options = readOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${error.message}\n${USAGE}\n`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (!existsSync(join(REPO_ROOT, 'apps/server/dist/cli.js'))) {
    process.stderr.write('apps/server/dist/cli.js is missing: run `npm run build` first\n');
    return 1;
  }

  // Hard stop: whatever hangs, the run ends and the servers with it.
  // The store cells (issue 20) add ≈4 min (≈1.5 with --quick): three servers per driver, seeding.
  const storeMinutes = options.ops.some((op) => STORE_OPS.includes(op)) ? (options.quick ? 3 : 7) : 0;
  const budgetMs = ((options.quick ? 4 : 15) + storeMinutes) * 60_000;
  setTimeout(() => {
    log(`over the ${budgetMs / 60_000} min budget: stopping`);
    killAllServersNow();
    process.exit(3);
  }, budgetMs).unref();

  const machine = describeMachine(REPO_ROOT);
  const startedAt = new Date();
  log(formatMachine(machine));
  const workDir = mkdtempSync(join(tmpdir(), 'certsmith-bench-'));
  if (!options.keep) removeOnExit = workDir;
  try {
    log(`work dir ${workDir}`);
    const ca = createSignerCa(workDir);
    const pki = generateBenchPki();
    let poolPem;
    if (options.ops.includes('pool-size')) {
      const t = Date.now();
      poolPem = generateIntermediates(pki.root, options.poolExtra);
      log(`generated ${options.poolExtra} intermediates in ${Date.now() - t} ms (not measured)`);
    }
    const trust = writeTrustFiles({ dir: workDir, trustDir: options.trustDir, pki, poolPem });
    const files = { ca: ca.certFile, caKey: ca.keyFile, caBundle: trust.caBundle, intBundle: trust.intBundle, metadata: trust.metadata };

    const results = { date: startedAt.toISOString(), machine, options: { ...options, out: undefined }, files };
    if (options.ops.includes('startup')) {
      log(`startup: ${options.starts} starts per server with the full trust data`);
      results.startup = await measureStartup({ files, workDir, options, firstBundleBody: bundleBody(pki.leaf.pem + pki.intermediate.pem) });
    }
    const loadOps = options.ops.filter((op) => op === 'health-under-load' || LOAD_OPERATIONS.some((o) => o.name === op));
    if (loadOps.length > 0) Object.assign(results, await measureLoadOperations({ ops: loadOps, files, pki, workDir, options }));
    if (options.ops.includes('key-pool')) results.keyPool = await measureKeyPool({ files, workDir, options });
    if (options.ops.includes('pool-size')) results.poolSize = await measurePoolSize({ files: trust, ca, pki, workDir, options });
    const storeOps = options.ops.filter((op) => STORE_OPS.includes(op));
    if (storeOps.length > 0) results.store = await measureStoreCells({ ops: storeOps, files: { ca: ca.certFile, caKey: ca.keyFile }, workDir, repoRoot: REPO_ROOT, options, log });
    if (options.ops.includes('ocsp')) {
      // `certsmith ocspserve` vs `cfssl ocspserve` on the same responses (issue 21); cells like the load ops'.
      results.cells = [...(results.cells ?? []), ...(await measureOcsp({ ca, workDir, repoRoot: REPO_ROOT, options, log }))];
    }
    results.targets = checkTargets({
      cells: results.cells ?? [],
      startup: results.startup,
      pool: results.poolSize,
      healthUnderLoad: results.healthUnderLoad,
      keyPool: results.keyPool,
    }).concat(checkStoreTargets(results.store));
    results.durationS = (Date.now() - startedAt.getTime()) / 1000;
    results.loadAverageAtEnd = loadavg()[0];

    printReport(results);
    writeResults(options.out, results);
    log(`done in ${results.durationS.toFixed(0)} s; JSON results: ${options.out}`);
    return 0;
  } finally {
    await stopAllServers();
    if (options.keep) log(`kept ${workDir}`);
    else rmSync(workDir, { recursive: true, force: true });
  }
}

/** Highest median CPU use of the load generator over all measured cells, in cores. */
function maxClientCores(results) {
  const values = [];
  for (const cell of results.cells ?? []) for (const side of Object.values(cell.results)) if (side.available) values.push(side.clientCores);
  for (const cell of results.store?.newcert ?? []) for (const side of Object.values(cell.results)) values.push(side.clientCores);
  for (const entry of Object.values(results.poolSize?.servers ?? {})) {
    if (entry.available)
      for (const pair of Object.values(entry.byConcurrency)) for (const side of Object.values(pair)) values.push(side.clientCores);
  }
  return values.length > 0 ? Math.max(...values) : 0;
}

/** The human report on stdout: Markdown, ready to paste into docs/performance.md. */
function printReport(results) {
  const out = [];
  out.push(`## certsmith vs CFSSL — ${results.date.slice(0, 16).replace('T', ' ')} UTC`, '');
  out.push(`Machine: ${formatMachine(results.machine)}`);
  out.push(
    `Settings: ${results.options.quick ? 'quick, ' : ''}${results.options.rounds} rounds × ${
      results.options.durationMs / 1000
    } s per server (RSA 2×), ` +
      `${results.options.warmupMs / 1000} s warm-up (+ ${(results.options.settleMs ?? 0) / 1000} s before an operation's first cell), alternating; medians over rounds; peak RSS over rounds. ` +
      `Load average ${results.machine.loadAverage.toFixed(2)} at start, ${results.loadAverageAtEnd.toFixed(2)} at end; ` +
      `the load generator (same machine) used up to ${maxClientCores(results).toFixed(2)} cores. Run time ${results.durationS.toFixed(
        0
      )} s.`,
    ''
  );
  if (results.startup)
    out.push('### Start-up (full trust data: 339 roots, 1,263 intermediates, metadata, CA)', '', formatStartupTable(results.startup), '');
  if (results.cells) {
    if (results.prefilter)
      out.push(
        `Real intermediates: cfssl bundled ${results.prefilter.accepted} of ${
          results.prefilter.tried
        } (used round-robin); rejected: ${JSON.stringify(results.prefilter.rejected)}.`,
        ''
      );
    out.push('### Load', '', formatLoadTable(results.cells), '', '### certsmith ÷ CFSSL', '', formatRatioTable(results.cells), '');
  }
  const ocspCells = (results.cells ?? []).filter((cell) => cell.name.startsWith('ocsp'));
  if (ocspCells.length > 0)
    out.push('### OCSP responders: CPU per answer (load generator: wrk, 1 thread)', '', formatOcspCpuTable(ocspCells), '');
  if (results.healthUnderLoad)
    out.push('### Event-loop responsiveness (GET probe every 20 ms while newcert ECDSA runs at c=64)', '', formatHealthTable(results.healthUnderLoad), '');
  if (results.keyPool)
    out.push(
      `### Key pool (newcert RSA-2048, c=1, one request every ${results.keyPool.intervalMs} ms; certsmith --key-pool ${results.keyPool.flag})`,
      '',
      formatKeyPoolTable(results.keyPool),
      ''
    );
  if (results.poolSize)
    out.push('### Pool size (fixed generated leaf; its intermediate only in the pool)', '', formatPoolTable(results.poolSize), '');
  if (results.store?.newcert.length)
    out.push(
      '### Certificate store: newcert ECDSA P-256, c=16 (store on, CFSSL with its certdb on the same driver, store off)',
      '',
      formatStoreNewcertTable(results.store),
      ''
    );
  if (results.store?.list.length)
    out.push(`### Certificate store: inventory pages of 100 rows (${results.store.listRows} rows)`, '', formatStoreListTable(results.store), '');
  out.push('### Targets', '', formatTargets(results.targets), '');
  process.stdout.write(`${out.join('\n')}\n`);
}

// Ctrl-C / kill: stop the servers (bounded), then leave with the conventional code.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    log(`${signal}: stopping servers`);
    stopAllServers().finally(() => {
      if (removeOnExit) rmSync(removeOnExit, { recursive: true, force: true });
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  });
}
// Whatever else ends the process (uncaught error, process.exit): no server survives it.
process.once('exit', killAllServersNow);

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`bench failed: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  }
);
