#!/usr/bin/env node
/**
 * A/B of certsmith variants — other builds, other flags, other environment — on the fixtures of
 * `run.mjs`, one load cell, rounds alternating between the variants (medians), with CPU per thread.
 * Run by hand, never in the test suite, after `npm run build` (in every checkout you name):
 *
 *   node tools/bench/compare/variants.mjs --op newcert-ecdsa --concurrency 16 --rounds 8 --duration 3 \
 *     'now' 'two-workers;--workers 2' 'before@/path/to/other/checkout' 'cfssl'
 *
 * A variant is `name[@checkout][:ENV=value,ENV2=value][;certsmith serve flags]` (variant-spec.mjs); the name `cfssl`
 * (or any name starting with it) starts Debian's `cfssl serve` instead. Reported per variant: req/s,
 * p50/p99, CPU ms per request, cores busy (server CPU per second), the machine's idle cores, the load
 * generator's cores, and — from the last round — each busy thread's cores and µs per request (the
 * event loop is the thread whose id is the process id; with worker processes, each process's). With `--postgres` each
 * certsmith variant records into its own database of a throwaway PostgreSQL cluster, whose CPU per
 * request is reported too. Used for docs/adr/0001-worker-pool.md and 0004.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { createClient, median, runRound, summarise } from './load.mjs';
import { prepareSingleCell } from './single-cell.mjs';
import { describeMachine, formatMachine } from './report.mjs';
import { runWrkRound, wrkPostScript } from './ocsp.mjs';
import { processTree, readCpuMs, readThreadCpuMs, stopAllServers } from './servers.mjs';
import { parseVariant, startVariant } from './variant-spec.mjs';
import { startThrowawayPostgres } from '../cert-store/throwaway-postgres.mjs';

const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const { values, positionals } = parseArgs({
  options: {
    op: { type: 'string', default: 'newcert-ecdsa' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '6' },
    duration: { type: 'string', default: '3' },
    // Long enough for a fresh server to settle (first-seconds.mjs: ≈3 s of load before V8 has optimised it).
    warmup: { type: 'string', default: '4' },
    trust: { type: 'string', default: '/work/shared/trust' },
    // `node` (load.mjs, as run.mjs) or `wrk` (a few µs of CPU per request: leaves the cores to the servers).
    client: { type: 'string', default: 'node' },
    // A throwaway PostgreSQL cluster (fsync on): each certsmith variant without --db-config/--no-store
    // of its own records into a fresh database of it; its CPU per request is reported beside the server's.
    postgres: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
if (positionals.length === 0) {
  process.stderr.write('usage: variants.mjs [--op newcert-ecdsa|newcert-rsa|bundle-generated] [--concurrency 16] [--rounds 6] [--duration 3] [--warmup 4] [--client node|wrk] [--postgres] VARIANT...\n');
  process.exit(2);
}

/** CPU ms of every thread of the server's processes (`processTree`), by thread id. */
function threadCpuMs(pid) {
  const out = new Map();
  for (const member of processTree(pid)) {
    let tids = [];
    try {
      tids = readdirSync(`/proc/${member}/task`);
    } catch {
      continue; // The process ended meanwhile.
    }
    for (const tid of tids) {
      try {
        out.set(tid, readThreadCpuMs(member, tid));
      } catch {
        // The thread ended meanwhile.
      }
    }
  }
  return out;
}

/** A thread's name in the report: a process's main thread is its event loop. */
function threadName(tid, pids) {
  if (!pids.includes(Number(tid))) return `thread ${tid}`;
  return pids.length === 1 ? 'event loop' : `event loop ${tid}`;
}


const workDir = mkdtempSync(join(tmpdir(), 'certsmith-variants-'));
const variants = [];
/** @type {Awaited<ReturnType<typeof startThrowawayPostgres>> | undefined} */
let postgres;
try {
  process.stderr.write(`${formatMachine(describeMachine(REPO_ROOT))}\n`);
  const { files, path, bodies } = prepareSingleCell({ workDir, trustDir: values.trust, op: values.op });
  const concurrency = Number(values.concurrency);
  if (values.postgres) postgres = await startThrowawayPostgres();
  for (const [index, spec] of positionals.entries()) {
    const variant = parseVariant(spec, REPO_ROOT);
    const extraArgs = [];
    if (postgres !== undefined && variant.kind === 'certsmith' && !variant.flags.some((flag) => flag === '--db-config' || flag === '--no-store')) {
      const dbConfig = join(workDir, `variant-${index}.db-config.json`);
      writeFileSync(dbConfig, JSON.stringify({ driver: 'postgres', data_source: postgres.createDatabase(`variant_${index}`) }));
      extraArgs.push('--db-config', dbConfig);
    }
    variant.server = await startVariant(variant, { files, workDir, extraArgs });
    variant.client = createClient(variant.server.url);
    variant.rounds = [];
    variants.push(variant);
  }
  if (values.client !== 'node' && values.client !== 'wrk') throw new Error('--client must be node or wrk');
  const wrkScriptFile = join(workDir, 'cell.lua');
  // The cells send one body each (operations.mjs), so wrk repeats it.
  if (values.client === 'wrk') writeFileSync(wrkScriptFile, wrkPostScript(path, bodies[0]));
  const measure = (variant, durationMs) =>
    values.client === 'wrk'
      ? runWrkRound({ url: variant.server.url, script: wrkScriptFile, concurrency, durationMs, pid: variant.server.pid })
      : runRound({ client: variant.client, path, bodies, concurrency, durationMs, pid: variant.server.pid });
  for (const variant of variants) await measure(variant, Number(values.warmup) * 1000);
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
      const before = threadCpuMs(variant.server.pid);
      const postgresBefore = postgres === undefined ? NaN : readCpuMs(postgres.serverPid());
      const started = performance.now();
      const result = await measure(variant, Number(values.duration) * 1000);
      const elapsed = performance.now() - started;
      if (postgres !== undefined) result.postgresCpuMsPerRequest = (readCpuMs(postgres.serverPid()) - postgresBefore) / Math.max(1, result.ok);
      const pids = processTree(variant.server.pid);
      result.threads = [...threadCpuMs(variant.server.pid)]
        .map(([tid, ms]) => ({ thread: threadName(tid, pids), cores: (ms - (before.get(tid) ?? 0)) / elapsed, usPerRequest: ((ms - (before.get(tid) ?? 0)) * 1000) / Math.max(1, result.ok) }))
        .filter((thread) => thread.cores >= 0.02)
        .sort((a, b) => b.cores - a.cores);
      variant.rounds.push(result);
    }
  }
  console.log(`${values.op} c=${concurrency}, ${values.client} client, ${values.rounds} × ${values.duration} s rounds, load average ${loadavg()[0].toFixed(1)} at the end`);
  console.log('');
  const postgresColumn = postgres === undefined ? '' : ' PostgreSQL CPU ms/req |';
  console.log(`| variant | req/s | p50 ms | p99 ms | CPU ms/req | cores busy | idle cores | load generator cores | errors | peak RSS MB |${postgresColumn} threads (last round): cores, µs/req |`);
  console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|${postgresColumn === '' ? '' : '---:|'}---|`);
  for (const variant of variants) {
    const s = summarise(variant.rounds);
    const threads = variant.rounds.at(-1).threads.map((t) => `${t.thread} ${t.cores.toFixed(2)}, ${t.usPerRequest.toFixed(0)}`).join('; ');
    console.log(
      `| ${variant.name} | ${s.rps.toFixed(0)} | ${s.p50Ms.toFixed(2)} | ${s.p99Ms.toFixed(2)} | ${s.cpuMsPerRequest.toFixed(3)} | ${s.serverCores.toFixed(2)} | ${s.machineIdleCores.toFixed(2)} | ${s.clientCores.toFixed(2)} | ${s.errors} | ${(s.peakRssBytes / 2 ** 20).toFixed(0)} |${postgres === undefined ? '' : ` ${median(variant.rounds.map((r) => r.postgresCpuMsPerRequest)).toFixed(3)} |`} ${threads} |`,
    );
  }
} finally {
  for (const variant of variants) await variant.client?.close();
  await stopAllServers();
  postgres?.stop();
  rmSync(workDir, { recursive: true, force: true });
}
