#!/usr/bin/env node
/**
 * RSA key generation rate of @certsmith/issuer (run `npm run build` first):
 *
 *   node tools/bench/issuer/rsa-keygen.bench.mjs [seconds per run = 10] [bits = 2048] [passes = 3]
 *
 * Compares `generateKey(spec, { rsa: 'openssl' })` (node:crypto `generateKeyPair`, OpenSSL 3's
 * FIPS 186-4 B.3.6 key generation) with the default `generateKey(spec)` (two concurrent
 * `generatePrime` searches + FIPS 186-4 B.3.1 checks + JWK import + sign/verify self-test), each at
 * concurrency 1 and 2 (one or two generation loops in this process). Passes interleave the methods so
 * that drifting background load hits both alike. Reported per cell: the median over passes of keys/s,
 * p50/p95 latency of one key (ms), and process CPU ms per key (all threads, libuv pool included).
 * The load average is printed before and after: on a shared machine, compare only runs taken under
 * similar load.
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const issuer = await import(join(here, '../../..', 'packages/issuer/dist/index.js'));

const seconds = Number(process.argv[2] ?? 10);
const bits = Number(process.argv[3] ?? 2048);
const passes = Number(process.argv[4] ?? 3);
const spec = issuer.resolveKeySpec({ algo: 'rsa', size: bits });

const methods = {
  'generateKeyPair (openssl)': () => issuer.generateKey(spec, { rsa: 'openssl' }),
  'from primes (default)': () => issuer.generateKey(spec),
};

async function run(generate, concurrency) {
  const latencies = [];
  const cpuStart = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await generate();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuStart);
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  return { rate: latencies.length / elapsed, p50: at(0.5), p95: at(0.95), cpuMs: (cpu.user + cpu.system) / 1000 / latencies.length, keys: latencies.length };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const load = () => loadavg().map((value) => value.toFixed(2)).join(' ');

console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}`);
console.log(`RSA-${bits}, ${seconds} s per run, ${passes} passes, load average before: ${load()}`);

// Warm-up (module loading, first JWK import, thread pool start).
for (const generate of Object.values(methods)) await generate();

const results = new Map();
for (let pass = 0; pass < passes; pass++) {
  for (const concurrency of [1, 2]) {
    for (const [name, generate] of Object.entries(methods)) {
      const key = `${name} c=${concurrency}`;
      const result = await run(generate, concurrency);
      results.set(key, [...(results.get(key) ?? []), result]);
    }
  }
}

console.log(`${'method'.padEnd(32)} ${'keys/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p95 ms'.padStart(8)} ${'CPU ms/key'.padStart(11)} ${'keys'.padStart(6)}`);
for (const [key, runs] of results) {
  const pick = (field) => median(runs.map((result) => result[field]));
  const total = runs.reduce((sum, result) => sum + result.keys, 0);
  console.log(
    `${key.padEnd(32)} ${pick('rate').toFixed(2).padStart(8)} ${pick('p50').toFixed(0).padStart(8)} ${pick('p95').toFixed(0).padStart(8)} ${pick('cpuMs').toFixed(0).padStart(11)} ${String(total).padStart(6)}`,
  );
}
for (const concurrency of [1, 2]) {
  const rate = (name) => median(results.get(`${name} c=${concurrency}`).map((result) => result.rate));
  console.log(`speed-up c=${concurrency}: ${(rate('from primes (default)') / rate('generateKeyPair (openssl)')).toFixed(2)}×`);
}
console.log(`load average after: ${load()}`);
