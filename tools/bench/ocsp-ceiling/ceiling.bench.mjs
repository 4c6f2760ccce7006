#!/usr/bin/env node
/**
 * The ceiling of issue 21's OCSP target on this machine: what servers that do no OCSP work at all
 * reach under the `ocsp` cell's load, next to `cfssl ocspserve` and `certsmith ocspserve` in the
 * same interleaved rounds. The load is the cell's (tools/bench/compare/ocsp.mjs): `wrk -t1`,
 * 16 keep-alive connections, POST of real OCSP requests round-robin over 1,000 stored responses of
 * the bench CA with one unknown serial in 50.
 *
 * Servers (each started once per layout, all idle but the one measured):
 * - `haproxy`: HAProxy answering every request with one stored response as a static body
 *   (`http-request return … file`) and the headers `ocspserve` sends — a C event loop with
 *   nothing to do;
 * - `http1-static`: `@certsmith/http1-server` (ocspserve's HTTP layer, limits and all) answering
 *   the same fixed answer, in 1 and 2 node:cluster processes;
 * - `net-floor`: node:net counting `\r\n\r\n`s and writing the pre-encoded answer — no HTTP at all,
 *   the runtime's and the kernel's floor (static-server.mjs);
 * - `cfssl`: `cfssl ocspserve -responses` (Debian's 1.2.0);
 * - `certsmith`: `certsmith ocspserve -responses` as the executable runs it.
 *
 * Two layouts:
 * - `shared` — the issue's: server and wrk free on both cores (GOMAXPROCS 2; haproxy with 1 and
 *   2 threads, certsmith and http1-static with 1 and 2 processes — 2 is ocspserve's default here);
 * - `pinned` — the usual way to measure a server without its load generator competing: wrk on
 *   CPU 0 (`taskset -c 0`), the server on CPU 1 (`taskset -c 1`: GOMAXPROCS then comes as 1,
 *   haproxy with 1 thread, certsmith and http1-static with 1 process).
 *
 * Rounds alternate the servers' order; medians over rounds. Each answer is checked before timing
 * (the stored DER for a known serial by every OCSP server; a 200 with the static body by the
 * others); wrk counts every status ≥ 400 and socket error. Needs wrk, haproxy, cfssl and a build.
 * On the shared machine run it through /work/bin/quiet (≈ 2½ min with the defaults):
 *
 *   npm run build
 *   /work/bin/quiet node tools/bench/ocsp-ceiling/ceiling.bench.mjs [--rounds 3] [--seconds 3]
 *     [--warmup 1] [--concurrency 16] [--layouts shared,pinned]
 *     [--servers haproxy,http1-static,net-floor,cfssl,certsmith] [--json FILE]
 *
 * `--seconds` and `--warmup` are whole seconds (wrk's -d; `--warmup 0` skips the warm-up).
 *
 * Results and their reading: docs/performance.md, "The ceiling on this machine".
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { prepareOcspResponse } from '@certsmith/revocation';
import { readBenchOptions } from '../bench-options.mjs';
import { median } from '../compare/load.mjs';
import { checkAnswers, runWrkRound, startOcspServer, writeOcspWorkload, wrkScript } from '../compare/ocsp.mjs';
import { createSignerCa } from '../compare/pki.mjs';
import { certsmithNodeFlags, findFreePort, runBenchScript, stopChild, tail, trackChild } from '../compare/servers.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = join(here, '../../..');
const SERVER_KINDS = ['haproxy', 'http1-static', 'net-floor', 'cfssl', 'certsmith'];
const options = readBenchOptions(import.meta.url, {
  rounds: { type: 'integer', default: 3, min: 1 },
  seconds: { type: 'integer', default: 3, min: 1 },
  warmup: { type: 'integer', default: 1, min: 0 },
  concurrency: { type: 'integer', default: 16, min: 1 },
  layouts: { type: 'list', default: 'shared,pinned', choices: ['shared', 'pinned'] },
  servers: { type: 'list', default: SERVER_KINDS.join(','), choices: SERVER_KINDS },
  json: { type: 'string', value: 'FILE' },
});
const rounds = options.rounds;
const seconds = options.seconds;
const warmupSeconds = options.warmup;
const concurrency = options.concurrency;
const layouts = options.layouts;
const serverKinds = options.servers;
const jsonFile = options.json;

/** CPUs of the pinned layout. */
const WRK_CPU = '0';
const SERVER_CPU = '1';

/**
 * @typedef {object} Contender
 * @property {string} key      row label
 * @property {string} kind     haproxy | http1-static | net-floor | cfssl | certsmith
 * @property {number} processes
 */

/**
 * The servers measured in a layout. Shared: haproxy with 1 and 2 threads and certsmith and
 * http1-static with 1 and 2 processes, because with wrk on the same cores one event loop can
 * beat two; pinned: one of each on the server's one CPU.
 */
function contenders(layout) {
  const counts = layout === 'pinned' ? [1] : [1, 2];
  const list = [];
  for (const kind of serverKinds) {
    if (kind === 'haproxy') for (const n of counts) list.push({ key: `haproxy static, ${n} thread${n > 1 ? 's' : ''}`, kind, processes: n });
    else if (kind === 'http1-static') for (const n of counts) list.push({ key: `http1-server static, ${n} process${n > 1 ? 'es' : ''}`, kind, processes: n });
    else if (kind === 'net-floor') list.push({ key: 'node:net floor, 1 process', kind, processes: 1 });
    else if (kind === 'cfssl') list.push({ key: `cfssl ocspserve (GOMAXPROCS ${layout === 'pinned' ? 1 : 2})`, kind, processes: 1 });
    else if (kind === 'certsmith') for (const n of counts.toReversed()) list.push({ key: `certsmith ocspserve --workers ${n}${n === 2 ? ' (default here)' : ''}`, kind, processes: n });
    else throw new Error(`unknown server ${kind}`);
  }
  return list;
}

/** The headers `certsmith ocspserve` sends with a stored response, for the static servers. */
function answerHeaders(der) {
  const prepared = prepareOcspResponse(der);
  const maxAge = Math.max(0, Math.floor(((prepared.nextUpdateMs ?? Date.now()) - Date.now()) / 1000));
  const headers = { 'Last-Modified': prepared.lastModified, 'Cache-Control': `max-age=${maxAge}, public, no-transform, must-revalidate`, ETag: prepared.etag, 'Content-Type': 'application/ocsp-response' };
  if (prepared.expires !== null) headers.Expires = prepared.expires;
  return headers;
}

/** Spawn a server, wait for its `listening <port>` line or for it to answer, register it. */
async function spawnServer(label, command, commandArgs, workDir, ready) {
  const logFile = join(workDir, `${label.replace(/\W+/g, '-')}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', fd] });
  closeSync(fd);
  trackChild(child);
  let exited = false;
  child.once('exit', () => (exited = true));
  const stop = () => stopChild(child);
  const port = await ready(child);
  if (port === null || exited) {
    await stop();
    throw new Error(`${label} did not start: ${command} ${commandArgs.join(' ')}\n${tail(logFile)}`);
  }
  return { pid: child.pid, url: `http://127.0.0.1:${port}`, stop };
}

/** Resolves with the port of a `listening <port>` line on stdout, `null` on exit or after 30 s. */
function listeningLine(child) {
  return new Promise((resolve) => {
    let out = '';
    const timer = setTimeout(() => resolve(null), 30_000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once('exit', () => resolve(null));
  });
}

/** Resolves with `port` once a TCP connect there succeeds, `null` after 30 s or on exit. */
async function acceptsOn(child, port) {
  const { connect } = await import('node:net');
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const ok = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return port;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return null;
}

/** Start one contender in a layout. */
async function startContender(contender, layout, workload) {
  const pin = layout === 'pinned' ? ['taskset', '-c', SERVER_CPU] : [];
  const { workDir, responsesFile, requests, bodyFile, headers } = workload;
  if (contender.kind === 'cfssl' || contender.kind === 'certsmith') {
    const extraArgs = contender.kind === 'certsmith' ? ['--workers', String(contender.processes)] : [];
    return startOcspServer({ kind: contender.kind, responsesFile, probeBody: requests[0].der, workDir, repoRoot, extraArgs, cpus: layout === 'pinned' ? SERVER_CPU : undefined });
  }
  if (contender.kind === 'haproxy') {
    const port = await findFreePort();
    const config = join(workDir, `haproxy-${layout}.cfg`);
    const hdrs = Object.entries(headers)
      .filter(([name]) => name !== 'Content-Type')
      .map(([name, value]) => `hdr ${name} "${value.replaceAll('"', '\\"')}"`)
      .join(' ');
    writeFileSync(
      config,
      [
        'global',
        `  nbthread ${contender.processes}`,
        '  maxconn 4096',
        'defaults',
        '  mode http',
        '  timeout client 65s',
        '  timeout connect 5s',
        '  timeout server 5s',
        '  option http-keep-alive',
        'frontend ocsp',
        `  bind 127.0.0.1:${port}`,
        `  http-request return status 200 content-type application/ocsp-response file ${bodyFile} ${hdrs}`,
        '',
      ].join('\n')
    );
    const check = spawnSync('haproxy', ['-c', '-f', config], { encoding: 'utf8' });
    if (check.status !== 0) throw new Error(`haproxy config rejected: ${check.stderr}${check.stdout}`);
    const [command, ...rest] = [...pin, 'haproxy', '-db', '-f', config];
    return spawnServer(contender.key, command, rest, workDir, (child) => acceptsOn(child, port));
  }
  const nodeArgs = [...certsmithNodeFlags(repoRoot), '--no-allocation-site-pretenuring'];
  const kind = contender.kind === 'net-floor' ? 'net-floor' : 'http1';
  const [command, ...rest] = [...pin, process.execPath, ...nodeArgs, join(here, 'static-server.mjs'), kind, bodyFile, JSON.stringify(headers), '--processes', String(contender.processes)];
  return spawnServer(contender.key, command, rest, workDir, listeningLine);
}

/** One POST of a known serial answered 200 with `body`: the static servers' check. */
async function checkStatic(url, requestDer, body) {
  const response = await fetch(`${url}/`, { method: 'POST', body: requestDer, headers: { 'Content-Type': 'application/ocsp-request' } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return response.status === 200 && bytes.equals(body) ? null : `answered ${response.status} with ${bytes.length} bytes`;
}

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '–');

async function main() {
  if (spawnSync('wrk', ['-v']).error || spawnSync('haproxy', ['-v']).error || spawnSync('cfssl', ['version']).error) throw new Error('needs wrk, haproxy and cfssl on the PATH');
  const workDir = mkdtempSync(join(tmpdir(), 'certsmith-ocsp-ceiling-'));
  const cpuModel = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`${availableParallelism()} × ${cpuModel}, Node ${process.version}, load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  console.log(`wrk -t1 -c${concurrency}, POST, ${rounds} × ${seconds} s rounds after ${warmupSeconds} s warm-up, interleaved`);
  const results = [];
  try {
    const ca = createSignerCa(workDir);
    const { responsesFile, requests } = await writeOcspWorkload(ca, workDir);
    const body = requests[0].answer;
    const bodyFile = join(workDir, 'answer.der');
    writeFileSync(bodyFile, body);
    const workload = { workDir, responsesFile, requests, bodyFile, headers: answerHeaders(body) };
    const script = join(workDir, 'ocsp-post.lua');
    writeFileSync(script, wrkScript(requests, 'post'));

    for (const layout of layouts) {
      const list = contenders(layout);
      const running = [];
      try {
        for (const contender of list) {
          const server = await startContender(contender, layout, workload);
          running.push({ contender, server, rounds: [] });
          const problem = contender.kind === 'cfssl' || contender.kind === 'certsmith' ? await checkAnswers(server.url, requests, 'POST') : await checkStatic(server.url, requests[0].der, body);
          if (problem !== null) throw new Error(`${contender.key}: ${problem}`);
        }
        const wrkCpus = layout === 'pinned' ? WRK_CPU : undefined;
        const round = (entry, s) => runWrkRound({ url: entry.server.url, script, concurrency, durationMs: s * 1000, pid: entry.server.pid, cpus: wrkCpus });
        if (warmupSeconds > 0) for (const entry of running) await round(entry, warmupSeconds);
        for (let i = 0; i < rounds; i++) {
          // Rotate the order each round, so no server always follows the same one.
          const order = running.map((_, j) => running[(i + j) % running.length]);
          for (const entry of order) {
            const result = await round(entry, seconds);
            entry.rounds.push(result);
            console.log(`${layout} round ${i + 1}: ${entry.contender.key}: ${fmt(result.rps)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, ${(result.cpuMsPerRequest * 1000).toFixed(1)} µs/answer, server ${result.serverCores.toFixed(2)} + wrk ${result.clientCores.toFixed(2)} cores, errors ${result.errors}`);
          }
        }
      } finally {
        await Promise.all(running.map((entry) => entry.server.stop()));
      }
      const cfsslRps = median(running.find((entry) => entry.contender.kind === 'cfssl')?.rounds.map((r) => r.rps) ?? []);
      for (const entry of running) {
        const pick = (field) => median(entry.rounds.map((r) => r[field]));
        results.push({
          layout,
          server: entry.contender.key,
          rps: pick('rps'),
          ratioToCfssl: pick('rps') / cfsslRps,
          p50Ms: pick('p50Ms'),
          p99Ms: pick('p99Ms'),
          cpuUsPerAnswer: pick('cpuMsPerRequest') * 1000,
          userUsPerAnswer: pick('userMsPerRequest') * 1000,
          kernelUsPerAnswer: pick('systemMsPerRequest') * 1000,
          serverCores: pick('serverCores'),
          wrkCores: pick('clientCores'),
          errors: entry.rounds.reduce((sum, r) => sum + r.errors, 0),
          roundsRps: entry.rounds.map((r) => Math.round(r.rps)),
        });
      }
    }
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }

  console.log('\n| layout | server | req/s (median) | ÷ cfssl | p50 ms | p99 ms | CPU µs/answer (user + kernel) | server cores | wrk cores | errors | req/s per round |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of results) {
    console.log(
      `| ${r.layout} | ${r.server} | ${fmt(r.rps)} | ${r.ratioToCfssl.toFixed(2)}× | ${r.p50Ms.toFixed(2)} | ${r.p99Ms.toFixed(2)} | ${r.cpuUsPerAnswer.toFixed(1)} (${r.userUsPerAnswer.toFixed(1)} + ${r.kernelUsPerAnswer.toFixed(1)}) | ${r.serverCores.toFixed(2)} | ${r.wrkCores.toFixed(2)} | ${r.errors} | ${r.roundsRps.map((n) => fmt(n)).join(', ')} |`
    );
  }
  if (jsonFile) writeFileSync(jsonFile, `${JSON.stringify({ machine: { cpus: availableParallelism(), model: cpus()[0]?.model, node: process.version }, rounds, seconds, concurrency, results }, null, 2)}\n`);
}

runBenchScript(main);
