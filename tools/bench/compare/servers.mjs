/**
 * Start, watch and stop the two servers under test: `certsmith serve` (this repo's build) and
 * Debian's `cfssl serve` (CFSSL 1.2.0), both on 127.0.0.1 with the same files.
 *
 * Every child is registered so that {@link stopAllServers} (called on normal exit, on errors and
 * on Ctrl-C) leaves nothing running; each is killed by its own pid, never by name.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readExecutableShebang } from '../../../apps/server/scripts/executable-shebang.mjs';

/** @typedef {'certsmith' | 'cfssl'} ServerKind */

/**
 * Files a server is started with; omitted ones are not passed (same flag names on both sides).
 * @typedef {object} ServerFiles
 * @property {string} [ca]
 * @property {string} [caKey]
 * @property {string} [caBundle]
 * @property {string} [intBundle]
 * @property {string} [metadata]
 * @property {string} [dbConfig]  CFSSL's db-config file (certificate store / certdb)
 */

/**
 * @typedef {object} RunningServer
 * @property {ServerKind} kind
 * @property {string} label    e.g. "certsmith" or "cfssl (pool B)"
 * @property {number} pid
 * @property {string} url      http://127.0.0.1:<port>
 * @property {number} readyMs  process start → first answered readiness request
 * @property {string} logFile  the server's stdout+stderr
 * @property {() => Promise<void>} stop
 */

const FLAGS = [
  ['ca', 'ca'],
  ['caKey', 'ca-key'],
  ['caBundle', 'ca-bundle'],
  ['intBundle', 'int-bundle'],
  ['metadata', 'metadata'],
  ['dbConfig', 'db-config'],
];

/**
 * What "ready" means per server. certsmith has `/health`; cfssl 1.2.0 has none (behaviour doc 8),
 * but it registers every handler — bundler and signer already loaded — before it listens
 * (doc 5, startup order), so its first answered request of any kind marks readiness; `scaninfo`
 * is a cheap GET that answers 200.
 */
const READY_PATH = { certsmith: '/api/v1/cfssl/health', cfssl: '/api/v1/cfssl/scaninfo' };

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();

/** Ask the kernel for a free loopback port (bind to 0, read it, release it). */
export function findFreePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** One GET on a fresh connection; resolves with the status code, or 0 when nothing answered. */
function probe(url, timeoutMs) {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(0));
    req.end();
  });
}

/**
 * How the `certsmith` executable starts node — the node flags and the environment its shebang sets,
 * over this process's — so the benchmark starts `dist/cli.js` exactly as `certsmith serve` and
 * `npm start` do.
 *
 * @param {string} repoRoot
 * @returns {{ flags: string[], env: NodeJS.ProcessEnv }}
 */
export function certsmithLaunch(repoRoot) {
  const shebang = readExecutableShebang(join(repoRoot, 'apps/server/dist/cli.js'));
  return { flags: shebang?.flags ?? [], env: { ...process.env, ...shebang?.env } };
}

/** The node flags of the `certsmith` executable ({@link certsmithLaunch}). */
export function certsmithNodeFlags(repoRoot) {
  return certsmithLaunch(repoRoot).flags;
}

/**
 * Start one server and wait until it answers. `readyMs` counts from just before `spawn` (so it
 * includes the runtime's own start-up) to the first answer, polled every 5 ms on fresh connections.
 *
 * @param {object} options
 * @param {ServerKind} options.kind
 * @param {ServerFiles} options.files
 * @param {string} options.workDir    for logs (and certsmith's --data-dir)
 * @param {string} options.repoRoot
 * @param {string} [options.label]
 * @param {number} [options.workers]  certsmith --workers (default: its own)
 * @param {number} [options.processes]  certsmith --processes (default: its own)
 * @param {string[]} [options.extraArgs]  more `certsmith serve` flags (e.g. `--key-pool`)
 * @param {string[]} [options.nodeArgs]  extra `node` flags for certsmith, e.g. `--cpu-prof`
 * @param {number} [options.timeoutMs]
 * @param {boolean} [options.waitForEveryProcess]  certsmith: after the first `/health` 200 (`readyMs`),
 *   also wait until every serving process listens (`certsmith listening on …`, printed once); default true
 * @returns {Promise<RunningServer>}
 */
export async function startServer({ kind, files, workDir, repoRoot, label = kind, workers, processes, nodeArgs = [], extraArgs = [], timeoutMs = 60_000, waitForEveryProcess = true }) {
  const port = await findFreePort();
  const launch = kind === 'certsmith' ? certsmithLaunch(repoRoot) : undefined;
  let command;
  let args;
  if (kind === 'certsmith') {
    command = process.execPath;
    args = [
      ...launch.flags,
      ...nodeArgs,
      join(repoRoot, 'apps/server/dist/cli.js'),
      'serve',
      '--address',
      '127.0.0.1',
      '--port',
      String(port),
      '--data-dir',
      join(workDir, 'certsmith-data'),
    ];
    if (workers !== undefined) args.push('--workers', String(workers));
    if (processes !== undefined) args.push('--processes', String(processes));
    args.push(...extraArgs);
  } else {
    command = 'cfssl';
    args = ['serve', '-address', '127.0.0.1', '-port', String(port)];
  }
  const dash = kind === 'certsmith' ? '--' : '-';
  for (const [key, flag] of FLAGS) if (files[key]) args.push(`${dash}${flag}`, files[key]);

  // Logs go straight to a file: both servers log one line per request at their default level, and
  // a pipe we had to drain would put this process's CPU on the servers' critical path.
  const logFile = join(workDir, `${label.replace(/[^a-z0-9]+/gi, '-')}-${port}.log`);
  const fd = openSync(logFile, 'a');
  const started = performance.now();
  const child = spawn(command, args, { stdio: ['ignore', fd, fd], ...(launch === undefined ? {} : { env: launch.env }) });
  closeSync(fd);
  children.add(child);
  let exited = false;
  child.once('exit', () => {
    exited = true;
    children.delete(child);
  });
  child.once('error', () => {
    exited = true;
    children.delete(child);
  });

  const url = `http://127.0.0.1:${port}`;
  const server = {
    kind,
    label,
    pid: child.pid ?? -1,
    url,
    readyMs: NaN,
    logFile,
    stop: () => stopChild(child),
  };
  const deadline = started + timeoutMs;
  for (;;) {
    const status = await probe(url + READY_PATH[kind], 1_000);
    const readyAt = performance.now();
    if (kind === 'certsmith' ? status === 200 : status !== 0) {
      server.readyMs = readyAt - started;
      // A server with several serving processes answers as soon as the first listens; keep-alive
      // connections opened before the others are up would stay on the first one for the whole cell.
      if (kind === 'certsmith' && waitForEveryProcess) await waitForLine(logFile, LISTENING_LINE, deadline, () => exited);
      return server;
    }
    if (exited || readyAt > deadline) {
      await server.stop();
      throw new Error(
        `${label} did not become ready (${exited ? 'exited' : `no answer in ${timeoutMs} ms`}): ${command} ${args.join(' ')}\n${tail(
          logFile
        )}`
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** `certsmith serve` prints this once every serving process listens. */
const LISTENING_LINE = /^certsmith listening on /m;

/** Wait (polling every 10 ms, bounded by `deadline`) until `file` has a line matching `pattern`. */
async function waitForLine(file, pattern, deadline, gone) {
  while (!pattern.test(readFileSync(file, 'utf8'))) {
    if (gone() || performance.now() > deadline) throw new Error(`${file}: no line matching ${pattern}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Last lines of a log file, for failure messages. */
export function tail(file, lines = 20) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** SIGTERM (every server measured here shuts down gracefully on it), SIGKILL after 5 s. */
export function stopChild(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Register a child started outside {@link startServer} (the `ocspserve` cells start their own) so
 * that {@link stopAllServers} and {@link killAllServersNow} reach it too.
 *
 * @param {import('node:child_process').ChildProcess} child
 */
export function trackChild(child) {
  children.add(child);
  const drop = () => children.delete(child);
  child.once('exit', drop);
  child.once('error', drop);
}

/** Stop every server this process started (graceful, bounded). */
export async function stopAllServers() {
  await Promise.all([...children].map((child) => stopChild(child)));
}

/** Last resort from a synchronous `exit` handler: SIGKILL what is still running. */
export function killAllServersNow() {
  for (const child of children) child.kill('SIGKILL');
}

/**
 * Run a stand-alone benchmark script's `main`: on Ctrl-C or a failure, SIGKILL the servers it
 * started before exiting (130 on SIGINT, 1 with the error printed on failure).
 *
 * @param {() => Promise<void>} main
 */
export function runBenchScript(main) {
  process.once('SIGINT', () => {
    killAllServersNow();
    process.exit(130);
  });
  main().catch((error) => {
    killAllServersNow();
    console.error(error);
    process.exit(1);
  });
}

/**
 * A server process and its descendants: CFSSL's one process, certsmith's one process, or
 * certsmith's primary and its worker processes (`serve --processes N`, `ocspserve --workers N`).
 * Every measure of a server below counts the whole tree, so one process and a cluster compare.
 */
export function processTree(pid) {
  const pids = [pid];
  // Bounded: a server's tree is a handful of processes.
  for (let i = 0; i < pids.length && pids.length < 256; i++) {
    let children = '';
    try {
      for (const task of readdirSync(`/proc/${pids[i]}/task`)) children += ` ${readFileSync(`/proc/${pids[i]}/task/${task}/children`, 'utf8')}`;
    } catch {
      // The process ended meanwhile.
    }
    for (const child of children.trim().split(/\s+/)) if (child !== '') pids.push(Number(child));
  }
  return pids;
}

/**
 * Resident memory of a server's process tree in bytes ({@link processTree}): every process's own
 * pages (anonymous and shared memory) plus file-backed pages once — the processes of one tree map
 * the same node binary and libraries, and summing their VmRSS would count those ≈ 45 MB once per
 * process. For a single process this is exactly its VmRSS. NaN when the server is gone.
 */
export function readRss(pid) {
  let own = 0;
  let file = 0;
  let read = false;
  for (const member of processTree(pid)) {
    try {
      const status = readFileSync(`/proc/${member}/status`, 'utf8');
      const kB = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
      own += kB('RssAnon') + kB('RssShmem');
      file = Math.max(file, kB('RssFile'));
      read = true;
    } catch {
      // Ended meanwhile.
    }
  }
  return read ? own + file : NaN;
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/**
 * CPU time (user + system) one thread has used so far, in ms, from /proc/<pid>/task/<tid>/stat;
 * `tid` defaults to `pid`, the process's main thread (a node process's event loop). Throws when the
 * thread is gone.
 */
export function readThreadCpuMs(pid, tid = pid) {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  // Fields after the parenthesised command name (which may contain spaces): utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

/**
 * CPU time (user + system, all threads of every process of the tree, {@link processTree}) a server
 * has used so far, in ms, from /proc/<pid>/stat; NaN when unreadable. Per-request CPU is the cost
 * measure least disturbed by the load generator sharing the machine.
 */
export function readCpuMs(pid) {
  const { userMs, systemMs } = readCpuSplitMs(pid);
  return userMs + systemMs;
}

/**
 * {@link readCpuMs} split into user and kernel time, in ms; NaNs when unreadable. The kernel share
 * is mostly the loopback TCP work of reading requests and writing answers, which no server avoids.
 */
export function readCpuSplitMs(pid) {
  let userMs = 0;
  let systemMs = 0;
  let read = false;
  for (const member of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${member}/stat`, 'utf8');
      // Fields after the parenthesised command name (which may contain spaces): utime is field 14, stime 15.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      userMs += (Number(fields[11]) * 1000) / CLOCK_TICKS;
      systemMs += (Number(fields[12]) * 1000) / CLOCK_TICKS;
      read = true;
    } catch {
      // Ended meanwhile.
    }
  }
  return read ? { userMs, systemMs } : { userMs: NaN, systemMs: NaN };
}

/**
 * The machine's CPU time so far, from `/proc/stat`: `{ total, steal, idle }` in clock ticks. Steal is time
 * the hypervisor gave this VM's CPUs to someone else; when it is high, every number of the round
 * (req/s, latencies, even CPU ms/req) is distorted, so each round reports its share.
 */
export function readMachineCpu() {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …: idle and iowait are time no one ran.
    return { total: fields.reduce((sum, value) => sum + value, 0), steal: fields[7] ?? 0, idle: (fields[3] ?? 0) + (fields[4] ?? 0) };
  } catch {
    return { total: NaN, steal: NaN, idle: NaN };
  }
}

/**
 * Sample a server's RSS ({@link readRss}, its process tree) every `intervalMs` until stopped;
 * `stop()` returns the peak in bytes.
 * @param {number} pid
 * @param {number} [intervalMs]
 */
export function sampleRss(pid, intervalMs = 50) {
  let peak = readRss(pid);
  const timer = setInterval(() => {
    const rss = readRss(pid);
    if (rss > peak || Number.isNaN(peak)) peak = rss;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      const rss = readRss(pid);
      if (rss > peak || Number.isNaN(peak)) peak = rss;
      return peak;
    },
  };
}

/**
 * Wait until a process has used (almost) no CPU for `quietMs` — e.g. a server filling a key pool in
 * the background has finished. Resolves with the ms waited; bounded by `timeoutMs` (then resolves
 * too, with `timedOut`).
 *
 * @param {number} pid
 * @param {{ quietMs?: number, timeoutMs?: number, busyMsPerSecond?: number }} [options]
 */
export async function waitUntilIdle(pid, { quietMs = 1_000, timeoutMs = 60_000, busyMsPerSecond = 20 } = {}) {
  const started = performance.now();
  const stepMs = 250;
  let quietSince = performance.now();
  let before = readCpuMs(pid);
  while (performance.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, stepMs));
    const now = readCpuMs(pid);
    // More than `busyMsPerSecond` of CPU in the step: still working (timers and heartbeats use far less).
    if (now - before > (busyMsPerSecond * stepMs) / 1000) quietSince = performance.now();
    before = now;
    if (performance.now() - quietSince >= quietMs) return { waitedMs: performance.now() - started, timedOut: false };
  }
  return { waitedMs: performance.now() - started, timedOut: true };
}
