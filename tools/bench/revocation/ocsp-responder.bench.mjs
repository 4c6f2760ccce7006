#!/usr/bin/env node
/**
 * CPU cost of the transport-independent OCSP responder core per request (issue 21: the server's
 * responder must answer ≥ 3× `cfssl ocspserve`'s requests per second; the HTTP part is measured by
 * the server's cell in tools/bench/compare once it is wired). Run after `npm run build`:
 *
 *   node tools/bench/revocation/ocsp-responder.bench.mjs [--responses 10000] [--requests 200000]
 *
 * Pre-signs `--responses` responses (ECDSA P-256 CA, SHA-1 CertIDs, as stored by ocsprefresh) into
 * an in-memory source, then answers `--requests` requests for random serials through
 * `OcspResponder.handle`: POST (DER body), GET (base64 path) and, as the first request of each
 * certificate costs, answers from raw stored DER (prepared on first use). Reports µs of process CPU
 * and wall time per request (one thread, no HTTP).
 */
import { execFileSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';

// Read before the packages load and the CA key is made: `--help` and a bad option need no build and cost nothing.
const options = readBenchOptions(import.meta.url, {
  // At least one: requests pick their serial modulo the number of responses.
  responses: { type: 'integer', default: 10_000, min: 1 },
  // At least one: the results are per request.
  requests: { type: 'integer', default: 200_000, min: 1 },
});
const responseCount = options.responses;
const requestCount = options.requests;

const here = fileURLToPath(new URL('.', import.meta.url));
const revocation = await import(join(here, '../../../packages/revocation/dist/index.js'));
const { algorithmsForKeyObject, signWithKeyObject } = await import(join(here, '../../../packages/signer-api/dist/index.js'));
const { decodePemBlock, derSequence, derTlv, Tag } = await import(join(here, '../../../packages/x509-core/dist/index.js'));

const dir = mkdtempSync(join(tmpdir(), 'ocsp-bench-'));
let pem;
let key;
try {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', join(dir, 'ca.key'), '-out', join(dir, 'ca.pem'),
    '-subj', '/O=certsmith bench/CN=OCSP bench CA', '-days', '30', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-addext', 'subjectKeyIdentifier=hash'], { stdio: 'ignore' });
  pem = readFileSync(join(dir, 'ca.pem'), 'utf8');
  key = createPrivateKey(readFileSync(join(dir, 'ca.key')));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const signer = await revocation.createRevocationSigner({
  algorithms: algorithmsForKeyObject(key),
  getCertificate: async () => ({ der: decodePemBlock(pem).block.bytes, pem }),
  sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
  close: async () => {},
});
const identity = revocation.createOcspSigningIdentity({ signer });

const signStart = performance.now();
const raw = new Map();
const prepared = new Map();
const validity = revocation.ocspValidity(new Date());
for (let serial = 1; serial <= responseCount; serial++) {
  const { der } = await revocation.buildOcspResponse({ identity, serialNumber: BigInt(serial) * 7919n, status: serial % 10 === 0 ? 'revoked' : 'good', revokedAt: new Date(), reason: 1, ...validity });
  raw.set(String(BigInt(serial) * 7919n), der);
  prepared.set(String(BigInt(serial) * 7919n), revocation.prepareOcspResponse(der));
}
const signMs = performance.now() - signStart;

function request(serial) {
  const certId = revocation.encodeCertId('SHA1', identity.issuerHashes('SHA1'), revocation.integerContent(serial));
  return derSequence(derSequence(derSequence(derSequence(certId))));
}
const requests = Array.from({ length: 4096 }, (_, i) => request(BigInt((i * 2654435761) % responseCount + 1) * 7919n));
const getPaths = requests.map((der) => `/ocsp/${encodeURIComponent(Buffer.from(der).toString('base64'))}`);

async function measure(name, responder, makeRequest) {
  for (let i = 0; i < 20_000; i++) await responder.handle(makeRequest(i)); // warm-up
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < requestCount; i++) {
    const answer = await responder.handle(makeRequest(i));
    if (answer.status !== 200) throw new Error(`${name}: status ${answer.status}`);
  }
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { case: name, 'CPU µs/request': (((used.user + used.system) / requestCount)).toFixed(2), 'wall µs/request': ((wall * 1000) / requestCount).toFixed(2), 'requests/s (1 thread)': Math.round(requestCount / (wall / 1000)) };
}

const preparedSource = { find: (lookup) => prepared.get(lookup.serial) ?? null };
const rawSource = { find: (lookup) => raw.get(lookup.serial) ?? null };
const freshRawSource = { find: (lookup) => { const der = raw.get(lookup.serial); return der ? Uint8Array.from(der) : null; } };
const results = [
  await measure('POST, prepared responses (file source, server cache)', new revocation.OcspResponder({ source: preparedSource }), (i) => ({ method: 'POST', path: '/ocsp', body: requests[i & 4095] })),
  await measure('GET /ocsp/<base64>, prepared responses', new revocation.OcspResponder({ source: preparedSource, path: '/ocsp' }), (i) => ({ method: 'GET', path: getPaths[i & 4095] })),
  await measure('POST, raw DER (same buffers: prepared once)', new revocation.OcspResponder({ source: rawSource }), (i) => ({ method: 'POST', path: '/', body: requests[i & 4095] })),
  await measure('POST, raw DER copied per request (uncached store read)', new revocation.OcspResponder({ source: freshRawSource }), (i) => ({ method: 'POST', path: '/', body: requests[i & 4095] })),
];
console.log(`OCSP responder core: ${responseCount} responses pre-signed in ${(signMs / 1000).toFixed(1)} s; ${requestCount} requests per case; Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}`);
console.table(results);
