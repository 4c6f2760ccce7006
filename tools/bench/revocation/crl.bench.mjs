#!/usr/bin/env node
/**
 * CRL generation at scale (issue 21: 100,000 revoked certificates in < 2 s with bounded memory).
 * Run after `npm run build`, through /work/bin/quiet on the shared machine:
 *
 *   node --expose-gc tools/bench/revocation/crl.bench.mjs [--entries 100000] [--rounds 3]
 *
 * For an RSA-2048 and an ECDSA P-256 CA (made by the openssl CLI, signed through the signer
 * contract like any signer), builds a CRL whose entries come one at a time from an async generator
 * (how a store cursor delivers rows): 20-byte random serials as CFSSL's decimal text (made before
 * timing), a revocation time and a reason (every third unspecified). Reports wall and process CPU time per build (median of
 * the rounds), the CRL size, and the memory growth while building (peak of heapUsed + arrayBuffers
 * sampled every 1,000 entries, minus the baseline after a GC) next to the CRL size: bounded memory
 * means a small constant times the output, never per-entry objects. The last CRL of each CA is
 * checked with `openssl crl -CAfile … -noout` (not timed).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrivateKey } from 'node:crypto';
import { readBenchOptions } from '../bench-options.mjs';

// Read before the packages load and the CA keys are made: `--help` and a bad option need no build and cost nothing.
const { entries, rounds } = readBenchOptions(import.meta.url, {
  entries: { type: 'integer', default: 100_000, min: 1 },
  // At least one timed round after the warm-up: the medians need one.
  rounds: { type: 'integer', default: 3, min: 1 },
}, { nodeFlags: '--expose-gc' });

const here = fileURLToPath(new URL('.', import.meta.url));
const { buildCrl, createRevocationSigner } = await import(join(here, '../../../packages/revocation/dist/index.js'));
const { algorithmsForKeyObject, signWithKeyObject } = await import(join(here, '../../../packages/signer-api/dist/index.js'));
const { decodePemBlock } = await import(join(here, '../../../packages/x509-core/dist/index.js'));
const gc = globalThis.gc ?? (() => {});

const dir = mkdtempSync(join(tmpdir(), 'crl-bench-'));
function makeCa(name, keyArgs) {
  execFileSync('openssl', ['req', '-x509', ...keyArgs, '-nodes', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.pem`),
    '-subj', `/O=certsmith bench/CN=${name} CA`, '-days', '30', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-addext', 'subjectKeyIdentifier=hash'], { stdio: 'ignore' });
  const pem = readFileSync(join(dir, `${name}.pem`), 'utf8');
  const key = createPrivateKey(readFileSync(join(dir, `${name}.key`)));
  return {
    file: join(dir, `${name}.pem`),
    signer: {
      algorithms: algorithmsForKeyObject(key),
      getCertificate: async () => ({ der: decodePemBlock(pem).block.bytes, pem }),
      sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
      close: async () => {},
    },
  };
}

/** CFSSL-style serials (20 random bytes as decimal text), made before timing: the store's job, not the builder's. */
const serials = Array.from({ length: entries }, () => BigInt(`0x${randomBytes(20).toString('hex')}`).toString(10));

/** Rows as a store cursor yields them (one object per row, async); samples memory every 1,000 rows. */
async function* rows(count, sample) {
  const revokedAt = new Date();
  for (let i = 0; i < count; i++) {
    if (i % 1000 === 0) sample();
    yield { serial: serials[i], revokedAt, reason: i % 3 === 0 ? 0 : (i % 6) + 1 };
  }
}

function memory() {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const results = [];
try {
  for (const [name, keyArgs] of [['RSA-2048', ['-newkey', 'rsa:2048']], ['ECDSA-P256', ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256']]]) {
    const ca = makeCa(name, keyArgs);
    const issuer = await createRevocationSigner(ca.signer);
    const walls = [];
    const cpuTimes = [];
    const growths = [];
    let crl;
    for (let round = 0; round < rounds + 1; round++) {
      crl = undefined;
      gc();
      const baseline = memory();
      let peak = baseline;
      const sample = () => {
        const now = memory();
        if (now > peak) peak = now;
      };
      const cpu = process.cpuUsage();
      const start = performance.now();
      crl = await buildCrl({ issuer, crlNumber: BigInt(round + 1), nextUpdate: new Date(Date.now() + 7 * 86_400_000), revoked: rows(entries, sample) });
      const wall = performance.now() - start;
      const used = process.cpuUsage(cpu);
      sample();
      if (round === 0) continue; // warm-up
      walls.push(wall);
      cpuTimes.push((used.user + used.system) / 1000);
      growths.push(peak - baseline);
    }
    const crlFile = join(dir, `${name}.crl`);
    writeFileSync(crlFile, crl.der);
    let verified;
    try {
      verified = execFileSync('openssl', ['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', ca.file, '-noout'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      verified = 'verify OK';
    } catch (error) {
      verified = `FAILED: ${String(error.stderr ?? error)}`;
    }
    results.push({
      ca: name,
      entries: crl.entryCount,
      'wall ms (median)': median(walls).toFixed(0),
      'CPU ms (median)': median(cpuTimes).toFixed(0),
      'CRL MB': (crl.der.length / 1e6).toFixed(2),
      'memory growth MB (max)': (Math.max(...growths) / 1e6).toFixed(1),
      'growth ÷ CRL size': (Math.max(...growths) / crl.der.length).toFixed(1),
      openssl: verified,
    });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`CRL bench: ${entries} entries, ${rounds} rounds after a warm-up, Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}`);
console.table(results);
