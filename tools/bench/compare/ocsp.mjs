/**
 * The OCSP responder cells (issue 21): `certsmith ocspserve` and Debian's `cfssl ocspserve` serve the
 * same `-responses` file — one pre-signed response for each of {@link OCSP_SERIALS} serials of the
 * bench CA, signed by the CA itself as `cfssl ocspsign` does when the responder is the CA — and get
 * the same RFC 6960 requests (SHA-1 CertIDs, as clients send) on keep-alive connections:
 *
 * - `ocsp`: POST, the known serials round-robin with one unknown serial in every
 *   {@link UNKNOWN_EVERY} requests (answered `unauthorized`, 200, by both). Target: certsmith ≥ 3×
 *   CFSSL's requests per second at 16 clients, p99 ≤ CFSSL's.
 * - `ocsp-get-post` (highest concurrency only): the same, GET (`/<url-encoded base64>`) and POST alternating. CFSSL 1.2.0
 *   answers every GET of a root-mounted responder 400 (it keeps the leading `/` in the base64 and
 *   turns `+` into a space); the pre-check finds that and the cell then measures certsmith alone.
 * - `ocsp-pinned` (highest concurrency only): `ocsp` again with wrk on CPU 0 and both servers on the
 *   other CPUs, where issue 21's target is judged ({@link measureOcsp} says why).
 *
 * The load generator is `wrk` (C, one thread, `concurrency` connections), not the harness's undici
 * loops: an OCSP answer costs a server a few tens of microseconds, about what undici spends per
 * request, so on a 2-core machine the Node generator would take the cores the servers need.
 * Before timing, each server's answers are checked: the stored DER for a known serial, unauthorized
 * for an unknown one; wrk then counts every status ≥ 400 and every socket error as an error.
 * CPU time and RSS are the server's whole process tree: `certsmith ocspserve` answers in worker
 * processes (one per CPU by default, as CFSSL's Go runtime uses every core), all of them counted.
 */
import { createPrivateKey } from 'node:crypto';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import { buildOcspResponse, createOcspSigningIdentity, createRevocationSigner, encodeCertId, formatOcspResponseFile, ocspValidity } from '@certsmith/revocation';
import { derSequence, parseCertificates } from '@certsmith/x509-core';
import { alternateRounds, median, summarise } from './load.mjs';
import { certsmithLaunch, findFreePort, readCpuSplitMs, readMachineCpu, sampleRss, stopChild, tail, trackChild } from './servers.mjs';

/** Serials with a stored response. */
export const OCSP_SERIALS = 1000;
/** One request in this many names a serial without a stored response. */
export const UNKNOWN_EVERY = 50;

const UNAUTHORIZED = Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x06]);

/** DER INTEGER content of a positive serial. */
function serialContent(serial) {
  let hex = serial.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (Number.parseInt(hex.slice(0, 2), 16) >= 0x80) hex = `00${hex}`;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/**
 * @typedef {object} OcspRequestCase
 * @property {Buffer} der          the OCSPRequest
 * @property {Buffer | null} answer  the stored response, `null` for an unknown serial
 */

/**
 * Sign `count` good responses with the CA, write the responses file (the `ocspdump` format both
 * servers read), and return it with the request sequence: the known serials in order with an
 * unknown serial after every `UNKNOWN_EVERY - 1` known ones.
 *
 * @param {{ certFile: string, keyFile: string }} ca
 * @param {string} dir
 * @param {number} [count]
 * @returns {Promise<{ responsesFile: string, requests: OcspRequestCase[] }>}
 */
export async function writeOcspWorkload(ca, dir, count = OCSP_SERIALS) {
  const certificatePem = readFileSync(ca.certFile, 'utf8');
  const certificate = parseCertificates(certificatePem)[0];
  const key = createPrivateKey(readFileSync(ca.keyFile, 'utf8'));
  const signer = await createRevocationSigner({
    algorithms: algorithmsForKeyObject(key),
    getCertificate: async () => ({ der: certificate.der, pem: certificatePem }),
    sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
    close: async () => {},
  });
  const identity = createOcspSigningIdentity({ signer });
  const hashes = identity.issuerHashes('SHA1');
  // OCSPRequest { TBSRequest { requestList { Request { CertID } } } }
  const requestFor = (serial) => Buffer.from(derSequence(derSequence(derSequence(derSequence(encodeCertId('SHA1', hashes, serialContent(serial)))))));
  const now = new Date();
  const responses = [];
  const requests = [];
  for (let i = 0; i < count; i++) {
    const serial = 0x5a000000n + BigInt(i) * 7919n;
    const der = (await buildOcspResponse({ identity, serialNumber: serial, status: 'good', ...ocspValidity(now) })).der;
    responses.push(der);
    requests.push({ der: requestFor(serial), answer: Buffer.from(der) });
    if (requests.length % UNKNOWN_EVERY === UNKNOWN_EVERY - 1) requests.push({ der: requestFor(0x7e000000n + BigInt(i)), answer: null });
  }
  const responsesFile = join(dir, 'ocsp-responses.txt');
  writeFileSync(responsesFile, formatOcspResponseFile(responses));
  return { responsesFile, requests };
}

/** The GET path of a request: RFC 6960 A.1, URL-encoded standard base64 after the mount path `/`. */
function getPath(der) {
  return `/${encodeURIComponent(der.toString('base64'))}`;
}

/** A Lua string literal of arbitrary bytes (decimal escapes). */
function luaBytes(bytes) {
  let out = '"';
  for (const byte of bytes) out += `\\${byte}`;
  return `${out}"`;
}

/**
 * A wrk script sending the requests round-robin (`methods`: POST only, or GET and POST
 * alternating per request), printing one JSON line of counts and latency percentiles at the end.
 * Requests are formatted in `init`, once per thread: wrk sets the Host header only then.
 *
 * @param {OcspRequestCase[]} requests
 * @param {'post' | 'get-post'} methods
 */
export function wrkScript(requests, methods) {
  const lines = ['local reqs = {}', 'function init(args)'];
  requests.forEach((request, index) => {
    const post = `wrk.format("POST", "/", {["Content-Type"] = "application/ocsp-request"}, ${luaBytes(request.der)})`;
    const get = `wrk.format("GET", "${getPath(request.der)}", nil, nil)`;
    lines.push(`  reqs[#reqs + 1] = ${methods === 'post' || index % 2 === 0 ? post : get}`);
  });
  lines.push(
    'end',
    'local i = 0',
    'function request()',
    '  i = i % #reqs + 1',
    '  return reqs[i]',
    'end',
    'function done(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'OCSPBENCH {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50Us":%d,"p95Us":%d,"p99Us":%d,"maxUs":%d}\\n\',',
    '    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,',
    '    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max))',
    'end'
  );
  return `${lines.join('\n')}\n`;
}

/**
 * A wrk script that POSTs `body` (JSON) to `path` on every request and prints the same summary
 * line as {@link wrkScript}: for the API cells measured with wrk as the load generator
 * (`variants.mjs --client wrk`), which costs the machine a few µs per request where the Node
 * client costs tens.
 */
export function wrkPostScript(path, body) {
  const script = wrkScript([], 'post');
  const request = `wrk.format("POST", "${path}", {["Content-Type"] = "application/json"}, ${luaBytes(Buffer.from(body))})`;
  return script.replace('function init(args)\nend', `function init(args)\n  reqs[1] = ${request}\nend`);
}

/** One request on a fresh connection: status and body (status 0 when nothing answered). */
function send(url, { method, path, body }) {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}${path}`, { method, agent: false, timeout: 2_000, headers: body ? { 'Content-Type': 'application/ocsp-request' } : {} }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve({ status: 0, body: Buffer.alloc(0) }));
    req.end(body);
  });
}

/**
 * Check that a server answers a known and an unknown serial correctly by POST and by GET.
 * Returns `null` when it does, else what it answered instead.
 *
 * @param {string} url
 * @param {OcspRequestCase[]} requests
 * @param {'POST' | 'GET'} method
 */
export async function checkAnswers(url, requests, method) {
  for (const request of [requests[0], requests.find((r) => r.answer === null)]) {
    const asked = method === 'POST' ? { method, path: '/', body: request.der } : { method, path: getPath(request.der) };
    const { status, body } = await send(url, asked);
    const expected = request.answer ?? UNAUTHORIZED;
    if (status !== 200 || !body.equals(expected))
      return `${method} for a${request.answer ? ' known' : 'n unknown'} serial answered ${status} with ${body.length} bytes${
        status === 200 ? ' (not the expected response)' : ''
      }`;
  }
  return null;
}

/**
 * Start `certsmith ocspserve` (as the executable runs: the node flags of its shebang) or
 * `cfssl ocspserve` on the responses file; resolves once a POST is answered 200. The child is
 * registered with the harness's server list, so every exit path stops it.
 *
 * @param {object} options
 * @param {'certsmith' | 'cfssl'} options.kind
 * @param {string} options.responsesFile
 * @param {Buffer} options.probeBody
 * @param {string} options.workDir
 * @param {string} options.repoRoot
 * @param {string[]} [options.nodeArgs]
 * @param {string[]} [options.extraArgs]  more `ocspserve` flags (certsmith: e.g. `--workers 1`)
 * @param {string} [options.cpus]         run the server on these CPUs only (`taskset -c`, e.g. `'1'`)
 */
export async function startOcspServer({ kind, responsesFile, probeBody, workDir, repoRoot, nodeArgs = [], extraArgs = [], cpus }) {
  const port = await findFreePort();
  const launch = kind === 'certsmith' ? certsmithLaunch(repoRoot) : undefined;
  let [command, args] =
    launch !== undefined
      ? [process.execPath, [...launch.flags, ...nodeArgs, join(repoRoot, 'apps/server/dist/cli.js'), 'ocspserve', '-address', '127.0.0.1', '-port', String(port), '-responses', responsesFile, ...extraArgs]]
      : // Warnings only: CFSSL 1.2.0 logs nothing per answered request at its default level either, but the
        // same quiet level for both keeps logging out of the comparison.
        ['cfssl', ['ocspserve', '-address', '127.0.0.1', '-port', String(port), '-responses', responsesFile, '-loglevel', '2', ...extraArgs]];
  // taskset execs the server: the pid stays the server's.
  if (cpus !== undefined) [command, args] = ['taskset', ['-c', cpus, command, ...args]];
  const logFile = join(workDir, `${kind}-ocspserve-${port}.log`);
  const fd = openSync(logFile, 'a');
  const started = performance.now();
  const child = spawn(command, args, { stdio: ['ignore', fd, fd], ...(launch === undefined ? {} : { env: launch.env }) });
  closeSync(fd);
  trackChild(child);
  let exited = false;
  child.once('exit', () => (exited = true));
  const stop = () => stopChild(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = started + 30_000;
  for (;;) {
    if ((await send(url, { method: 'POST', path: '/', body: probeBody })).status === 200)
      return { kind, label: `${kind} ocspserve`, pid: child.pid ?? -1, url, readyMs: performance.now() - started, logFile, stop };
    if (exited || performance.now() > deadline) {
      await stop();
      throw new Error(`${kind} ocspserve did not answer 200: ${command} ${args.join(' ')}\n${tail(logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Whole seconds for wrk's `-d` (it takes no fractions), at least 1. */
const wrkSeconds = (ms) => `${Math.max(1, Math.round(ms / 1000))}s`;

/**
 * Run wrk once against a server; the result has the shape of the harness's `runRound` results
 * (so `summarise` and the report tables take it), plus the server's user/kernel split.
 *
 * @param {object} options
 * @param {string} options.url
 * @param {string} options.script      wrk Lua file
 * @param {number} options.concurrency
 * @param {number} options.durationMs
 * @param {number} options.pid         server process (its worker processes are counted with it)
 * @param {string} [options.cpus]      run wrk on these CPUs only (`taskset -c`)
 */
export async function runWrkRound({ url, script, concurrency, durationMs, pid, cpus }) {
  const rss = sampleRss(pid);
  const cpuBefore = readCpuSplitMs(pid);
  const machineBefore = readMachineCpu();
  const started = performance.now();
  // The shell prints its own /proc stat after wrk ends: cutime/cstime are then wrk's CPU time.
  const wrk = cpus === undefined ? 'wrk' : `taskset -c ${cpus} wrk`;
  const shell = `${wrk} "$@"; code=$?; cat /proc/$$/stat; exit $code`;
  const args = ['-c', shell, 'wrk', '-t1', `-c${concurrency}`, `-d${wrkSeconds(durationMs)}`, '--timeout', '10s', '-s', script, `${url}/`];
  const { code, stdout, stderr } = await new Promise((resolve, reject) => {
    const child = spawn('sh', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(child);
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.once('error', reject);
    child.once('close', (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
  });
  const elapsedMs = performance.now() - started;
  const cpuAfter = readCpuSplitMs(pid);
  const machineAfter = readMachineCpu();
  const peakRssBytes = rss.stop();
  const line = /^OCSPBENCH (\{.*\})$/m.exec(stdout);
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${stderr.trim() || stdout.trim()}`);
  const w = JSON.parse(line[1]);
  const shellStat = stdout.trimEnd().split('\n').at(-1) ?? '';
  const statFields = shellStat.slice(shellStat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  const clientCpuMs = ((Number(statFields[13]) + Number(statFields[14])) * 1000) / ticks;

  const wrkMs = w.durationUs / 1000;
  const errors = w.status + w.connect + w.read + w.write + w.timeout;
  const ok = w.requests - w.status;
  const statuses = { 200: ok };
  if (w.status > 0) statuses['≥400'] = w.status;
  if (errors - w.status > 0) statuses['0'] = errors - w.status;
  const userMs = cpuAfter.userMs - cpuBefore.userMs;
  const systemMs = cpuAfter.systemMs - cpuBefore.systemMs;
  const answered = w.requests + w.timeout;
  return {
    ok,
    errors,
    statuses,
    firstError: errors > 0 ? `wrk: ${JSON.stringify({ status: w.status, connect: w.connect, read: w.read, write: w.write, timeout: w.timeout })}` : undefined,
    elapsedMs: wrkMs,
    rps: ok / (wrkMs / 1000),
    p50Ms: w.p50Us / 1000,
    p95Ms: w.p95Us / 1000,
    p99Ms: w.p99Us / 1000,
    maxMs: w.maxUs / 1000,
    peakRssBytes,
    cpuMsPerRequest: answered > 0 ? (userMs + systemMs) / answered : NaN,
    userMsPerRequest: answered > 0 ? userMs / answered : NaN,
    systemMsPerRequest: answered > 0 ? systemMs / answered : NaN,
    // The server's CPU over the whole wrk run (start-up of wrk included: a few ms).
    serverCores: (userMs + systemMs) / elapsedMs,
    clientCores: clientCpuMs / elapsedMs,
    machineIdleCores: (availableParallelism() * (machineAfter.idle - machineBefore.idle)) / (machineAfter.total - machineBefore.total),
    stealPercent: (100 * (machineAfter.steal - machineBefore.steal)) / (machineAfter.total - machineBefore.total),
  };
}

/**
 * One POST cell on several servers with wrk, rounds alternating as {@link alternateRounds} does;
 * `targets` are `{ key, server }`, the results keyed by `key`, shaped as the Node generator's.
 *
 * @param {Array<{ key: string, server: { url: string, pid: number } }>} targets
 * @param {{ path: string, body: string, concurrency: number, durationMs: number, warmupMs: number, rounds: number, scriptFile: string }} options
 */
export async function alternateWrkRounds(targets, { path, body, concurrency, durationMs, warmupMs, rounds, scriptFile }) {
  writeFileSync(scriptFile, wrkPostScript(path, body));
  return alternateRounds(targets, { durationMs, warmupMs, rounds }, (target, ms) =>
    runWrkRound({ url: target.server.url, script: scriptFile, concurrency, durationMs: ms, pid: target.server.pid })
  );
}

/** `wrk` is installed (Debian: `apt-get install wrk`). */
export function wrkAvailable() {
  const result = spawnSync('wrk', ['-v'], { encoding: 'utf8', timeout: 5_000 });
  return !result.error && /wrk/i.test(`${result.stdout}${result.stderr}`);
}

/**
 * The cells measured: name, title, wrk methods, the method a server must answer for the cell, and the
 * layout — `shared`: wrk and the server on every CPU of the machine; `pinned`: wrk on CPU 0, the
 * server on the others (see {@link measureOcsp}).
 */
const OCSP_CELLS = [
  { name: 'ocsp', title: 'OCSP responder (ocspserve, POST)', methods: 'post', check: 'POST', layout: 'shared', everyConcurrency: true },
  { name: 'ocsp-get-post', title: 'OCSP responder (ocspserve, GET + POST)', methods: 'get-post', check: 'GET', layout: 'shared', everyConcurrency: false },
  { name: 'ocsp-pinned', title: 'OCSP responder (ocspserve, POST; wrk on CPU 0, servers on the rest)', methods: 'post', check: 'POST', layout: 'pinned', everyConcurrency: false },
];

/** CPUs of the pinned layout: wrk on the first, the servers on the rest; null on a 1-CPU machine. */
export function pinnedCpus(cpuCount = availableParallelism()) {
  return cpuCount < 2 ? null : { wrk: '0', server: cpuCount === 2 ? '1' : `1-${cpuCount - 1}` };
}

/**
 * The OCSP cells: both responders on the same responses, warm-up then `rounds` timed rounds per
 * server and concurrency, alternating which server goes first; medians over rounds.
 *
 * Two layouts. In the `shared` one wrk runs beside the servers on every CPU, as the other cells'
 * load generator does. At 70,000–120,000 answers per second wrk needs most of a core itself (≈9 µs
 * per request, as much as the server), so on a 2-core machine that layout measures the generator as
 * much as the server: no server that runs two busy threads reaches 3× CFSSL there, not even haproxy
 * answering a static body (2.57×; one thread 4.04×; docs/performance.md, "OCSP ceiling pass"). The
 * `pinned` layout gives wrk a core of its own (CPU 0) and both servers the same others — the usual
 * way to measure a server when the generator cannot run on another machine; each server sizes itself
 * to the CPUs it is given (Go's GOMAXPROCS and certsmith's default `--workers` both follow the
 * affinity). Issue 21's 3× target is judged in the pinned cell; the shared cells stay in the report.
 *
 * @param {object} options
 * @param {{ certFile: string, keyFile: string }} options.ca
 * @param {string} options.workDir
 * @param {string} options.repoRoot
 * @param {{ concurrency: number[], durationMs: number, warmupMs: number, rounds: number, nodeArgs: string[] }} options.options
 * @param {(message: string) => void} options.log
 * @returns {Promise<Array<object>>} cells as the load operations' (`name`, `title`, `concurrency`, `results`)
 */
export async function measureOcsp({ ca, workDir, repoRoot, options, log }) {
  const concurrencies = (cell) => (cell.everyConcurrency ? options.concurrency : [Math.max(...options.concurrency)]);
  const unavailable = (reason) => (cell) => concurrencies(cell).map((concurrency) => ({ name: cell.name, title: cell.title, concurrency, results: { certsmith: { available: false, reason }, cfssl: { available: false, reason } } }));
  if (!wrkAvailable()) {
    log('ocsp: wrk is not installed (apt-get install wrk): OCSP cells skipped');
    return OCSP_CELLS.flatMap(unavailable('not measured: wrk is not installed'));
  }
  const { responsesFile, requests } = await writeOcspWorkload(ca, workDir);
  const cpus = pinnedCpus();
  const cells = [];
  for (const layout of ['shared', 'pinned']) {
    const layoutCells = OCSP_CELLS.filter((cell) => cell.layout === layout);
    if (layout === 'pinned' && cpus === null) {
      log('ocsp: one CPU, no pinned layout');
      cells.push(...layoutCells.flatMap(unavailable('not measured: the pinned layout needs 2 CPUs')));
      continue;
    }
    const serverCpus = layout === 'pinned' ? cpus.server : undefined;
    const wrkCpus = layout === 'pinned' ? cpus.wrk : undefined;
    const started = [];
    try {
      for (const kind of ['certsmith', 'cfssl']) {
        const server = await startOcspServer({ kind, responsesFile, probeBody: requests[0].der, workDir, repoRoot, nodeArgs: kind === 'certsmith' ? options.nodeArgs : [], cpus: serverCpus });
        started.push({ key: kind, server });
      }
      log(`ocsp (${layout}${serverCpus === undefined ? '' : `: wrk on CPU ${wrkCpus}, servers on CPU ${serverCpus}`}): ${OCSP_SERIALS} responses, 1 unknown serial in ${UNKNOWN_EVERY} requests; certsmith ocspserve pid ${started[0].server.pid}, cfssl ocspserve pid ${started[1].server.pid}`);
      for (const cell of layoutCells) cells.push(...(await measureOcspCell({ cell, started, requests, concurrencies: concurrencies(cell), wrkCpus, workDir, options, log })));
    } finally {
      await Promise.all(started.map((target) => target.server.stop()));
    }
  }
  return cells;
}

/** One OCSP cell on servers already started: its concurrencies, rounds alternating between servers. */
async function measureOcspCell({ cell, started, requests, concurrencies, wrkCpus, workDir, options, log }) {
  const script = join(workDir, `ocsp-${cell.methods}.lua`);
  writeFileSync(script, wrkScript(requests, cell.methods));
  const availability = {};
  for (const { key, server } of started) {
    const problem = (await checkAnswers(server.url, requests, 'POST')) ?? (cell.check === 'GET' ? await checkAnswers(server.url, requests, 'GET') : null);
    availability[key] = problem === null ? { available: true } : { available: false, reason: problem };
    if (problem !== null) log(`${cell.name}: ${key} not measured: ${problem}`);
  }
  const targets = started.filter((t) => availability[t.key].available);
  const cells = [];
  for (const concurrency of concurrencies) {
    log(`${cell.name} c=${concurrency}: ${targets.map((t) => t.key).join(' + ') || 'nothing to measure'}, ${options.rounds} × ${wrkSeconds(options.durationMs)} rounds (wrk)`);
    const perTarget = Object.fromEntries(targets.map((t) => [t.key, []]));
    const round = (target, durationMs) => runWrkRound({ url: target.server.url, script, concurrency, durationMs, pid: target.server.pid, cpus: wrkCpus });
    if (options.warmupMs > 0) for (const target of targets) await round(target, options.warmupMs);
    for (let i = 0; i < options.rounds; i++) {
      for (const target of i % 2 === 0 ? targets : [...targets].reverse()) perTarget[target.key].push(await round(target, options.durationMs));
    }
    const results = {};
    for (const key of ['certsmith', 'cfssl']) {
      if (!availability[key].available) {
        results[key] = availability[key];
        continue;
      }
      const list = perTarget[key];
      const pick = (field) => median(list.map((r) => r[field]));
      results[key] = { available: true, ...summarise(list), userMsPerRequest: pick('userMsPerRequest'), systemMsPerRequest: pick('systemMsPerRequest'), rounds: list };
    }
    cells.push({ name: cell.name, title: cell.title, concurrency, bodies: requests.length, loadGenerator: wrkCpus === undefined ? 'wrk -t1' : `wrk -t1 on CPU ${wrkCpus}`, results });
  }
  return cells;
}

const µs = (ms) => (Number.isFinite(ms) ? (ms * 1000).toFixed(1) : '–');

/**
 * Where each server's CPU goes per answered request (user / kernel µs), and the load generator's
 * share of the machine: the kernel part is loopback TCP that every server pays alike.
 *
 * @param {Array<object>} cells  the OCSP cells of {@link measureOcsp}
 */
export function formatOcspCpuTable(cells) {
  const lines = ['| cell | c | server | CPU µs/req | user µs/req | kernel µs/req | cores busy | wrk cores |', '|---|---:|---|---:|---:|---:|---:|---:|'];
  for (const cell of cells) {
    for (const side of ['certsmith', 'cfssl']) {
      const r = cell.results[side];
      if (!r?.available) {
        lines.push(`| ${cell.title} | ${cell.concurrency} | ${side} | ${r?.reason ?? 'not measured'} | | | | |`);
        continue;
      }
      lines.push(
        `| ${cell.title} | ${cell.concurrency} | ${side} | ${µs(r.cpuMsPerRequest)} | ${µs(r.userMsPerRequest)} | ${µs(r.systemMsPerRequest)} | ${r.serverCores.toFixed(2)} | ${r.clientCores.toFixed(2)} |`
      );
    }
  }
  return lines.join('\n');
}
