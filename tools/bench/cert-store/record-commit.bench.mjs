#!/usr/bin/env node
/**
 * Where SQLite should run (docs/adr/0002-certificate-store.md): recording issued certificates in
 * batches of one event-loop turn, with SQLite in the calling thread (`sqlite: { thread: false }`)
 * versus in the store's own thread (the default), and PostgreSQL for reference. Run
 * `npx tsc -b tsconfig.json` first; through `/work/bin/quiet` on the shared machine:
 *
 *   node tools/bench/cert-store/record-commit.bench.mjs [rounds=300] [batch=16] [time|random]
 *
 * Each round records `batch` certificates in one turn (as 16 concurrent newcerts finishing
 * together would) and waits for all of them. Reported per mode: round latency p50/p99, records/s,
 * main-thread busy time per record (event-loop utilisation), and event-loop delay p99/max — the
 * time other requests would wait behind the store. Files live on the machine's disk with
 * `synchronous=FULL`, so every commit waits for fsync.
 */
import { execFileSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { startThrowawayPostgres } from './throwaway-postgres.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const load = (path) => import(join(here, '../../..', path));
const { openStore } = await load('packages/cert-store/dist/index.js');
const { decodePemBlock, parseCertificate, certificateToPem } = await load('packages/x509-core/dist/index.js');

const rounds = Number(process.argv[2] ?? 300);
const batch = Number(process.argv[3] ?? 16);
const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-store-'));

// One real certificate (cfssl-made CA), then copies with other serials: the store parses but does not verify.
const ca = JSON.parse(execFileSync('cfssl', ['gencert', '-initca', '-'], { input: JSON.stringify({ CN: 'Bench CA', key: { algo: 'ecdsa', size: 256 } }), encoding: 'utf8' }));
const base = parseCertificate(decodePemBlock(ca.cert).block.bytes);
const serial = Buffer.from(base.serialNumberHex, 'hex');
const offset = Buffer.from(base.der).indexOf(serial);
// Serials as issuing makes them (packages/issuer certificate-template.ts): the time in milliseconds
// (48 bits), then random bytes. With fully random serials (CFSSL's, and certsmith's before
// 2026-11-26) each row lands on its own leaf of every index keyed by serial: `random` as the third
// argument measures that.
const randomSerials = process.argv[4] === 'random';
function certificate() {
  const der = Buffer.from(base.der);
  randomFillSync(der, offset, serial.length);
  if (randomSerials) der[offset] = 0x40;
  else der.writeUIntBE(Date.now(), offset, 6);
  return certificateToPem(der);
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

async function measure(name, store) {
  for (let i = 0; i < 20; i += 1) await Promise.all(Array.from({ length: batch }, () => store.recordCertificate({ certificate: certificate() })));
  const certificates = Array.from({ length: rounds * batch }, certificate);
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const latencies = [];
  delay.enable();
  const elu = performance.eventLoopUtilization();
  const start = performance.now();
  for (let r = 0; r < rounds; r += 1) {
    const t0 = performance.now();
    await Promise.all(certificates.slice(r * batch, (r + 1) * batch).map((certificate) => store.recordCertificate({ certificate, label: 'bench' })));
    latencies.push(performance.now() - t0);
  }
  const seconds = (performance.now() - start) / 1000;
  const used = performance.eventLoopUtilization(elu);
  delay.disable();
  latencies.sort((a, b) => a - b);
  const busyUsPerRecord = (used.active * 1000) / (rounds * batch);
  console.log(
    `${name.padEnd(16)} round p50 ${percentile(latencies, 50).toFixed(2)} ms  p99 ${percentile(latencies, 99).toFixed(2)} ms  ` +
      `${Math.round((rounds * batch) / seconds)} records/s  main thread ${busyUsPerRecord.toFixed(0)} µs/record  ` +
      `event-loop delay p99 ${(delay.percentile(99) / 1e6).toFixed(2)} ms  max ${(delay.max / 1e6).toFixed(2)} ms`,
  );
  await store.close();
}

console.log(`cert-store record commit: ${rounds} rounds of ${batch} records, ${cpus()[0]?.model ?? 'unknown CPU'}, node ${process.version}`);
try {
  await measure('sqlite inline', await openStore({ driver: 'sqlite3', dataSource: join(dir, 'inline.db') }, { sqlite: { thread: false } }));
  await measure('sqlite thread', await openStore({ driver: 'sqlite3', dataSource: join(dir, 'thread.db') }));
  const pg = await startThrowawayPostgres();
  try {
    await measure('postgres', await openStore({ driver: 'postgres', dataSource: pg.createDatabase('bench') }));
  } finally {
    pg.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
