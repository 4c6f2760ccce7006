#!/usr/bin/env node
/**
 * A/B of `certsmith ocspserve` between two builds: this checkout and another one (`--base DIR`, a
 * built checkout of the commit to compare with, e.g. `git worktree add --detach /tmp/base main`,
 * node_modules copied, `npm run build`), on the `ocsp` cell's workload (wrk -t1 -c16, POST of real
 * requests, 1,000 stored responses, one unknown serial in 50), in interleaved rounds. Each change
 * to the responder's hot path that stays is justified by a run of this (docs/performance.md, OCSP
 * section). Layouts as in `ceiling.bench.mjs`: `pinned` (wrk on CPU 0, the server with
 * `--workers 1` on CPU 1) and `shared` (both free; `--workers 2`, the default here, or `--workers N`).
 *
 *   npm run build
 *   /work/bin/quiet node tools/bench/ocsp-ceiling/ab.bench.mjs --base /tmp/base [--rounds 5]
 *     [--seconds 3] [--layouts pinned,shared] [--workers 2] [--get-post]
 *
 * `--seconds` is whole seconds (wrk's -d), `--workers` 1–64 (ocspserve's own range).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';
import { median } from '../compare/load.mjs';
import { checkAnswers, runWrkRound, startOcspServer, writeOcspWorkload, wrkScript } from '../compare/ocsp.mjs';
import { createSignerCa } from '../compare/pki.mjs';
import { runBenchScript } from '../compare/servers.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const options = readBenchOptions(import.meta.url, {
  // Checked here: a checkout without a build would otherwise fail only after the workload is made.
  base: { type: 'string', value: 'DIR', required: true, check: (dir) => (existsSync(join(resolve(dir), 'apps/server/dist/cli.js')) ? undefined : `--base must be a built certsmith checkout: no apps/server/dist/cli.js in ${resolve(dir)}`) },
  rounds: { type: 'integer', default: 5, min: 1 },
  seconds: { type: 'integer', default: 3, min: 1 },
  layouts: { type: 'list', default: 'pinned,shared', choices: ['pinned', 'shared'] },
  workers: { type: 'integer', default: 2, min: 1, max: 64 },
  'get-post': { type: 'boolean' },
});
const base = options.base;
const builds = [
  { key: 'A (this checkout)', repoRoot: join(here, '../../..') },
  { key: `B (${base})`, repoRoot: resolve(base) },
];
const rounds = options.rounds;
const seconds = options.seconds;
const layouts = options.layouts;
const methods = options['get-post'] ? 'get-post' : 'post';
/** `--workers N` for the shared layout (default 2, ocspserve's default here); pinned is always 1. */
const sharedWorkers = String(options.workers);

async function main() {
  console.log(`${availableParallelism()} × ${cpus()[0]?.model}, Node ${process.version}, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  console.log(`wrk -t1 -c16, ${methods}, ${rounds} × ${seconds} s rounds after 1 s warm-up, interleaved`);
  const workDir = mkdtempSync(join(tmpdir(), 'certsmith-ocsp-ab-'));
  const lines = [];
  try {
    const ca = createSignerCa(workDir);
    const { responsesFile, requests } = await writeOcspWorkload(ca, workDir);
    const script = join(workDir, 'ocsp.lua');
    writeFileSync(script, wrkScript(requests, methods));
    for (const layout of layouts) {
      const pinned = layout === 'pinned';
      const running = [];
      try {
        for (const build of builds) {
          const server = await startOcspServer({ kind: 'certsmith', responsesFile, probeBody: requests[0].der, workDir, repoRoot: build.repoRoot, extraArgs: ['--workers', pinned ? '1' : sharedWorkers], cpus: pinned ? '1' : undefined });
          const problem = (await checkAnswers(server.url, requests, 'POST')) ?? (methods === 'get-post' ? await checkAnswers(server.url, requests, 'GET') : null);
          if (problem !== null) throw new Error(`${build.key}: ${problem}`);
          running.push({ build, server, rounds: [] });
        }
        const round = (entry, s) => runWrkRound({ url: entry.server.url, script, concurrency: 16, durationMs: s * 1000, pid: entry.server.pid, cpus: pinned ? '0' : undefined });
        for (const entry of running) await round(entry, 1);
        for (let i = 0; i < rounds; i++) {
          for (const entry of i % 2 === 0 ? running : [...running].reverse()) {
            const r = await round(entry, seconds);
            entry.rounds.push(r);
            console.log(`${layout} round ${i + 1} ${entry.build.key}: ${Math.round(r.rps)} req/s, p99 ${r.p99Ms.toFixed(2)} ms, ${(r.cpuMsPerRequest * 1000).toFixed(1)} µs/answer (${(r.userMsPerRequest * 1000).toFixed(1)} user), errors ${r.errors}`);
          }
        }
      } finally {
        await Promise.all(running.map((entry) => entry.server.stop()));
      }
      for (const entry of running) {
        const pick = (field) => median(entry.rounds.map((r) => r[field]));
        lines.push(
          `| ${layout} | ${entry.build.key} | ${Math.round(pick('rps')).toLocaleString('en-US')} | ${pick('p99Ms').toFixed(2)} | ${(pick('cpuMsPerRequest') * 1000).toFixed(1)} (${(pick('userMsPerRequest') * 1000).toFixed(1)} + ${(pick('systemMsPerRequest') * 1000).toFixed(1)}) | ${entry.rounds.map((r) => Math.round(r.rps).toLocaleString('en-US')).join(', ')} |`
        );
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
  console.log('\n| layout | build | req/s (median) | p99 ms | CPU µs/answer (user + kernel) | req/s per round |\n|---|---|---:|---:|---:|---|');
  for (const line of lines) console.log(line);
}

runBenchScript(main);
