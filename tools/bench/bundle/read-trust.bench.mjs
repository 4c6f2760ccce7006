#!/usr/bin/env node
/**
 * CPU of reading the trust files at start-up, cold: `readTrustSnapshot` of @certsmith/bundler (what
 * the `certsmith serve` executable's prestarted worker runs as `bundle.read-trust`) on cfssl_trust's
 * ca-bundle.crt (339 roots), int-bundle.crt (1,263 intermediates) and ca-bundle.crt.metadata (10
 * keystores), in a fresh process per sample — no code warmed up, no JIT feedback, as in a starting
 * server:
 *
 *   npm run build && node tools/bench/bundle/read-trust.bench.mjs [--checkouts NAME@DIR,…] [--samples 21] [--trust-dir /work/shared/trust]
 *
 * Each sample runs node with the flags of `certsmith serve` while it starts (the executable's
 * `--single-threaded-gc`, its workers' 4 MiB semi-spaces, and on V8 11.3 the start-up
 * `--interrupt-budget` of apps/server/src/start-up-tiering.ts; `--plain`: node's defaults), imports
 * the checkout's built `packages/bundler/dist/index.js` (not measured), then
 * measures one `readTrustSnapshot`: process CPU ms (user + system, so GC, background compilation
 * and libuv's file reads on their threads count too), the reading thread's own CPU ms and wall ms. With several checkouts (e.g. `base@/work/wt-lead,new@.`)
 * the samples alternate between them, so both see the same machine; every sample's snapshot
 * is checked against the first checkout's (its bytes, index layout, fingerprints and the
 * platforms' keystores), so a faster variant that reads something else fails the run.
 * Reported per checkout: median, interquartile range and min–max of each.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';

const here = fileURLToPath(new URL('../../..', import.meta.url));
const BUNDLER = 'packages/bundler/dist/index.js';
const options = readBenchOptions(import.meta.url, {
  checkouts: { type: 'string', default: `this@${here}`, check: (text) => checkoutsProblem(text) },
  samples: { type: 'integer', default: 21, min: 1 },
  'trust-dir': { type: 'string', default: '/work/shared/trust' },
  plain: { type: 'boolean' },
  child: { type: 'string', value: 'DIR' },
});

/**
 * The V8 flags of the thread that reads the trust files in `certsmith serve` (apps/server/bin,
 * worker-defaults.ts' 12 MiB young generation = 4 MiB semi-spaces, start-up-tiering.ts: V8 11.3's
 * budget 67,584 × 4 until the server listens).
 */
const SERVE_FLAGS = ['--single-threaded-gc', '--max-semi-space-size=4', ...(process.versions.v8.startsWith('11.3.') ? ['--interrupt-budget=270336'] : [])];

/** `NAME@DIR,…` → `[{ name, dir }]`. */
function parseCheckouts(text) {
  return text.split(',').map((item) => {
    const at = item.indexOf('@');
    return at < 0 ? { name: item, dir: resolve(item) } : { name: item.slice(0, at), dir: resolve(item.slice(at + 1)) };
  });
}

function checkoutsProblem(text) {
  const missing = parseCheckouts(text).find(({ dir }) => !existsSync(join(dir, BUNDLER)));
  return missing === undefined ? undefined : `no built ${BUNDLER} in ${missing.dir} (run npm run build there)`;
}

/**
 * CPU ms of this process's main thread (the reading thread; the process's figure adds GC helpers,
 * background compilation and libuv's file reads), from the scheduler's nanosecond counter — which
 * the kernel brings up to date for a running thread at each tick (±4 ms at 250 Hz per reading):
 * compare medians of many samples, not single ones.
 */
function threadCpuMs() {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** A digest of everything a snapshot holds, to compare variants by. */
function snapshotDigest({ roots, intermediates, platforms }) {
  const hash = createHash('sha256');
  for (const pool of [roots, intermediates]) {
    for (const part of [pool.der, new Uint8Array(pool.layout.buffer, pool.layout.byteOffset, pool.layout.byteLength), pool.fingerprints]) {
      hash.update(String(part.byteLength)).update(part);
    }
  }
  for (const platform of platforms) {
    const { keystore, ...fields } = platform;
    hash.update(JSON.stringify(fields)).update([...keystore].sort().join(','));
  }
  return hash.digest('hex');
}

if (options.child !== undefined) {
  const { readTrustSnapshot } = await import(pathToFileURL(join(options.child, BUNDLER)).href);
  const trust = options['trust-dir'];
  const files = { caBundleFile: join(trust, 'ca-bundle.crt'), intBundleFile: join(trust, 'int-bundle.crt'), metadataFile: join(trust, 'ca-bundle.crt.metadata') };
  const cpuBefore = process.cpuUsage();
  const threadBefore = threadCpuMs();
  const wallBefore = performance.now();
  const snapshot = await readTrustSnapshot(files);
  const wall = performance.now() - wallBefore;
  const thread = threadCpuMs() - threadBefore;
  const cpu = process.cpuUsage(cpuBefore);
  console.log(JSON.stringify({ cpu: (cpu.user + cpu.system) / 1000, thread, wall, digest: snapshotDigest(snapshot) }));
  process.exit(0);
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
const summary = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const f = (v) => v.toFixed(1);
  return `${f(quantile(sorted, 0.5)).padStart(6)}  (IQR ${f(quantile(sorted, 0.25))}–${f(quantile(sorted, 0.75))}, ${f(sorted[0])}–${f(sorted.at(-1))})`;
};

const checkouts = parseCheckouts(options.checkouts).map((checkout) => ({ ...checkout, cpu: [], thread: [], wall: [] }));
let reference;
for (let sample = 0; sample < options.samples; sample++) {
  // Alternate the order too (A B, B A, …): the second of a pair starts with the first's files in the page cache.
  const order = sample % 2 === 0 ? checkouts : [...checkouts].reverse();
  for (const checkout of order) {
    const child = spawnSync(process.execPath, [...(options.plain ? [] : SERVE_FLAGS), fileURLToPath(import.meta.url), '--child', checkout.dir, '--trust-dir', options['trust-dir']], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`sample of ${checkout.name} (${checkout.dir}) failed: ${child.stderr}`);
    const { cpu, thread, wall, digest } = JSON.parse(child.stdout);
    reference ??= { name: checkout.name, digest };
    if (digest !== reference.digest) throw new Error(`${checkout.name}'s snapshot differs from ${reference.name}'s`);
    checkout.cpu.push(cpu);
    checkout.thread.push(thread);
    checkout.wall.push(wall);
  }
}
console.log(`readTrustSnapshot, cold (fresh process per sample), ${options.samples} samples per checkout, ${options['trust-dir']}, node ${options.plain ? '(no flags)' : SERVE_FLAGS.join(' ')}`);
console.log('  ms: median (interquartile range, min–max)');
for (const [label, key] of [['process CPU', 'cpu'], ['thread CPU', 'thread'], ['wall', 'wall']]) {
  for (const checkout of checkouts) console.log(`  ${label.padEnd(12)} ${checkout.name.padEnd(12)} ${summary(checkout[key])}`);
}
