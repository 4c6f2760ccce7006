#!/usr/bin/env node
/**
 * Pool-size benchmark for @certsmith/chain-builder: does verifying a certificate cost more when
 * the intermediate pool is 10x larger? Issuer candidates come from hash indexes (subject DER, SKI),
 * so it must not.
 *
 *   npx tsc -b tsconfig.json && node --expose-gc tools/bench/chain-builder/pool-size.bench.mjs [--extra 12000] [--rounds 7]
 *
 * Workload: every certificate of cfssl_trust's int-bundle.crt (1,263) that verifies against
 * ca-bundle.crt is verified as a "leaf" (real chains of depth 2–4) against
 *   A) roots + the 1,263 real intermediates,
 *   B) the same plus ≥12,000 generated intermediates (distinct subjects, valid signatures).
 * Reported: cold pass (fresh pools: signature checks and KeyObject creation included) and warm
 * passes (signature results cached); CPU time per verification, median of the rounds,
 * A and B interleaved round by round.
 */
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { CertificatePool, verifyChains } from '@certsmith/chain-builder';
import {
  derBitString,
  derBoolean,
  derExplicit,
  derInteger,
  derOctetString,
  derOid,
  derSequence,
  derSetOf,
  derTime,
  derUtf8String,
  parseCertificate,
  parseCertificates,
} from '@certsmith/x509-core';
import { readBenchOptions } from '../bench-options.mjs';

const options = readBenchOptions(import.meta.url, {
  // 0 is allowed: B is then A again, a check of the harness itself.
  extra: { type: 'integer', default: 12_000, min: 0 },
  rounds: { type: 'integer', default: 7, min: 1 },
}, { nodeFlags: '--expose-gc' });
const EXTRA = options.extra;
const ROUNDS = options.rounds;
const TRUST = new URL('../../../../shared/trust/', import.meta.url);
const now = new Date('2026-11-22T12:00:00Z');

const rootCerts = parseCertificates(readFileSync(new URL('ca-bundle.crt', TRUST), 'utf8'));
const intCerts = parseCertificates(readFileSync(new URL('int-bundle.crt', TRUST), 'utf8'));

/** Generated CA certificates: one P-256 key, one bench root, distinct subjects. */
function generateIntermediates(count) {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  const algId = derSequence(derOid('1.2.840.10045.4.3.2'));
  const name = (cn) => derSequence(derSetOf([derSequence(derOid('2.5.4.3'), derUtf8String(cn))]));
  const issuer = name('certsmith bench root');
  const validity = derSequence(derTime(new Date('2026-01-01T00:00:00Z')), derTime(new Date('2029-01-01T00:00:00Z')));
  const basicConstraints = derSequence(derOid('2.5.29.19'), derBoolean(true), derOctetString(derSequence(derBoolean(true))));
  const certs = [];
  for (let i = 0; i < count; i++) {
    const ski = createHash('sha1').update(`bench-${i}`).digest();
    const extensions = derExplicit(3, derSequence(basicConstraints, derSequence(derOid('2.5.29.14'), derOctetString(derOctetString(ski)))));
    const tbs = derSequence(derExplicit(0, derInteger(2)), derInteger(BigInt(i + 1)), algId, issuer, validity, name(`certsmith bench intermediate ${i}`), spki, extensions);
    const signature = new Uint8Array(sign('sha256', tbs, privateKey));
    certs.push(parseCertificate(derSequence(tbs, algId, derBitString(signature))));
  }
  return certs;
}

function makePools(extra) {
  return { roots: new CertificatePool(rootCerts), intermediates: new CertificatePool([...intCerts, ...extra]) };
}

function pass(pools, leaves, repeat = 1) {
  globalThis.gc?.(); // with --expose-gc: start every pass from a collected heap
  // CPU time, not wall time: on a shared machine a descheduled thread would otherwise show up as
  // "slower" at random. (This script is single-threaded; GC helper threads count too, which is fair.)
  const started = process.cpuUsage();
  let chains = 0;
  for (let i = 0; i < repeat; i++) {
    chains = 0;
    for (const leaf of leaves) chains += verifyChains(leaf, pools, { now }).chains.length;
  }
  const used = process.cpuUsage(started);
  return { ms: (used.user + used.system) / 1000 / repeat, chains };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const generatedStarted = performance.now();
const extra = generateIntermediates(EXTRA);
const generatedMs = performance.now() - generatedStarted;

const leaves = intCerts.filter((cert) => verifyChains(cert, makePools([]), { now }).result);

// Interleave A and B in every round so background load and GC drift hit both alike.
const configs = [
  { label: 'A', extra: [], cold: [], warm: [] },
  { label: 'B', extra, cold: [], warm: [] },
];
for (const config of configs) {
  config.warmPools = makePools(config.extra);
  pass(config.warmPools, leaves); // JIT warm-up and signature cache fill
  pass(makePools(config.extra), leaves);
}
let chainCounts = [0, 0];
for (let r = 0; r < ROUNDS; r++) {
  configs.forEach((config, i) => {
    config.cold.push(pass(makePools(config.extra), leaves).ms);
    // A warm pass is ~20 ms; repeat it so each sample is long enough to average out interference.
    const warm = pass(config.warmPools, leaves, 20);
    config.warm.push(warm.ms);
    chainCounts[i] = warm.chains;
  });
}
const rows = configs.map((config, i) => ({
  pool: `${config.label}: ${config.warmPools.intermediates.size} intermediates`,
  cold: (median(config.cold) / leaves.length) * 1000,
  warm: (median(config.warm) / leaves.length) * 1000,
  chains: chainCounts[i],
}));
console.log(`node ${process.version}, ${leaves.length} verifications per pass, ${EXTRA} generated intermediates (${generatedMs.toFixed(0)} ms to generate)`);
console.log('| pool | cold µs/verify | warm µs/verify | chains found |');
console.log('|---|---:|---:|---:|');
for (const row of rows) console.log(`| ${row.pool} | ${row.cold.toFixed(1)} | ${row.warm.toFixed(1)} | ${row.chains} |`);
const coldDelta = ((rows[1].cold - rows[0].cold) / rows[0].cold) * 100;
const warmDelta = ((rows[1].warm - rows[0].warm) / rows[0].warm) * 100;
const signed = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}%`;
console.log(`B vs A: cold ${signed(coldDelta)}, warm ${signed(warmDelta)}`);
if (rows[0].chains !== rows[1].chains) {
  console.error('chain counts differ between pools: the generated certificates must not change results');
  process.exitCode = 1;
}
