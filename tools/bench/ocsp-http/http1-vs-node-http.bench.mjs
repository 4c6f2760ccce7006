#!/usr/bin/env node
/**
 * Why `certsmith ocspserve` answers through `@certsmith/http1-server` (node:net) and not node:http:
 * the same `OcspResponder` on the same responses file (the workload of the `ocsp` comparison cell:
 * 1,000 pre-signed responses, POST round-robin, one unknown serial in 50) behind each, one process
 * and one thread each, driven by `wrk -t1` (`-c` keep-alive connections). Rounds alternate between
 * the servers; per round it prints answers/s, p50/p99 latency and the server's CPU per answer split
 * into user and kernel time (from /proc), then the medians. Needs `wrk` and a build; run through
 * /work/bin/quiet on the shared machine:
 *
 *   npm run build && node tools/bench/ocsp-http/http1-vs-node-http.bench.mjs [--seconds 4] [--rounds 3] [--concurrency 16]
 *
 * Results and their reading: docs/performance.md, "The OCSP responder against `cfssl ocspserve`".
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';
import { writeOcspWorkload, wrkScript } from '../compare/ocsp.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const { seconds, rounds, concurrency } = readBenchOptions(import.meta.url, {
  // wrk's -d takes whole seconds.
  seconds: { type: 'integer', default: 4, min: 1 },
  rounds: { type: 'integer', default: 3, min: 1 },
  // wrk needs at least one connection per thread (-t1).
  concurrency: { type: 'integer', default: 16, min: 1 },
});
const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** User and kernel CPU milliseconds of a process (all its threads). */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: (Number(fields[11]) * 1000) / ticks, kernel: (Number(fields[12]) * 1000) / ticks };
}

function startServer(kind, responsesFile) {
  const child = spawn(process.execPath, [join(here, 'responder-server.mjs'), kind, responsesFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) resolve({ kind, child, url: `http://127.0.0.1:${match[1]}` });
    });
    child.once('exit', (code) => reject(new Error(`${kind} server exited with ${code}`)));
  });
}

function wrk(url, script, durationSeconds) {
  const out = execFileSync('wrk', ['-t1', `-c${concurrency}`, `-d${durationSeconds}s`, '--timeout', '10s', '-s', script, `${url}/`], { encoding: 'utf8' });
  const line = /^OCSPBENCH (\{.*\})$/m.exec(out);
  if (!line) throw new Error(`wrk printed no result:\n${out}`);
  return JSON.parse(line[1]);
}

const work = mkdtempSync(join(tmpdir(), 'ocsp-http-bench-'));
const servers = [];
try {
  const ca = { certFile: join(work, 'ca.pem'), keyFile: join(work, 'ca-key.pem') };
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=ocsp-http bench CA', '-days', '2', '-keyout', ca.keyFile, '-out', ca.certFile], { stdio: 'ignore' });
  const { responsesFile, requests } = await writeOcspWorkload(ca, work);
  const script = join(work, 'post.lua');
  writeFileSync(script, wrkScript(requests, 'post'));
  for (const kind of ['node-http', 'http1']) servers.push(await startServer(kind, responsesFile));
  for (const server of servers) wrk(server.url, script, 1); // warm-up
  const results = Object.fromEntries(servers.map((server) => [server.kind, []]));
  console.log(`${requests.length} requests round-robin, wrk -t1 -c${concurrency}, ${rounds} × ${seconds} s rounds`);
  for (let round = 0; round < rounds; round++) {
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) {
      const before = cpuMs(server.child.pid);
      const w = wrk(server.url, script, seconds);
      const after = cpuMs(server.child.pid);
      const result = {
        rps: w.requests / (w.durationUs / 1e6),
        p50Ms: w.p50Us / 1000,
        p99Ms: w.p99Us / 1000,
        userUs: ((after.user - before.user) * 1000) / w.requests,
        kernelUs: ((after.kernel - before.kernel) * 1000) / w.requests,
        errors: w.status + w.connect + w.read + w.write + w.timeout,
      };
      results[server.kind].push(result);
      console.log(`round ${round + 1} ${server.kind.padEnd(9)} ${result.rps.toFixed(0).padStart(7)} answers/s  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  CPU ${(result.userUs + result.kernelUs).toFixed(1)} µs/answer (user ${result.userUs.toFixed(1)} + kernel ${result.kernelUs.toFixed(1)})  errors ${result.errors}`);
    }
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log('\n| server | answers/s | p50 ms | p99 ms | CPU µs/answer (user + kernel) |\n|---|---:|---:|---:|---:|');
  for (const [kind, list] of Object.entries(results)) {
    const pick = (field) => median(list.map((r) => r[field]));
    console.log(`| ${kind} | ${pick('rps').toFixed(0)} | ${pick('p50Ms').toFixed(2)} | ${pick('p99Ms').toFixed(2)} | ${(pick('userUs') + pick('kernelUs')).toFixed(1)} (${pick('userUs').toFixed(1)} + ${pick('kernelUs').toFixed(1)}) |`);
  }
} finally {
  for (const server of servers) server.child.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
