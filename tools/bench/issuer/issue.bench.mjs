#!/usr/bin/env node
/**
 * Micro-benchmark of @certsmith/issuer (run `npx tsc -b tsconfig.json` first):
 *
 *   node tools/bench/issuer/issue.bench.mjs [iterations]
 *
 * Times the issuer's newcert use case (`createIssuer(…).newCertificate`, its tasks on this thread)
 * for the behaviour-doc 7.6 request (ECDSA P-256 leaf key, 5 hosts of every kind, full subject)
 * signed by an ECDSA P-256 CA through the real local signer plugin, **excluding key generation**:
 * keys come from a pre-generated pool given to this thread (`provideThreadKeySource`), so the
 * figure is what certsmith adds on top of key generation (label routing, profile, subject, SANs,
 * CSR build + sign, CSR facts, certificate build + sign, PEM, MD5/SHA-1/SHA-256 sums of both).
 * Also reported: the cost of the two raw ECDSA signatures every newcert needs (CSR + certificate),
 * the same newcert with key generation, P-256 key generation alone, and `signCertificate` for a
 * ready CSR (its CSR signature check lives in x509-core). Each figure is the median of several
 * timed passes after warm-up, as wall-clock µs per operation (one at a time) and process CPU µs
 * per operation.
 */
import { generateKeyPair, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = fileURLToPath(new URL('.', import.meta.url));
const load = (path) => import(join(here, '../../..', path));
const issuer = await load('packages/issuer/dist/index.js');
const { createSignerContext } = await load('packages/signer-api/dist/index.js');
const local = await load('plugins/signer-local/dist/index.js');

const iterations = Number(process.argv[2] ?? 2000);
const passes = 5;

const dir = mkdtempSync(join(tmpdir(), 'issuer-bench-'));
const ca = await local.createDevelopmentCa(dir);
const signer = await local.loadLocalSigner({ certFile: ca.certFile, keyFile: ca.keyFile }, createSignerContext());
const policy = issuer.defaultSigningPolicy();
const issuing = issuer.createIssuer({ signers: issuer.createSignerDirectory([{ label: 'default', signer, policy }]) });
const request = issuer.decodeNewCertificateRequest({
  request: {
    CN: 'www.example.com',
    hosts: ['www.example.com', '192.168.1.10', 'admin@example.com', 'spiffe://example.org/svc', 'localhost:8080'],
    names: [{ C: 'US', ST: 'California', L: 'San Francisco', O: 'Example Inc', OU: 'Web' }],
  },
});
const spec = issuer.resolveKeySpec(request.request.key);

// Pre-generate the keys of the timed run (not timed). Each key serves once: a native ECDSA key is
// released after its CSR signature, as in a server.
const pool = [];
for (let i = 0; i < Math.min(200, iterations) + passes * iterations; i++) pool.push(await issuer.generateKey(spec));
let next = 0;
const keySource = async () => {
  if (next >= pool.length) throw new Error('the pre-generated keys are used up');
  return pool[next++];
};
const newcert = () => issuing.newCertificate(request);

async function measure(label, operation, count) {
  for (let i = 0; i < Math.min(200, count); i++) await operation(); // warm-up
  const wall = [];
  const cpu = [];
  for (let pass = 0; pass < passes; pass++) {
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 0; i < count; i++) await operation();
    const elapsed = Number(process.hrtime.bigint() - start) / 1e3;
    const used = process.cpuUsage(cpuStart);
    wall.push(elapsed / count);
    cpu.push((used.user + used.system) / count);
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  console.log(`${label.padEnd(58)} ${median(wall).toFixed(1).padStart(8)} µs wall ${median(cpu).toFixed(1).padStart(8)} µs CPU`);
}

const { csrPem } = await issuer.generateKeyAndCsr(request.request);
const generateKeyPairAsync = promisify(generateKeyPair);

console.log(`node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${iterations} operations × ${passes} passes`);
issuer.provideThreadKeySource(keySource);
await measure('newCertificate, ECDSA P-256, excluding key generation', newcert, iterations);
issuer.provideThreadKeySource(null);
const referenceKey = pool[0].privateKey;
const tbs = new Uint8Array(550);
await measure('reference: 2 × node:crypto ECDSA P-256 sign (550 B)', async () => {
  sign('sha256', tbs, referenceKey);
  sign('sha256', tbs, referenceKey);
}, iterations);
await measure('signCertificate (parse + verify CSR, issue)', () => issuing.signCertificate({ certificate_request: csrPem }), iterations);
await measure('P-256 generateKeyPair (async) alone', () => generateKeyPairAsync('ec', { namedCurve: 'P-256' }), iterations);
await measure('newCertificate, ECDSA P-256, including key generation', newcert, iterations);

await signer.close();
rmSync(dir, { recursive: true, force: true });
