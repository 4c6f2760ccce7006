#!/usr/bin/env node
/**
 * An early end-to-end read on issue 21's responder target (≥ 3× `cfssl ocspserve`'s requests per
 * second at 16 clients, p99 ≤ CFSSL's): the same responses file served by `cfssl ocspserve
 * -responses` and by `ocsp-http-server.mjs` (the package's responder on plain node:http, one
 * thread), each driven by 16 closed-loop keep-alive clients POSTing DER requests for random serials.
 * Rounds alternate between the servers; req/s, p50/p99 latency and the server's CPU ms per request
 * (from /proc) are reported per round. Run after `npm run build`, through /work/bin/quiet:
 *
 *   node tools/bench/revocation/ocsp-http.bench.mjs [--responses 1000] [--seconds 5] [--rounds 2] [--concurrency 16]
 *
 * The final cell belongs in tools/bench/compare once `certsmith ocspserve` exists.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const here = fileURLToPath(new URL('.', import.meta.url));
const revocation = await import(join(here, '../../../packages/revocation/dist/index.js'));
const { algorithmsForKeyObject, signWithKeyObject } = await import(join(here, '../../../packages/signer-api/dist/index.js'));
const { decodePemBlock, derSequence } = await import(join(here, '../../../packages/x509-core/dist/index.js'));

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(args[index + 1]);
};
const responseCount = option('responses', 1000);
const seconds = option('seconds', 5);
const rounds = option('rounds', 2);
const concurrency = option('concurrency', 16);
const CLOCK_TICKS = 100;

function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHttp(url) {
  for (let i = 0; i < 150; i++) {
    try {
      await fetch(url, { method: 'POST', body: new Uint8Array(0) });
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} did not answer`);
}

const dir = mkdtempSync(join(tmpdir(), 'ocsp-http-bench-'));
const children = [];
try {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'),
    '-subj', '/O=certsmith bench/CN=OCSP HTTP bench CA', '-days', '30', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-addext', 'subjectKeyIdentifier=hash'], { stdio: 'ignore' });
  const pem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  const key = createPrivateKey(readFileSync(join(dir, 'ca.key')));
  const signer = await revocation.createRevocationSigner({
    algorithms: algorithmsForKeyObject(key),
    getCertificate: async () => ({ der: decodePemBlock(pem).block.bytes, pem }),
    sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
    close: async () => {},
  });
  const identity = revocation.createOcspSigningIdentity({ signer });
  const validity = revocation.ocspValidity(new Date());
  const ders = [];
  const requests = [];
  for (let i = 1; i <= responseCount; i++) {
    const serial = BigInt(i) * 104729n;
    ders.push((await revocation.buildOcspResponse({ identity, serialNumber: serial, status: i % 10 ? 'good' : 'revoked', revokedAt: new Date(), reason: 1, ...validity })).der);
    const certId = revocation.encodeCertId('SHA1', identity.issuerHashes('SHA1'), revocation.integerContent(serial));
    requests.push(Buffer.from(derSequence(derSequence(derSequence(derSequence(certId))))));
  }
  const responsesFile = join(dir, 'responses.txt');
  writeFileSync(responsesFile, revocation.formatOcspResponseFile(ders));

  const cfsslPort = await freePort();
  const cfssl = spawn('cfssl', ['ocspserve', '-address', '127.0.0.1', '-port', String(cfsslPort), '-responses', responsesFile], { stdio: 'ignore' });
  children.push(cfssl);
  const certsmith = spawn(process.execPath, ['--max-semi-space-size=4', join(here, 'ocsp-http-server.mjs'), responsesFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(certsmith);
  const certsmithPort = await new Promise((resolve, reject) => {
    certsmith.stdout.on('data', (chunk) => {
      const match = /listening (\d+)/.exec(chunk.toString());
      if (match) resolve(Number(match[1]));
    });
    certsmith.on('exit', () => reject(new Error('responder exited')));
  });
  const servers = [
    { name: 'cfssl ocspserve', url: `http://127.0.0.1:${cfsslPort}`, pid: cfssl.pid },
    { name: 'certsmith responder (node:http)', url: `http://127.0.0.1:${certsmithPort}`, pid: certsmith.pid },
  ];
  for (const server of servers) await waitForHttp(server.url);

  async function round(server) {
    const pool = new Pool(server.url, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
    const latencies = [];
    let errors = 0;
    const deadline = performance.now() + seconds * 1000;
    const cpuBefore = cpuMs(server.pid);
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const body = requests[(next++ * 7919) % requests.length];
        const t0 = performance.now();
        const { statusCode, body: stream } = await pool.request({ path: '/', method: 'POST', body, headers: { 'content-type': 'application/ocsp-request' } });
        await stream.arrayBuffer();
        if (statusCode === 200) latencies.push(performance.now() - t0);
        else errors++;
      }
    }));
    const elapsed = (performance.now() - started) / 1000;
    const cpu = cpuMs(server.pid) - cpuBefore;
    await pool.close();
    latencies.sort((a, b) => a - b);
    const at = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
    return { server: server.name, 'req/s': Math.round(latencies.length / elapsed), 'p50 ms': at(0.5).toFixed(2), 'p99 ms': at(0.99).toFixed(2), 'server CPU µs/req': ((cpu * 1000) / Math.max(1, latencies.length)).toFixed(0), errors };
  }

  for (const server of servers) await round({ ...server }); // warm-up, not reported
  const results = [];
  for (let r = 0; r < rounds; r++) for (const server of r % 2 ? [...servers].reverse() : servers) results.push(await round(server));
  console.log(`OCSP over HTTP: ${responseCount} responses, c=${concurrency}, ${seconds} s rounds; Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}; load generator in the same machine`);
  console.table(results);
} finally {
  for (const child of children) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
