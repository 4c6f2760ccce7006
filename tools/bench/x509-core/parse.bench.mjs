#!/usr/bin/env node
/**
 * Micro-benchmark of @certsmith/x509-core parsing (run `npx tsc -b tsconfig.json` first):
 *
 *   node tools/bench/x509-core/parse.bench.mjs [path/to/bundle.crt]
 *
 * Reports µs per `parseCertificate` over every certificate of the cfssl_trust intermediate bundle
 * (1263 real CA certificates, read by path), µs per `parseCertificates` on a typical PEM leaf
 * (RSA-2048 leaf with SANs, AIA, CRL DP, EKU, KU, SKI/AKI and policies, made by the openssl CLI;
 * the bundle's first certificate if openssl is missing), and Node's `new X509Certificate` on the
 * same inputs for comparison. Each figure is the median of several timed passes after warm-up;
 * both wall-clock and process CPU time are shown because shared CI machines are noisy.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const { parseCertificate, parseCertificates, decodePemBlocks, certificateToPem } = await import(
  join(here, '../../../packages/x509-core/dist/index.js')
);

const bundlePath = process.argv[2] ?? '/work/shared/trust/int-bundle.crt';
const ders = decodePemBlocks(readFileSync(bundlePath, 'utf8')).map((block) => block.bytes);

/** A typical TLS leaf, generated now (never a pasted blob). */
function makeLeafPem() {
  const dir = mkdtempSync(join(tmpdir(), 'x509-bench-'));
  try {
    const caKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    const leafKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    writeFileSync(join(dir, 'ca.key'), caKey);
    writeFileSync(join(dir, 'leaf.key'), leafKey);
    writeFileSync(
      join(dir, 'x.cnf'),
      [
        '[req]', 'distinguished_name = dn', 'prompt = no', '[dn]', 'CN = unused',
        '[ca]', 'basicConstraints = critical,CA:TRUE', 'keyUsage = critical,keyCertSign,cRLSign', 'subjectKeyIdentifier = hash',
        '[leaf]', 'basicConstraints = critical,CA:FALSE', 'keyUsage = critical,digitalSignature,keyEncipherment',
        'extendedKeyUsage = serverAuth,clientAuth', 'subjectKeyIdentifier = hash', 'authorityKeyIdentifier = keyid',
        'subjectAltName = DNS:www.example.com,DNS:example.com,DNS:api.example.com',
        'authorityInfoAccess = OCSP;URI:http://ocsp.example.com,caIssuers;URI:http://certs.example.com/ca.crt',
        'crlDistributionPoints = URI:http://crl.example.com/ca.crl', 'certificatePolicies = 2.23.140.1.2.2', '',
      ].join('\n'),
    );
    const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    run(['req', '-x509', '-new', '-key', 'ca.key', '-subj', '/C=US/O=Bench CA Inc/CN=Bench Issuing CA', '-config', 'x.cnf', '-extensions', 'ca', '-days', '3650', '-out', 'ca.pem']);
    return run([
      'req', '-x509', '-new', '-key', 'leaf.key', '-subj', '/C=US/ST=California/L=San Francisco/O=Example Inc/CN=www.example.com',
      '-config', 'x.cnf', '-extensions', 'leaf', '-days', '90', '-CA', 'ca.pem', '-CAkey', 'ca.key',
    ]).toString();
  } catch {
    return certificateToPem(ders[0]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** Median µs per operation (wall and CPU) over `passes` passes of `fn` doing `ops` operations. */
function measure(fn, ops, passes = 9, warmup = 3) {
  for (let i = 0; i < warmup; i++) fn();
  const wall = [];
  const cpu = [];
  for (let i = 0; i < passes; i++) {
    const c0 = cpuMicros();
    const t0 = process.hrtime.bigint();
    fn();
    wall.push(Number(process.hrtime.bigint() - t0) / 1e3 / ops);
    cpu.push((cpuMicros() - c0) / ops);
  }
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return { wall: median(wall), cpu: median(cpu) };
}

const leafPem = makeLeafPem();
const leafDer = parseCertificates(leafPem)[0].der;
const LEAF_OPS = 5000;

const rows = [
  ['parseCertificate, int-bundle.crt (per cert)', measure(() => { for (const der of ders) parseCertificate(der); }, ders.length)],
  ['new X509Certificate, int-bundle.crt (per cert)', measure(() => { for (const der of ders) new X509Certificate(der); }, ders.length, 3, 1)],
  ['parseCertificates, PEM leaf', measure(() => { for (let i = 0; i < LEAF_OPS; i++) parseCertificates(leafPem); }, LEAF_OPS)],
  ['parseCertificate, DER leaf', measure(() => { for (let i = 0; i < LEAF_OPS; i++) parseCertificate(leafDer); }, LEAF_OPS)],
  ['new X509Certificate, PEM leaf', measure(() => { for (let i = 0; i < 500; i++) new X509Certificate(leafPem); }, 500, 3, 1)],
];

console.log(`node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown cpu'}), ${ders.length} certs from ${bundlePath}`);
for (const [label, { wall, cpu }] of rows) {
  console.log(`${label.padEnd(50)} ${wall.toFixed(1).padStart(8)} µs wall ${cpu.toFixed(1).padStart(8)} µs cpu`);
}
