#!/usr/bin/env node
/**
 * The per-certificate work of recording at issuance (the issuer's worker hook,
 * apps/server/src/issued-recording-worker.ts), before and after it stopped parsing the certificate
 * again and encoding its first OCSP response from scratch. Run after `npm run build`, through
 * /work/bin/quiet on the shared machine:
 *
 *   node tools/bench/revocation/issued-recording.bench.mjs [--certificates 256] [--iterations 20000] [--rounds 5]
 *
 * Certificates are made by the issuer itself (`createIssuer().signCertificate`, ECDSA P-256 CA, a
 * CSR with a CN and a DNS SAN: what `newcert` signs, random 20-byte serials). Timed, each as CPU µs
 * per certificate (process CPU time; median of the rounds, the variants alternating in each round):
 * - row fields: `issuedCertificateFields(der)` (a full `parseCertificate`) against
 *   `signedCertificateFields(readCertificateStoreFields(der), pem)`;
 * - OCSP encoding: `buildOcspResponse` against the identity's `ocspResponseTemplate`, both with a
 *   signer that returns 72 fixed octets at once (the encoding alone);
 * - OCSP with the signature: the same two with the CA's real ECDSA P-256 key.
 * Each pair's outputs are compared byte for byte before timing (the benchmark refuses to time two
 * things that do not give the same result).
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';

const { certificates: certificateCount, iterations, rounds } = readBenchOptions(import.meta.url, {
  certificates: { type: 'integer', default: 256, min: 1 },
  iterations: { type: 'integer', default: 20_000, min: 1 },
  rounds: { type: 'integer', default: 5, min: 1 },
});

const here = fileURLToPath(new URL('.', import.meta.url));
const load = (name) => import(join(here, `../../../packages/${name}/dist/index.js`));
const { buildOcspResponse, createOcspSigningIdentity, createRevocationSigner, ocspResponseTemplate, ocspValidity } = await load('revocation');
const { issuedCertificateFields, signedCertificateFields } = await load('cert-store');
const { readCertificateStoreFields, decodePemBlock } = await load('x509-core');
const { createIssuer, createSignerDirectory, parseSigningPolicy, DEFAULT_LABEL } = await load('issuer');
const { algorithmsForKeyObject, signWithKeyObject } = await load('signer-api');

const dir = mkdtempSync(join(tmpdir(), 'issued-recording-bench-'));
const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/O=certsmith bench/CN=Bench CA', '-days', '30',
  '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-addext', 'subjectKeyIdentifier=hash']);
run(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=bench.example.com', '-addext', 'subjectAltName=DNS:bench.example.com']);
const caPem = readFileSync(join(dir, 'ca.pem'), 'utf8');
const caKey = createPrivateKey(readFileSync(join(dir, 'ca.key')));
const csr = readFileSync(join(dir, 'leaf.csr'), 'utf8');
rmSync(dir, { recursive: true, force: true });

const caSigner = {
  algorithms: algorithmsForKeyObject(caKey),
  getCertificate: async () => ({ der: decodePemBlock(caPem).block.bytes, pem: caPem }),
  sign: (tbs, algorithm) => signWithKeyObject(caKey, tbs, algorithm),
  close: async () => {},
};
const policy = parseSigningPolicy({ signing: { default: { usages: ['signing', 'key encipherment', 'server auth'], expiry: '8760h' } } });
const issuer = createIssuer({ signers: createSignerDirectory([{ label: DEFAULT_LABEL, signer: caSigner, policy, forwardsLabels: false }]) });
const issued = [];
for (let i = 0; i < certificateCount; i++) {
  const { certificatePem } = await issuer.signCertificate({ certificate_request: csr }, { authenticated: true });
  const der = decodePemBlock(certificatePem).block.bytes;
  // The serial octets as the hook has them (read with the row fields), not timed with the OCSP encodings.
  issued.push({ pem: certificatePem, der, serial: readCertificateStoreFields(der).serialNumber });
}

const ca = await createRevocationSigner(caSigner);
const fixed = new Uint8Array(72).fill(0x5a);
const encodingOnly = createOcspSigningIdentity({ signer: { ...ca, sign: async () => fixed } });
const withSignature = createOcspSigningIdentity({ signer: ca });
const validity = ocspValidity(new Date());

const variants = {
  'row fields: full parse': (c) => issuedCertificateFields(c.der),
  'row fields: store-fields reader': (c) => signedCertificateFields(readCertificateStoreFields(c.der), c.pem),
  'OCSP encoding: buildOcspResponse': (c) => buildOcspResponse({ identity: encodingOnly, serialNumber: c.serial, status: 'good', ...validity }).then((r) => r.der),
  'OCSP encoding: template': async (c) => {
    const template = ocspResponseTemplate(encodingOnly);
    const data = template.responseData({ serialNumber: c.serial, status: 'good', ...validity });
    return template.response(data, await encodingOnly.signer.sign(data));
  },
  'OCSP with ECDSA signature: buildOcspResponse': (c) => buildOcspResponse({ identity: withSignature, serialNumber: c.serial, status: 'good', ...validity }),
  'OCSP with ECDSA signature: template': async (c) => {
    const template = ocspResponseTemplate(withSignature);
    const data = template.responseData({ serialNumber: c.serial, status: 'good', ...validity });
    return template.response(data, await withSignature.signer.sign(data));
  },
};

// Same results, or no timing: the fields deep-equal, the encodings byte-equal (fixed signature).
for (const certificate of issued.slice(0, 16)) {
  const a = JSON.stringify(variants['row fields: full parse'](certificate));
  const b = JSON.stringify(variants['row fields: store-fields reader'](certificate));
  if (a !== b) throw new Error(`row fields differ:\n${a}\n${b}`);
  const x = Buffer.from(await variants['OCSP encoding: buildOcspResponse'](certificate));
  const y = Buffer.from(await variants['OCSP encoding: template'](certificate));
  if (!x.equals(y)) throw new Error('OCSP encodings differ');
}

async function time(fn) {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const result = fn(issued[i % issued.length]);
    if (result instanceof Promise) await result;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / iterations;
}

const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (const fn of Object.values(variants)) await time(fn); // warm-up: every variant optimised before timing
for (let round = 0; round < rounds; round++) {
  for (const [name, fn] of Object.entries(variants)) samples[name].push(await time(fn));
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}; ${certificateCount} certificates, ${iterations} per round, ${rounds} rounds (median CPU µs per certificate)`);
console.log('| work | µs |');
console.log('|---|---:|');
for (const [name, values] of Object.entries(samples)) console.log(`| ${name} | ${median(values).toFixed(2)} |`);
