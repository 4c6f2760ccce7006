/**
 * A/B of certsmith's start-up — other builds, other flags, other environment — with the full trust
 * data and a CA, as `run.mjs --ops startup` measures it, starts alternating between the variants.
 * Run by hand, never in the test suite, after `npm run build` (in every checkout you name):
 *
 *   node tools/bench/compare/startup-variants.mjs --starts 10 'before@/path/to/main' 'now' 'cfssl'
 *
 * A variant is `name[@checkout][:ENV=value][;certsmith serve flags]` (variant-spec.mjs); a name
 * starting with `cfssl` starts Debian's `cfssl serve` (the machine's drift shows in its figures).
 * Each variant gets one uncounted start first (the page cache), then the starts rotate the order
 * (A B C, B C A, C A B …) so that no variant always follows the same one. Per start: ms from spawn
 * to the first `200` of `/health` (`/scaninfo` for CFSSL), the CPU the process spent by then (all
 * threads, and its main thread alone), ms to the first bundle answer after it, and RSS. Printed:
 * medians with min–max, and each variant's median ratio to the first variant over the rounds.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BUNDLE_PATH } from './operations.mjs';
import { firstAnswerAfterReady, median } from './load.mjs';
import { prepareSingleCell } from './single-cell.mjs';
import { describeMachine, formatMachine } from './report.mjs';
import { killAllServersNow, readCpuMs, readThreadCpuMs, stopAllServers } from './servers.mjs';
import { parseVariant, startVariant } from './variant-spec.mjs';

const REPO_ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

const { values, positionals } = parseArgs({
  options: {
    starts: { type: 'string', default: '8' },
    trust: { type: 'string', default: '/work/shared/trust' },
  },
  allowPositionals: true,
});
const starts = Number(values.starts);
if (positionals.length === 0 || !Number.isInteger(starts) || starts < 1 || starts > 100) {
  process.stderr.write('usage: startup-variants.mjs [--starts 8 (1–100)] [--trust DIR] VARIANT...\n');
  process.exit(2);
}

/** One start: spawn, wait for the first 200, read the process's CPU, then its RSS and first bundle answer (the server stops). */
async function startOnce(variant, { files, bundleBody }) {
  const server = await startVariant(variant, { files, workDir: variant.workDir });
  let cpuMs = NaN;
  let mainThreadCpuMs = NaN;
  try {
    cpuMs = readCpuMs(server.pid);
    mainThreadCpuMs = readThreadCpuMs(server.pid);
  } catch {
    // The process ended right after answering: the start still counts, its CPU is unknown.
  }
  return { ...(await firstAnswerAfterReady(server, BUNDLE_PATH, bundleBody)), cpuMs, mainThreadCpuMs };
}

const spread = (values, digits = 0) => {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return 'n/a';
  return `${median(finite).toFixed(digits)} (${Math.min(...finite).toFixed(digits)}–${Math.max(...finite).toFixed(digits)})`;
};

const workDir = mkdtempSync(join(tmpdir(), 'certsmith-startup-variants-'));
process.once('exit', killAllServersNow);
try {
  process.stderr.write(`${formatMachine(describeMachine(REPO_ROOT))}\n`);
  const { files, bodies } = prepareSingleCell({ workDir, trustDir: values.trust, op: 'bundle-generated' });
  const variants = positionals.map((spec, index) => {
    const variant = parseVariant(spec, REPO_ROOT);
    // Each variant its own data directory: its SQLite store (reused between its starts, as run.mjs does) and logs.
    variant.workDir = join(workDir, `variant-${index}`);
    mkdirSync(variant.workDir);
    variant.runs = [];
    return variant;
  });
  for (const variant of variants) await startOnce(variant, { files, bundleBody: bodies[0] });
  for (let round = 0; round < starts; round++) {
    const shift = round % variants.length;
    for (const variant of [...variants.slice(shift), ...variants.slice(0, shift)]) variant.runs.push(await startOnce(variant, { files, bundleBody: bodies[0] }));
  }
  console.log(`start-up with the full trust data and a CA, ${starts} starts per variant after one uncounted, load average ${loadavg()[0].toFixed(1)} at the end`);
  console.log('');
  console.log('| variant | ready ms, median (min–max) | ratio to first, median of rounds | CPU ms at ready | main thread CPU ms | first bundle ms | RSS MB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const variant of variants) {
    const ratios = variant.runs.map((run, i) => run.readyMs / variants[0].runs[i].readyMs);
    console.log(
      `| ${variant.name} | ${spread(variant.runs.map((r) => r.readyMs))} | ${median(ratios).toFixed(3)} | ${spread(variant.runs.map((r) => r.cpuMs))} | ${spread(variant.runs.map((r) => r.mainThreadCpuMs))} | ${spread(variant.runs.map((r) => r.firstBundleMs))} | ${(median(variant.runs.map((r) => r.rssBytes)) / 2 ** 20).toFixed(0)} |`,
    );
  }
} finally {
  await stopAllServers();
  rmSync(workDir, { recursive: true, force: true });
}
