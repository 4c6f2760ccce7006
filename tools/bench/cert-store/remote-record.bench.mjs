#!/usr/bin/env node
/**
 * What recording costs when the store is in another process (`serve --processes N`: the primary
 * owns the store, worker processes record over cluster IPC with `serialization: 'advanced'`), against
 * recording in the process that owns it. Run `npx tsc -b tsconfig.json` first; through
 * `/work/bin/quiet` on the shared machine:
 *
 *   node tools/bench/cert-store/remote-record.bench.mjs [rounds=400] [batch=16] [workers=1,2] [loops=1] [paceMs=0] [workUs=0] [groups=1] [commit=owner]
 *
 * Each round records `batch` certificates in one turn (as concurrent newcerts finishing together
 * would) and waits for them; the row's fields are read from the certificate before timing (issuing
 * does that where it signs). With `loops` > 1 each recorder runs that many such sequences at once,
 * each `rounds / loops` long: the processes then seldom sleep between rounds, as under HTTP load
 * (on a VM, waking a sleeping process is a large part of a round trip's cost), and rounds that end
 * in the same turn travel together. With `paceMs` > 0 the rounds do not wait for each other: one
 * starts every `paceMs` (open loop, as requests arrive), e.g. `3000 2 1,2 1 1` ≈ 2,000 rows/s per
 * recorder. With `workUs` > 0 each round first spends that much CPU in a turn of its own (as a
 * request signs before it records): closed-loop requests then finish at different times, as under
 * HTTP load, instead of all in the turn their previous answers arrived — e.g. `1600 1 1,2 16 0 250`
 * is 16 requests at once per recorder. `groups` is the client's `maxRecordGroupsInFlight` (group
 * commit across the channel; `0`: no limit, every turn's records go at once, as before it).
 * `commit` is where the recorders' rows are committed: `owner` (sent over the channel, as before) or
 * `own` (`connectStore`'s `commitIssuedRowsTo`: each recorder commits on its own connection to the
 * owner's file, and only batches that meet a lock or a failing row go to the owner), as
 * `serve --processes N` does with SQLite since 2026-11-26.
 * `BENCH_CHILD_ARGS='--cpu-prof …'` profiles the recorders. Modes: `direct` (the owner's own event loop records) and `remote xN`
 * (N forked processes record through `connectStore`, each `batch` a round, at once). Reported: CPU
 * per row of the owner process (its SQLite thread included) and of the recording processes, their
 * sum, round latency p50/p99, the messages each way per round and the rows per message sent. IPC cost per row = the remote
 * sum − direct. SQLite with `synchronous=FULL` on the machine's disk, a fresh file per mode.
 */
import { execFileSync, fork } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

const here = fileURLToPath(new URL('.', import.meta.url));
const load = (path) => import(join(here, '../../..', path));
const store = await load('packages/cert-store/dist/index.js');
const x509 = await load('packages/x509-core/dist/index.js');

const rounds = Number(process.argv[2] ?? 400);
const batch = Number(process.argv[3] ?? 16);
const workerCounts = (process.argv[4] ?? '1,2').split(',').map(Number);
const loops = Number(process.argv[5] ?? 1);
const paceMs = Number(process.argv[6] ?? 0);
const workUs = Number(process.argv[7] ?? 0);
const groups = Number(process.argv[8] ?? 1);
const commitWhere = process.argv[9] ?? 'owner';
if (process.argv[2] !== 'worker' && commitWhere !== 'owner' && commitWhere !== 'own') throw new Error(`commit must be owner or own, not ${commitWhere}`);

/** Spend `us` µs of CPU on this thread, as signing a request would. */
function work(us) {
  const until = performance.now() + us / 1000;
  // Bounded by the clock.
  while (performance.now() < until);
}

const waitingForWork = [];
/**
 * Resolves after `us` µs of work done in a turn of its own: one request's work per turn, as
 * requests that arrive one by one are signed (all of them in one `setImmediate` would be one turn,
 * and their records one message, which HTTP load does not give).
 */
function workInOwnTurn(us) {
  return new Promise((resolve) => {
    waitingForWork.push(resolve);
    if (waitingForWork.length === 1) setImmediate(pumpWork, us);
  });
}
function pumpWork(us) {
  work(us);
  waitingForWork.shift()();
  if (waitingForWork.length > 0) setImmediate(pumpWork, us);
}

/** `count` distinct certificates' row fields from one real certificate with other serials (the store does not verify). */
function fieldsFrom(pem, count) {
  const base = x509.parseCertificate(x509.decodePemBlock(pem).block.bytes);
  const serial = Buffer.from(base.serialNumberHex, 'hex');
  const offset = Buffer.from(base.der).indexOf(serial);
  return Array.from({ length: count }, () => {
    const der = Buffer.from(base.der);
    randomFillSync(der, offset, serial.length);
    der.writeUIntBE(Date.now(), offset, 6);
    return store.issuedCertificateFields(der);
  });
}

/** Record `rounds` batches through `target`, `loops` sequences at once (or one every `paceMs`); returns round latencies in ms. */
async function recordRounds(target, fields, rounds, batch, loops, paceMs = 0, workUs = 0) {
  const latencies = [];
  if (paceMs > 0) {
    const rounds_ = [];
    for (let round = 0; round < rounds; round += 1) {
      const started = performance.now();
      rounds_.push(
        Promise.all(fields.slice(round * batch, (round + 1) * batch).map((certificate) => target.recordCertificate({ certificate }))).then(() =>
          latencies.push(performance.now() - started),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, paceMs));
    }
    await Promise.all(rounds_);
    return latencies;
  }
  let next = 0;
  const loop = async () => {
    // Bounded: each pass takes one round of the `rounds`.
    for (let round = next++; round < rounds; round = next++) {
      const started = performance.now();
      if (workUs > 0) await workInOwnTurn(workUs);
      await Promise.all(fields.slice(round * batch, (round + 1) * batch).map((certificate) => target.recordCertificate({ certificate })));
      latencies.push(performance.now() - started);
    }
  };
  const running = [];
  for (let i = 0; i < loops; i += 1) {
    running.push(loop());
    // Each sequence starts in a turn of its own, as requests do.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(running);
  return latencies;
}

const cpuMs = (usage) => (usage.user + usage.system) / 1000;

// ---- the recording process -------------------------------------------------------------------
if (process.argv[2] === 'worker') {
  const maxRecordGroupsInFlight = Number(process.argv[3] ?? 1);
  const ownerFile = process.argv[4];
  const client = store.connectStore(store.ipcChannel(process), {
    driver: 'sqlite3',
    maxRecordGroupsInFlight: maxRecordGroupsInFlight > 0 ? maxRecordGroupsInFlight : Number.MAX_SAFE_INTEGER,
    ...(ownerFile === undefined ? {} : { commitIssuedRowsTo: { driver: 'sqlite3', dataSource: ownerFile } }),
  });
  let sent = 0;
  let sentCalls = 0;
  let received = 0;
  process.on('message', async (message) => {
    if (store.isStoreMessage(message)) {
      received += 1;
      return;
    }
    if (message.type !== 'run') return;
    const fields = fieldsFrom(message.pem, message.warmup + message.rounds * message.batch);
    // Warm-up: JIT, the store's statements, the pipe.
    await Promise.all(fields.slice(0, message.warmup).map((certificate) => client.recordCertificate({ certificate })));
    process.send({ type: 'ready' });
    await new Promise((resolve) => process.once('message', resolve));
    const originalSend = process.send.bind(process);
    process.send = (m, ...rest) => {
      if (store.isStoreMessage(m)) {
        sent += 1;
        sentCalls += Array.isArray(m.calls) ? m.calls.length : 0;
      }
      return originalSend(m, ...rest);
    };
    sent = 0;
    sentCalls = 0;
    received = 0;
    const cpu = process.cpuUsage();
    const latencies = await recordRounds(client, fields.slice(message.warmup), message.rounds, message.batch, message.loops, message.paceMs, message.workUs);
    const usage = process.cpuUsage(cpu);
    process.send = originalSend;
    // The spin is the request's own work, not the store's: reported apart.
    process.send({ type: 'done', cpuMs: cpuMs(usage) - (message.rounds * message.workUs) / 1000, latencies, sent, sentCalls, received });
  });
  process.send({ type: 'started' });
} else {
  await main();
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

function summary(name, rows, ownerCpu, clientCpu, latencies, messages) {
  latencies.sort((a, b) => a - b);
  const perRow = (ms) => ((ms * 1000) / rows).toFixed(1);
  console.log(
    [
      name.padEnd(10),
      `owner ${perRow(ownerCpu).padStart(6)} µs/row`,
      `recorders ${perRow(clientCpu).padStart(6)} µs/row`,
      `sum ${perRow(ownerCpu + clientCpu).padStart(6)} µs/row`,
      `round p50 ${percentile(latencies, 50).toFixed(2)} / p99 ${percentile(latencies, 99).toFixed(2)} ms`,
      messages,
    ].join('  '),
  );
  return (ownerCpu + clientCpu) / rows;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'certsmith-bench-remote-'));
  const ca = JSON.parse(execFileSync('cfssl', ['gencert', '-initca', '-'], { input: JSON.stringify({ CN: 'Bench CA', key: { algo: 'ecdsa', size: 256 } }), encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] }));
  console.log(
    `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, Node ${process.version}; ${rounds} rounds of ${batch} records per recorder, ` +
      `${paceMs > 0 ? `one round every ${paceMs} ms` : `${loops} at once`}${workUs > 0 ? `, ${workUs} µs of work before each` : ''}; ` +
      `record groups in flight: ${groups > 0 ? groups : 'no limit'}; recorders' rows committed by the ${commitWhere === 'own' ? 'recorders themselves' : 'owner'} (recorders' CPU without the work)`,
  );
  let directPerRow;
  try {
    // Direct: this process owns the store and records.
    {
      const direct = await store.openStore({ driver: 'sqlite3', dataSource: join(dir, 'direct.db') });
      const fields = fieldsFrom(ca.cert, 200 + rounds * batch);
      await Promise.all(fields.slice(0, 200).map((certificate) => direct.recordCertificate({ certificate })));
      const cpu = process.cpuUsage();
      const latencies = await recordRounds(direct, fields.slice(200), rounds, batch, loops, paceMs, workUs);
      const owner = cpuMs(process.cpuUsage(cpu)) - (rounds * workUs) / 1000;
      await direct.close();
      directPerRow = summary('direct', rounds * batch, owner, 0, latencies, '');
    }
    for (const count of workerCounts) {
      const ownerFile = join(dir, `remote-${count}.db`);
      const owner = await store.openStore({ driver: 'sqlite3', dataSource: ownerFile });
      const { NODE_OPTIONS: _ignored, ...env } = process.env;
      const children = [];
      const servers = [];
      for (let i = 0; i < count; i += 1) {
        const child = fork(fileURLToPath(import.meta.url), ['worker', String(groups), ...(commitWhere === 'own' ? [ownerFile] : [])], { serialization: 'advanced', env, execArgv: process.env.BENCH_CHILD_ARGS ? process.env.BENCH_CHILD_ARGS.split(' ') : [] });
        await new Promise((resolve) => child.once('message', resolve));
        servers.push(store.serveStore(owner, store.ipcChannel(child)));
        children.push(child);
      }
      const next = (child, type) =>
        new Promise((resolve) => {
          const listener = (message) => {
            if (message?.type !== type) return;
            child.off('message', listener);
            resolve(message);
          };
          child.on('message', listener);
        });
      await Promise.all(children.map((child) => {
        const ready = next(child, 'ready');
        child.send({ type: 'run', pem: ca.cert, warmup: 200, rounds, batch, loops, paceMs, workUs });
        return ready;
      }));
      const done = children.map((child) => next(child, 'done'));
      const cpu = process.cpuUsage();
      for (const child of children) child.send({ type: 'go' });
      const results = await Promise.all(done);
      const ownerCpu = cpuMs(process.cpuUsage(cpu));
      const rows = rounds * batch * count;
      const sent = results.reduce((sum, r) => sum + r.sent, 0);
      const received = results.reduce((sum, r) => sum + r.received, 0);
      const sentCalls = results.reduce((sum, r) => sum + r.sentCalls, 0);
      const perRow = summary(
        `remote x${count}`,
        rows,
        ownerCpu,
        results.reduce((sum, r) => sum + r.cpuMs, 0),
        results.flatMap((r) => r.latencies),
        `messages/round: ${(sent / (rounds * count)).toFixed(2)} out, ${(received / (rounds * count)).toFixed(2)} back; rows/message ${(sentCalls / sent).toFixed(1)}`,
      );
      console.log(`${''.padEnd(10)}  IPC cost ≈ ${((perRow - directPerRow) * 1000).toFixed(1)} µs CPU per row (remote sum − direct)`);
      for (const server of servers) await server.close();
      await Promise.all(children.map((child) => new Promise((resolve) => {
        child.once('exit', resolve);
        child.disconnect();
      })));
      await owner.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
