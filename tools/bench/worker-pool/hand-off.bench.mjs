#!/usr/bin/env node
/**
 * What handing tasks to worker threads costs, with the same batching policy on three transports
 * (ADR 0001, docs/performance.md "Worker pool pass"). Run by hand after `npm run build`:
 *
 *   node tools/bench/worker-pool/hand-off.bench.mjs [--task echo|sign] [--loops 16] [--workers 1]
 *       [--main-us 40] [--rounds 4] [--duration 4] [--variants piscina,threads,pool]
 *
 * `--loops` async loops on the main thread each run a task, wait for its result, and repeat; before
 * and after each task a loop spins `--main-us` µs of CPU, standing in for the event loop's share of
 * an HTTP request (parse, validate, answer). Tasks waiting for a busy worker go to the next free
 * one together (at most 8 ÷ workers per message, at least 2), and the tasks of one event-loop turn
 * travel together — certsmith's batching policy — over:
 *
 * - `piscina`: Piscina 5 through its public API, a batch as one `piscina.run()` (at most one per
 *   worker in flight, so a batch never waits in Piscina's queue), `atomics: 'disabled'` (idle
 *   workers must run timers: the key pool refills in idle time);
 * - `threads`: plain `node:worker_threads`, a batch as one `postMessage` to a worker;
 * - `pool`: `createWorkerPool` of `@certsmith/worker-pool` (the server's pool: the same hand-off plus
 *   heartbeats, owed-task bookkeeping, timeouts and admission).
 *
 * Rounds alternate between the variants. Reported per variant (medians over rounds): tasks/s, CPU
 * µs per task of the whole process and of the main thread alone (`/proc/self/task/<tid>/stat`), and
 * the main thread's old-generation growth per 1,000 tasks between full GCs (what promotion under
 * load costs: the fifth pass's RSS story).
 */
import { join } from 'node:path';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { getHeapSpaceStatistics } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { readThreadCpuMs } from '../compare/servers.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const WORKER_FILE = join(here, 'hand-off.worker.mjs');
const { values } = parseArgs({
  options: {
    task: { type: 'string', default: 'sign' },
    loops: { type: 'string', default: '16' },
    workers: { type: 'string', default: '1' },
    'main-us': { type: 'string', default: '40' },
    rounds: { type: 'string', default: '4' },
    duration: { type: 'string', default: '4' },
    variants: { type: 'string', default: 'piscina,threads,pool' },
  },
});
const task = values.task;
const loops = Number(values.loops);
const workers = Number(values.workers);
const mainUs = Number(values['main-us']);
const rounds = Number(values.rounds);
const durationMs = Number(values.duration) * 1000;
const variants = values.variants.split(',');
const perMessage = Math.max(2, Math.ceil(8 / workers));
const YOUNG_MB = 12;

/** Busy-wait `us` microseconds (the event loop's own share of a request). */
function spin(us) {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
}

/**
 * certsmith's batching policy over a transport: `send(worker, batch)` resolves with the batch's
 * outcomes; one batch per worker in flight; what waits goes to the next free worker together.
 */
function batchingRunner(size, send) {
  const waiting = [];
  const busy = new Array(size).fill(false);
  let scheduled = false;
  function dispatch() {
    for (let worker = 0; worker < size && waiting.length > 0; worker++) {
      if (busy[worker]) continue;
      const free = busy.filter((b) => !b).length;
      const items = waiting.splice(0, Math.min(perMessage, Math.ceil(waiting.length / free)));
      busy[worker] = true;
      send(worker, items.map((item) => item.request)).then((outcomes) => {
        busy[worker] = false;
        outcomes.forEach((outcome, i) => items[i].resolve(outcome.result));
        dispatch();
      });
    }
  }
  return {
    run(request) {
      return new Promise((resolve) => {
        waiting.push({ request, resolve });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => {
            scheduled = false;
            dispatch();
          });
        }
      });
    },
  };
}

async function startPiscina() {
  const piscina = new Piscina({
    filename: WORKER_FILE,
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: Infinity,
    atomics: 'disabled',
    recordTiming: false,
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB },
  });
  // Piscina picks the worker itself; our dispatcher only keeps one batch per worker in flight.
  const runner = batchingRunner(workers, (_worker, batch) => piscina.run(batch));
  await Promise.all(Array.from({ length: workers * 2 }, () => runner.run({ task: 'echo', input: 0 })));
  return { run: (request) => runner.run(request), close: () => piscina.destroy() };
}

async function startThreads() {
  const threads = Array.from({ length: workers }, () => new Worker(WORKER_FILE, { workerData: { raw: true }, resourceLimits: { maxYoungGenerationSizeMb: YOUNG_MB } }));
  const pending = threads.map(() => new Map());
  let lastId = 0;
  threads.forEach((thread, index) => thread.on('message', ({ id, outcomes }) => {
    const resolve = pending[index].get(id);
    pending[index].delete(id);
    resolve(outcomes);
  }));
  const runner = batchingRunner(workers, (worker, batch) => new Promise((resolve) => {
    lastId += 1;
    pending[worker].set(lastId, resolve);
    threads[worker].postMessage({ id: lastId, batch });
  }));
  await Promise.all(Array.from({ length: workers * 2 }, () => runner.run({ task: 'echo', input: 0 })));
  return { run: (request) => runner.run(request), close: () => Promise.all(threads.map((thread) => thread.terminate())) };
}

async function startPool() {
  const { createWorkerPool } = await import(pathToFileURL(join(here, '../../../packages/worker-pool/dist/index.js')).href);
  const module = pathToFileURL(join(here, 'hand-off.tasks.mjs')).href;
  const definitions = await import(module);
  const pool = createWorkerPool({ tasks: [definitions.echoTask, definitions.signTask], size: workers, maxQueue: loops * 4 });
  await pool.ready();
  const byName = { echo: definitions.echoTask, sign: definitions.signTask };
  return { run: (request) => pool.run(byName[request.task], request.input), close: () => pool.close() };
}

const STARTERS = { piscina: startPiscina, threads: startThreads, pool: startPool };

/** Old-generation growth of this thread between full GCs, and GC counts. */
function watchGc() {
  let grown = 0;
  let scavenges = 0;
  let fullGcs = 0;
  let last = oldSpaceUsed();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const now = oldSpaceUsed();
      if (entry.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) fullGcs += 1;
      else {
        scavenges += 1;
        if (now > last) grown += now - last;
      }
      last = now;
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => {
    observer.disconnect();
    return { grown, scavenges, fullGcs };
  };
}

function oldSpaceUsed() {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
}

let inputId = 0;
function makeInput() {
  inputId += 1;
  return task === 'sign'
    ? { id: inputId, tbs: 'subject=CN=bench.example;hosts=bench.example;serial=' + inputId + ';'.repeat(64) }
    : { id: inputId, request: { CN: 'bench.example', hosts: ['bench.example'] } };
}

async function round(pool) {
  let done = 0;
  const deadline = performance.now() + durationMs;
  const gc = watchGc();
  const cpuBefore = process.cpuUsage();
  const mainBefore = readThreadCpuMs(process.pid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (performance.now() < deadline) {
        spin(mainUs / 2);
        await pool.run({ task, input: makeInput() });
        spin(mainUs / 2);
        done += 1;
      }
    }),
  );
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const mainMs = readThreadCpuMs(process.pid) - mainBefore;
  const { grown, scavenges, fullGcs } = gc();
  return {
    tasksPerSecond: done / (elapsed / 1000),
    cpuUsPerTask: (cpu.user + cpu.system) / done,
    mainUsPerTask: (mainMs * 1000) / done,
    oldGrowthKbPer1k: grown / 1024 / (done / 1000),
    scavenges,
    fullGcs,
  };
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const results = Object.fromEntries(variants.map((variant) => [variant, []]));
const pools = {};
for (const variant of variants) pools[variant] = await STARTERS[variant]();
// Warm-up: JIT, each worker's first signatures.
for (const variant of variants) await round(pools[variant]);
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? variants : [...variants].reverse();
  for (const variant of order) results[variant].push(await round(pools[variant]));
}
for (const variant of variants) await pools[variant].close();

console.log(`task ${task}, ${loops} loops, ${workers} worker(s), ${mainUs} µs main-thread work per task, ${perMessage} tasks per message at most, ${rounds} × ${durationMs / 1000} s rounds`);
console.log('| variant | tasks/s | CPU µs/task (all threads) | main thread µs/task | old-gen growth KB per 1k tasks | scavenges | full GCs |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const variant of variants) {
  const list = results[variant];
  const m = (key) => median(list.map((item) => item[key]));
  console.log(`| ${variant} | ${m('tasksPerSecond').toFixed(0)} | ${m('cpuUsPerTask').toFixed(1)} | ${m('mainUsPerTask').toFixed(1)} | ${m('oldGrowthKbPer1k').toFixed(1)} | ${list.reduce((s, i) => s + i.scavenges, 0)} | ${list.reduce((s, i) => s + i.fullGcs, 0)} |`);
}
