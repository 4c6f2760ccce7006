/**
 * What a second HTTP thread would give `serve` (docs/adr/0004-http-threads.md): a node:http server
 * whose request does `workUs` of CPU work on the thread that parsed it (as a bundle on the event-loop
 * lane does), run with one HTTP thread and with N threads that accept on the same listening socket
 * (worker threads listening on the main thread's socket descriptor, which Node 20 allows; Node 20
 * has no `reusePort`). A measuring device for what a second event loop gives, not a layout to ship:
 * both handles own one descriptor and close it twice (ADR 0004, ADR 0005). Load: `wrk -t1 -c16`, like the compare harness's OCSP cell. Reports req/s,
 * p99, and the server's cores busy from /proc (user + system time over the run).
 *
 *   node tools/bench/http-threads/shared-listener.bench.mjs [seconds=3] [work µs list=0,50,100] [threads list=1,2]
 *
 * Needs `wrk` (`apt-get install wrk`). Run it under /work/bin/quiet (or on an idle machine).
 */
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const BODY = JSON.stringify({ success: true, result: { bundle: 'x'.repeat(200) }, errors: [], messages: [] });

/** Spin `us` microseconds of CPU on this thread. */
function work(us) {
  if (us <= 0) return;
  const end = process.hrtime.bigint() + BigInt(us) * 1000n;
  while (process.hrtime.bigint() < end);
}

function handler(workUs) {
  return (request, response) => {
    work(workUs);
    response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(BODY) });
    response.end(BODY);
  };
}

async function serve(threads, workUs) {
  const server = http.createServer(handler(workUs));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  // Every extra thread accepts on the same descriptor; they are never closed before the process
  // exits, so the descriptor is not closed twice.
  const fd = server._handle.fd;
  const started = [];
  for (let i = 1; i < threads; i += 1) {
    const worker = new Worker(fileURLToPath(import.meta.url), { workerData: { fd, workUs } });
    started.push(new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); }));
  }
  await Promise.all(started);
  process.stdout.write(`${server.address().port}\n`);
}

function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // utime and stime are fields 14 and 15 (1-based); after "pid (comm) " they are at 11 and 12.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function measure(threads, workUs, seconds) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve', String(threads), String(workUs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const port = await new Promise((resolve, reject) => {
      child.stdout.once('data', (data) => resolve(Number(String(data).trim())));
      child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
    });
    const url = `http://127.0.0.1:${port}/`;
    execFileSync('wrk', ['-t1', '-c16', '-d1s', url], { stdio: 'ignore' });
    const before = cpuMs(child.pid);
    const out = execFileSync('wrk', ['-t1', '-c16', `-d${seconds}s`, '--latency', url], { encoding: 'utf8' });
    const cpu = cpuMs(child.pid) - before;
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1]);
    const p99 = /99%\s+([\d.]+)(us|ms|s)/.exec(out);
    const p99ms = Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1);
    return { threads, workUs, rps, p99ms, coresBusy: cpu / (seconds * 1000) };
  } finally {
    child.kill();
  }
}

if (!isMainThread) {
  const server = http.createServer(handler(workerData.workUs));
  server.listen({ fd: workerData.fd }, () => parentPort.postMessage('listening'));
} else if (process.argv[2] === 'serve') {
  await serve(Number(process.argv[3]), Number(process.argv[4]));
} else {
  const seconds = Number(process.argv[2] ?? 3);
  const works = (process.argv[3] ?? '0,50,100').split(',').map(Number);
  const threadCounts = (process.argv[4] ?? '1,2').split(',').map(Number);
  console.log(`| work per request µs | HTTP threads | req/s | p99 ms | server cores busy |`);
  console.log(`|---:|---:|---:|---:|---:|`);
  for (const workUs of works) {
    for (const threads of threadCounts) {
      const r = await measure(threads, workUs, seconds);
      console.log(`| ${workUs} | ${threads} | ${Math.round(r.rps)} | ${r.p99ms.toFixed(2)} | ${r.coresBusy.toFixed(2)} |`);
    }
  }
}

