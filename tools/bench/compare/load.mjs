/**
 * Closed-loop HTTP load generator on undici's Pool: `concurrency` loops, each sending the next
 * request as soon as its previous answer has been read in full, for a bounded time.
 *
 * Closed loop (not a fixed arrival rate) because the question is "how many requests per second
 * does each server sustain at this concurrency, and how long does each take" — the req/s that
 * CFSSL's users observe with N parallel clients. Only 200 answers count towards req/s and the
 * latency percentiles; everything else is an error, so a server that fails fast cannot look fast.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { availableParallelism } from 'node:os';
import { readCpuMs, readMachineCpu, readRss, sampleRss } from './servers.mjs';

/** CPUs of the machine (the idle share of /proc/stat is over all of them). */
const machineCores = () => availableParallelism();

/**
 * A keep-alive connection pool to one server. One per server for the whole run: at concurrency c
 * it uses c connections, opened once.
 *
 * @param {string} url
 * @param {object} [options]
 * @param {number} [options.connections]
 * @param {number} [options.requestTimeoutMs]  per request (headers and body); bounds a round's overrun
 */
export function createClient(url, { connections = 64, requestTimeoutMs = 60_000 } = {}) {
  return new Pool(url, {
    connections,
    pipelining: 1,
    headersTimeout: requestTimeoutMs,
    bodyTimeout: requestTimeoutMs,
    keepAliveTimeout: 60_000,
  });
}

/**
 * POST a JSON body; resolves with the status and the body text (0 and the error text when the
 * connection failed — e.g. CFSSL's handler panicking closes the connection, behaviour doc 2.5).
 *
 * @param {import('undici').Pool} client
 * @param {string} path
 * @param {string} body
 * @returns {Promise<{ status: number, text: string }>}
 */
export async function post(client, path, body) {
  try {
    const response = await client.request({ method: 'POST', path, body, headers: { 'content-type': 'application/json' } });
    return { status: response.statusCode, text: await response.body.text() };
  } catch (error) {
    return { status: 0, text: String(error?.code ?? error) };
  }
}

/**
 * A server just started (`startServer` of servers.mjs) after its first answer: its RSS, then one
 * POST of `body` to `path` on a fresh connection and the ms from spawn to that answer; the server is
 * stopped. How the start-up cells read a start (run.mjs, startup-variants.mjs).
 * @returns {Promise<{ readyMs: number, firstBundleMs: number, firstBundleStatus: number, rssBytes: number }>}
 */
export async function firstAnswerAfterReady(server, path, body) {
  const rssBytes = readRss(server.pid);
  const client = createClient(server.url, { connections: 1 });
  const sent = performance.now();
  const { status } = await post(client, path, body);
  const firstBundleMs = status === 200 ? server.readyMs + (performance.now() - sent) : NaN;
  await client.close();
  await server.stop();
  return { readyMs: server.readyMs, firstBundleMs, firstBundleStatus: status, rssBytes };
}

/** Nearest-rank percentile of an ascending-sorted array, in the array's unit. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** Median of numbers (NaNs ignored); NaN for none. */
export function median(values) {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * @typedef {object} RoundResult
 * @property {number} ok            200 answers
 * @property {number} errors        anything else (non-200 status or no answer)
 * @property {Record<string, number>} statuses  count per status ("0" = no HTTP answer)
 * @property {string} [firstError]  status and start of the first error body, for the report
 * @property {number} elapsedMs     first request sent → last answer read
 * @property {number} rps           ok / elapsed
 * @property {number} p50Ms
 * @property {number} p95Ms
 * @property {number} p99Ms
 * @property {number} peakRssBytes  peak VmRSS of the server during the round
 * @property {number} cpuMsPerRequest  server CPU (all threads) per answered request
 * @property {number} serverCores  server CPU (all threads) per wall-clock time, in cores: how much of
 *   the machine the server kept busy (issue 18: at least CFSSL's in the same cell)
 * @property {number} machineIdleCores  the machine's idle time per wall-clock time, in cores
 * @property {number} clientCores  CPU this process (the load generator) used, in cores: shows
 *   whether the generator, which shares the machine, could have been the bottleneck
 */

/**
 * Run one bounded round against one server.
 *
 * @param {object} options
 * @param {import('undici').Pool} options.client
 * @param {string} options.path
 * @param {string[]} options.bodies   used round-robin across all loops
 * @param {number} options.concurrency
 * @param {number} options.durationMs  no request is *started* after this; in-flight ones finish
 * @param {number} options.pid        server process, for RSS and CPU sampling
 * @param {number} [options.intervalMs]  paced loops: each starts its next request this long after
 *   the previous one started (or at once when that one took longer); default 0, a closed loop
 * @returns {Promise<RoundResult>}
 */
export async function runRound({ client, path, bodies, concurrency, durationMs, pid, intervalMs = 0 }) {
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let firstError;
  let next = 0;
  const rss = sampleRss(pid);
  const cpuBefore = readCpuMs(pid);
  const machineBefore = readMachineCpu();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;

  async function loop() {
    while (performance.now() < deadline) {
      const body = bodies[next++ % bodies.length];
      const sent = performance.now();
      const { status, text } = await post(client, path, body);
      const took = performance.now() - sent;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (status === 200) {
        latencies.push(took);
      } else {
        errors++;
        firstError ??= `${status} ${text.slice(0, 160)}`;
      }
      if (intervalMs > 0) {
        // Paced: the next request leaves `intervalMs` after this one did, or the loop ends when that
        // is past the deadline (sending at once instead would end every round with a burst).
        const wake = sent + intervalMs;
        if (wake >= deadline) break;
        const pause = wake - performance.now();
        if (pause > 0) await new Promise((resolve) => setTimeout(resolve, Math.ceil(pause)));
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, loop));

  const elapsedMs = performance.now() - started;
  const cpuMs = readCpuMs(pid) - cpuBefore;
  const machineAfter = readMachineCpu();
  const clientCpu = process.cpuUsage(clientBefore);
  const peakRssBytes = rss.stop();
  latencies.sort((a, b) => a - b);
  return {
    ok: latencies.length,
    errors,
    statuses,
    firstError,
    elapsedMs,
    rps: latencies.length / (elapsedMs / 1000),
    p50Ms: percentile(latencies, 50),
    p95Ms: percentile(latencies, 95),
    p99Ms: percentile(latencies, 99),
    peakRssBytes,
    cpuMsPerRequest: latencies.length + errors > 0 ? cpuMs / (latencies.length + errors) : NaN,
    clientCores: (clientCpu.user + clientCpu.system) / 1000 / elapsedMs,
    serverCores: cpuMs / elapsedMs,
    machineIdleCores: (machineCores() * (machineAfter.idle - machineBefore.idle)) / (machineAfter.total - machineBefore.total),
    stealPercent: (100 * (machineAfter.steal - machineBefore.steal)) / (machineAfter.total - machineBefore.total),
  };
}

/**
 * The rounds of a cell on several targets: `measure(target, warmupMs)` untimed on each target, then
 * `rounds` timed rounds of `durationMs`, alternating which target goes first from round to round;
 * `beforeRound(target)` runs before each timed round. Each target's rounds are summarised
 * ({@link summarise}), with its warm-up's own result beside them (`warmup`, `null` without one: the
 * store cells count the certificates it returned).
 *
 * @template {{ key: string }} T
 * @param {T[]} targets
 * @param {{ durationMs: number, warmupMs: number, rounds: number, beforeRound?: (target: T) => Promise<void> }} options
 * @param {(target: T, durationMs: number) => Promise<RoundResult>} measure
 */
export async function alternateRounds(targets, { durationMs, warmupMs, rounds, beforeRound }, measure) {
  const perTarget = Object.fromEntries(targets.map((t) => [t.key, []]));
  const warmups = {};
  for (const target of targets) warmups[target.key] = warmupMs > 0 ? await measure(target, warmupMs) : null;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      await beforeRound?.(target);
      perTarget[target.key].push(await measure(target, durationMs));
    }
  }
  return Object.fromEntries(
    Object.entries(perTarget).map(([key, list]) => [key, { available: true, ...summarise(list), warmup: warmups[key], rounds: list }])
  );
}

/**
 * Summarise rounds: medians of req/s and of each round's percentiles (robust to one disturbed
 * round), errors summed, RSS as the peak over all rounds.
 *
 * @param {RoundResult[]} rounds
 */
export function summarise(rounds) {
  const pick = (key) => median(rounds.map((round) => round[key]));
  const statuses = {};
  for (const round of rounds) for (const [code, n] of Object.entries(round.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return {
    rps: pick('rps'),
    p50Ms: pick('p50Ms'),
    p95Ms: pick('p95Ms'),
    p99Ms: pick('p99Ms'),
    cpuMsPerRequest: pick('cpuMsPerRequest'),
    clientCores: pick('clientCores'),
    serverCores: pick('serverCores'),
    machineIdleCores: pick('machineIdleCores'),
    stealPercent: maxOrNaN(rounds.map((round) => round.stealPercent)),
    peakRssBytes: maxOrNaN(rounds.map((round) => round.peakRssBytes)),
    ok: rounds.reduce((sum, round) => sum + round.ok, 0),
    errors: rounds.reduce((sum, round) => sum + round.errors, 0),
    statuses,
    firstError: rounds.find((round) => round.firstError)?.firstError,
  };
}

/** Largest of the numbers (NaNs ignored); NaN for none. */
export function maxOrNaN(values) {
  const numbers = values.filter((v) => !Number.isNaN(v));
  return numbers.length > 0 ? Math.max(...numbers) : NaN;
}

/** Run `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit(items, limit, fn) {
  const results = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index], index);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * GET `path` every `intervalMs` on its own connection until `signal` says stop (bounded by
 * `maxProbes`), recording each answer's latency: how responsive a server's event loop stays while
 * another load saturates it. Only 200 answers count as latencies; anything else is an error.
 *
 * @param {object} options
 * @param {string} options.url       server base URL
 * @param {string} options.path
 * @param {number} options.intervalMs  pause between the end of one probe and the next
 * @param {{ stop: boolean }} options.signal
 * @param {number} [options.maxProbes]
 */
export async function probeLatency({ url, path, intervalMs, signal, maxProbes = 10_000 }) {
  const client = createClient(url, { connections: 1, requestTimeoutMs: 10_000 });
  const latencies = [];
  let errors = 0;
  try {
    for (let i = 0; i < maxProbes && !signal.stop; i++) {
      const sent = performance.now();
      try {
        const response = await client.request({ method: 'GET', path });
        await response.body.text();
        if (response.statusCode === 200) latencies.push(performance.now() - sent);
        else errors++;
      } catch {
        errors++;
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  } finally {
    await client.close();
  }
  latencies.sort((a, b) => a - b);
  return {
    probes: latencies.length + errors,
    errors,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: latencies.length > 0 ? latencies[latencies.length - 1] : NaN,
  };
}
