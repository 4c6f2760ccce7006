#!/usr/bin/env node
/**
 * The first seconds of load on a freshly started server: req/s and CPU per request second by second,
 * from the moment it is ready, for each variant (variant-spec.mjs), starts alternating between
 * variants; medians over the starts. Run by hand after `npm run build`, never in the test suite:
 *
 *   node tools/bench/compare/first-seconds.mjs --op newcert-ecdsa --seconds 12 --starts 3 \
 *     'default;--no-store' 'usual-tier-up;--no-store --node-arg=--interrupt-budget=67584'
 *
 * Why it exists: a fresh node process serves its first seconds unoptimised (V8 tiers a function up
 * after it has run a while), which the load cells of `run.mjs` must not measure as steady state
 * (its `--settle`) and which an operator scaling out sees as the new instance's first seconds
 * (docs/performance.md, "The first seconds of load").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createClient, median, runRound } from './load.mjs';
import { prepareSingleCell } from './single-cell.mjs';
import { describeMachine, formatMachine } from './report.mjs';
import { stopAllServers } from './servers.mjs';
import { parseVariant, startVariant } from './variant-spec.mjs';

const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const { values, positionals } = parseArgs({
  options: {
    op: { type: 'string', default: 'newcert-ecdsa' },
    concurrency: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '12' },
    starts: { type: 'string', default: '3' },
    trust: { type: 'string', default: '/work/shared/trust' },
  },
  allowPositionals: true,
});
const seconds = Number(values.seconds);
const starts = Number(values.starts);
const concurrency = Number(values.concurrency);
if (positionals.length === 0 || !(seconds >= 1 && seconds <= 120) || !(starts >= 1 && starts <= 20) || !(concurrency >= 1 && concurrency <= 256)) {
  process.stderr.write('usage: first-seconds.mjs [--op newcert-ecdsa|newcert-rsa|bundle-generated] [--concurrency 16] [--seconds 1–120] [--starts 1–20] VARIANT...\n');
  process.exit(2);
}

const workDir = mkdtempSync(join(tmpdir(), 'certsmith-first-seconds-'));
try {
  process.stderr.write(`${formatMachine(describeMachine(REPO_ROOT))}\n`);
  const { files, path, bodies } = prepareSingleCell({ workDir, trustDir: values.trust, op: values.op });
  const variants = positionals.map((spec) => ({ ...parseVariant(spec, REPO_ROOT), perSecond: Array.from({ length: seconds }, () => []), readyMs: [] }));
  for (let start = 0; start < starts; start++) {
    for (const variant of start % 2 === 0 ? variants : [...variants].reverse()) {
      const server = await startVariant(variant, { files, workDir });
      const client = createClient(server.url);
      try {
        variant.readyMs.push(server.readyMs);
        for (let second = 0; second < seconds; second++) {
          variant.perSecond[second].push(await runRound({ client, path, bodies, concurrency, durationMs: 1000, pid: server.pid }));
        }
      } finally {
        await client.close();
        await server.stop();
      }
    }
  }
  console.log(`${values.op} c=${concurrency}, second by second from ready, medians of ${starts} starts per variant: req/s (CPU ms/req)`);
  console.log('');
  console.log(`| variant | ready ms | ${Array.from({ length: seconds }, (_, i) => `${i + 1} s`).join(' | ')} |`);
  console.log(`|---|---:|${'---:|'.repeat(seconds)}`);
  for (const variant of variants) {
    const cellsText = variant.perSecond.map((rounds) => `${median(rounds.map((r) => r.rps)).toFixed(0)} (${median(rounds.map((r) => r.cpuMsPerRequest)).toFixed(2)})`);
    console.log(`| ${variant.name} | ${median(variant.readyMs).toFixed(0)} | ${cellsText.join(' | ')} |`);
  }
} finally {
  await stopAllServers();
  rmSync(workDir, { recursive: true, force: true });
}
