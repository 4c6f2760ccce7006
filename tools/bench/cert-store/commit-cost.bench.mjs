#!/usr/bin/env node
/**
 * What a SQLite commit of issued rows costs, split into a part paid once per commit and a part paid
 * per row: the calling-thread writer (`packages/cert-store/src/sqlite/calling-thread-writer.ts`, as
 * each process of `serve` commits its issued rows, `synchronous=FULL`) commits batches of `k` rows,
 * in one writer process or in two writing the same WAL file at once (as `serve --processes 2`: each
 * commit of one makes the other re-read the pages it touches). Run `npx tsc -b tsconfig.json` first;
 * through `/work/bin/quiet` on the shared machine:
 *
 *   node tools/bench/cert-store/commit-cost.bench.mjs [rowsPerCommit=1,2,4,8,16,32] [writers=1,2] [rows=4800] [rowsPerSecond=1800]
 *
 * Each writer commits `rows` rows (certificate + first OCSP response, serials starting with the
 * time as issuing makes them) in commits of `k`, one every `k / rowsPerSecond` (≈ what each process
 * records under newcert load at 16 clients), spinning in between (a loaded server's event loop does
 * not sleep, and a process woken from sleep pays for cold caches), so that two writers meet each
 * other's commits about as often as the server's do. A commit that meets the other writer's lock is
 * tried again as the writer does (next turn, then every millisecond). A file of its own per cell; the parent process
 * owns the store (its thread checkpoints when a writer asks, as the first process of `serve` does).
 * Reported per writer, medians over the writers: CPU µs per commit and per row (the process's CPU,
 * all threads, over each attempt — the spin between commits not counted), wall ms per commit
 * p50/p99 (from the first attempt), read and write system calls per commit (`/proc/self/io`:
 * `pread64` page re-reads, `pwrite64` WAL frames), attempts per commit that met the lock, commits
 * the writer gave up on after its retries (the server would hand them on; here they are retried), then a
 * least-squares fit `CPU per commit = fixed + per-row × k` for each writer count.
 */
import { execFileSync, fork } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = fileURLToPath(new URL('.', import.meta.url));
const load = (path) => import(join(here, '../../..', path));
const store = await load('packages/cert-store/dist/index.js');

const cpuUs = (usage) => usage.user + usage.system;

/** `syscr`/`syscw` of this process (read- and write-family system calls, pread64/pwrite64 included). */
function ioCalls() {
  const text = readFileSync('/proc/self/io', 'utf8');
  const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return { reads: field('syscr'), writes: field('syscw') };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

const median = (values) => percentile([...values].sort((a, b) => a - b), 50);

// ---- a writer process ----------------------------------------------------------------------------
if (process.argv[2] === 'writer') {
  const { CallingThreadWriter } = await load('packages/cert-store/dist/sqlite/calling-thread-writer.js');
  const { parseSqliteDataSource } = await load('packages/cert-store/dist/sqlite/sqlite-database.js');
  const { issuedCertificateRow } = await load('packages/cert-store/dist/certificate-row.js');
  const { decodePemBlock, parseCertificate } = await load('packages/x509-core/dist/index.js');

  /** `count` rows as issuing makes them: other serials of one real certificate, a 300-byte first OCSP response. */
  function rows(pem, count) {
    const base = parseCertificate(decodePemBlock(pem).block.bytes);
    const serial = Buffer.from(base.serialNumberHex, 'hex');
    const offset = Buffer.from(base.der).indexOf(serial);
    const now = new Date();
    return Array.from({ length: count }, () => {
      const der = Buffer.from(base.der);
      randomFillSync(der, offset, serial.length);
      der.writeUIntBE(Date.now(), offset, 6);
      const ocspResponse = { body: randomFillSync(Buffer.alloc(300)), expiry: new Date(now.getTime() + 4 * 86_400_000) };
      return issuedCertificateRow({ certificate: store.issuedCertificateFields(der), label: 'bench', ocspResponse }, now);
    });
  }

  /** Spin until `until` (performance.now() ms): the process stays busy between commits, as a loaded server's does. */
  function spinUntil(until) {
    // Bounded by the clock.
    while (performance.now() < until);
  }

  process.on('message', async (message) => {
    if (message.type !== 'run') return;
    const { k, rowCount, rowsPerSecond, file, pem, phase } = message;
    const writer = new CallingThreadWriter(parseSqliteDataSource(file));
    // The writer never judges its commits slow and stands aside here (two writers spinning on two
    // cores beside the owner's thread get preempted mid-commit): this measures the commits, not that guard.
    Object.defineProperty(writer, 'pausedUntil', { get: () => 0, set: () => undefined });
    const commits = Math.ceil(rowCount / k);
    const warmup = rows(pem, 40 * k);
    const batches = Array.from({ length: commits }, () => rows(pem, k));
    const intervalMs = (1000 * k) / rowsPerSecond;
    let busy = 0;
    let cpu = 0;
    const wall = [];
    let handedOn = 0;
    const write = writer.write.bind(writer);
    writer.write = (batch) => {
      const before = process.cpuUsage();
      const outcome = write(batch);
      cpu += cpuUs(process.cpuUsage(before));
      if (outcome === 'busy') busy += 1;
      return outcome;
    };
    /**
     * Commit `batch` as the server does (`commit`: tried again in the next turn, then every
     * millisecond, while the other writer holds the lock); a batch the writer gives up on — the server
     * hands it to the store's thread or over IPC — is counted and committed here anyway.
     */
    const commitOnce = async (batch) => {
      const t0 = performance.now();
      // Bounded: 100 rounds of the writer's own bounded retries.
      for (let attempt = 0; attempt < 100; attempt += 1) {
        if (await writer.commit(batch)) {
          wall.push(performance.now() - t0);
          if (writer.checkpointDue()) process.send({ type: 'checkpoint' });
          return;
        }
        handedOn += 1;
      }
      throw new Error('the other writer kept the lock');
    };
    for (let i = 0; i < 40; i += 1) await commitOnce(warmup.slice(i * k, (i + 1) * k));
    process.send({ type: 'ready' });
    await new Promise((resolve) => process.once('message', resolve));
    busy = 0;
    handedOn = 0;
    cpu = 0;
    wall.length = 0;
    const io = ioCalls();
    const started = performance.now() + phase * intervalMs;
    // Bounded: `commits` commits.
    for (let i = 0; i < commits; i += 1) {
      // Jittered by up to half an interval: the server's commits come when its requests finish, not on a clock.
      spinUntil(started + (i + ((i * 0.618034) % 0.5)) * intervalMs);
      await commitOnce(batches[i]);
    }
    const ioAfter = ioCalls();
    writer.close();
    wall.sort((a, b) => a - b);
    process.send({
      type: 'done',
      commits,
      rows: commits * k,
      cpuUs: cpu,
      wallP50: percentile(wall, 50),
      wallP99: percentile(wall, 99),
      reads: ioAfter.reads - io.reads,
      writes: ioAfter.writes - io.writes,
      busy,
      handedOn,
    });
  });
  process.send({ type: 'started' });
} else {
  await main();
}

async function cell(dir, pem, k, writerCount, rowCount, rowsPerSecond) {
  const file = join(dir, `k${k}-w${writerCount}.db`);
  const owner = await store.openStore({ driver: 'sqlite3', dataSource: file }, { migrations: 'apply' });
  const children = Array.from({ length: writerCount }, () => fork(fileURLToPath(import.meta.url), ['writer'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  const next = (child, type) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message.type === 'checkpoint') {
          owner.checkpointForOthers?.();
          return;
        }
        if (message.type !== type) return;
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`writer exited (${code})`)));
    });
  await Promise.all(children.map((child) => next(child, 'started')));
  const ready = children.map((child) => next(child, 'ready'));
  // The writers' clocks half an interval apart on average (each also jittered), as two processes' commits are not in step.
  children.forEach((child, index) => child.send({ type: 'run', k, rowCount, rowsPerSecond, file, pem, phase: index / writerCount }));
  await Promise.all(ready);
  const done = children.map((child) => next(child, 'done'));
  for (const child of children) child.send({ type: 'go' });
  const results = await Promise.all(done);
  for (const child of children) child.kill();
  await owner.close();
  const per = (field) => median(results.map((r) => r[field] / r.commits));
  return {
    k,
    writerCount,
    cpuPerCommit: per('cpuUs'),
    cpuPerRow: median(results.map((r) => r.cpuUs / r.rows)),
    wallP50: median(results.map((r) => r.wallP50)),
    wallP99: median(results.map((r) => r.wallP99)),
    readsPerCommit: per('reads'),
    writesPerCommit: per('writes'),
    busyShare: median(results.map((r) => r.busy / r.commits)),
    handedOn: results.reduce((sum, r) => sum + r.handedOn, 0),
  };
}

/** Least squares of y = a + b·x. */
function fit(points) {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const b = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0) / points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return { fixed: my - b * mx, perRow: b };
}

async function main() {
  const sizes = (process.argv[2] ?? '1,2,4,8,16,32').split(',').map(Number);
  const writerCounts = (process.argv[3] ?? '1,2').split(',').map(Number);
  const rowCount = Number(process.argv[4] ?? 4800);
  const rowsPerSecond = Number(process.argv[5] ?? 1800);
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-commit-'));
  try {
    const ca = JSON.parse(
      execFileSync('cfssl', ['gencert', '-initca', '-'], {
        input: JSON.stringify({ CN: 'Bench CA', key: { algo: 'ecdsa', size: 256 } }),
        encoding: 'utf8',
        stdio: ['pipe', 'pipe', 'ignore'],
      }),
    );
    console.log(`${cpus()[0]?.model ?? '?'} × ${cpus().length}, node ${process.version}; ${rowCount} rows per writer per cell at ${rowsPerSecond} rows/s each, synchronous=FULL`);
    console.log('| writers | rows/commit | CPU µs/commit | CPU µs/row | wall ms/commit p50 / p99 | read calls/commit | write calls/commit | attempts that met the lock per commit | commits handed on |');
    console.log('|---:|---:|---:|---:|---|---:|---:|---:|---:|');
    const byWriters = new Map();
    for (const writerCount of writerCounts) {
      for (const k of sizes) {
        const r = await cell(dir, ca.cert, k, writerCount, rowCount, rowsPerSecond);
        byWriters.set(writerCount, [...(byWriters.get(writerCount) ?? []), r]);
        console.log(
          `| ${writerCount} | ${k} | ${r.cpuPerCommit.toFixed(0)} | ${r.cpuPerRow.toFixed(1)} | ${r.wallP50.toFixed(2)} / ${r.wallP99.toFixed(2)} | ` +
            `${r.readsPerCommit.toFixed(1)} | ${r.writesPerCommit.toFixed(1)} | ${r.busyShare.toFixed(2)} | ${r.handedOn} |`,
        );
      }
    }
    for (const [writerCount, results] of byWriters) {
      const { fixed, perRow } = fit(results.map((r) => ({ x: r.k, y: r.cpuPerCommit })));
      console.log(`${writerCount} writer(s): CPU per commit ≈ ${fixed.toFixed(0)} µs + ${perRow.toFixed(1)} µs × rows`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
