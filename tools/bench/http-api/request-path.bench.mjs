#!/usr/bin/env node
/**
 * What the path every request takes outside its operation costs the server — Koa and the
 * middleware, the request id, reading and validating the body, the envelope, the access log line,
 * metrics — in this checkout against another (`--base`), each serving one operation that does
 * nothing but answer a bundle-sized result (request-path.server.mjs). docs/performance.md "The
 * request path outside the operation". Run by hand after `npm run build` in both checkouts:
 *
 *   node tools/bench/http-api/request-path.bench.mjs --base /path/to/other/checkout [--concurrency 16]
 *       [--rounds 6] [--duration 3]
 *
 * wrk (one thread, `--concurrency` connections, a 2 KB JSON body) runs on CPU 0 and each server is
 * pinned to CPU 1, so the servers' CPU time is disturbed as little as a 2-core machine allows;
 * their log lines go to a file, as a benchmarked server's do. Rounds alternate between the two.
 * Reported per checkout (medians over rounds): req/s, server CPU µs per request (process, and its
 * event loop alone from /proc/<pid>/task/<pid>/stat).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';
import { pinnedCpus, runWrkRound, wrkPostScript } from '../compare/ocsp.mjs';
import { readThreadCpuMs, stopAllServers, trackChild } from '../compare/servers.mjs';

const REPO_ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const SERVER = fileURLToPath(new URL('request-path.server.mjs', import.meta.url));
const options = readBenchOptions(import.meta.url, {
  base: { type: 'string', value: 'DIR', required: true },
  concurrency: { type: 'integer', default: 16, min: 1 },
  rounds: { type: 'integer', default: 6, min: 1 },
  duration: { type: 'integer', default: 3, min: 1 },
});
const cpus = pinnedCpus();
if (cpus === null) throw new Error('request-path.bench.mjs needs at least 2 CPUs (wrk on one, the server on the others)');

async function startServer(name, checkout, workDir) {
  const log = openSync(join(workDir, `${name}.log`), 'a');
  const child = spawn('taskset', ['-c', cpus.server, process.execPath, SERVER, checkout], { stdio: ['ignore', log, 'pipe'] });
  trackChild(child);
  const port = await new Promise((resolvePort, reject) => {
    let text = '';
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const match = /LISTENING (\d+)/.exec(text);
      if (match) resolvePort(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`${name} server exited (${code}): ${text}`)));
  });
  return { name, checkout, pid: child.pid, url: `http://127.0.0.1:${port}`, rounds: [] };
}

const workDir = mkdtempSync(join(tmpdir(), 'certsmith-request-path-'));
try {
  const script = join(workDir, 'post.lua');
  writeFileSync(script, wrkPostScript('/api/v1/cfssl/echo', JSON.stringify({ certificate: 'A'.repeat(2000), flavor: 'ubiquitous' })));
  const servers = [await startServer('this checkout', REPO_ROOT, workDir), await startServer('base', resolve(options.base), workDir)];
  const measure = async (server, durationMs) => {
    const before = readThreadCpuMs(server.pid);
    const result = await runWrkRound({ url: server.url, script, concurrency: options.concurrency, durationMs, pid: server.pid, cpus: cpus.wrk });
    if (result.errors > 0) throw new Error(`${server.name}: ${result.firstError}`);
    return { rps: result.rps, processUs: result.cpuMsPerRequest * 1000, eventLoopUs: ((readThreadCpuMs(server.pid) - before) * 1000) / result.ok };
  };
  // Warm-up: V8 optimises both before anything is counted.
  for (const server of servers) await measure(server, 3000);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const server of round % 2 === 0 ? servers : [...servers].reverse()) server.rounds.push(await measure(server, options.duration * 1000));
  }
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(`c=${options.concurrency}, wrk on CPU ${cpus.wrk}, servers on CPU ${cpus.server}, ${options.rounds} × ${options.duration} s rounds (medians), load average ${loadavg()[0].toFixed(1)} at the end`);
  console.log('| server | req/s | CPU µs/req | event loop µs/req | event loop µs/req, each round |');
  console.log('|---|---:|---:|---:|---|');
  for (const server of servers) {
    const rounds = server.rounds;
    console.log(`| ${server.name} | ${median(rounds.map((r) => r.rps)).toFixed(0)} | ${median(rounds.map((r) => r.processUs)).toFixed(1)} | ${median(rounds.map((r) => r.eventLoopUs)).toFixed(1)} | ${rounds.map((r) => r.eventLoopUs.toFixed(0)).join(' ')} |`);
  }
} finally {
  await stopAllServers();
  rmSync(workDir, { recursive: true, force: true });
}
