#!/usr/bin/env node
/**
 * CPU per bundle request of the use case alone — what the `bundle-generated` cell of
 * tools/bench/compare spends in @certsmith/bundler, without HTTP — and the pieces
 * docs/performance.md#bundle-cpu-per-request keeps hand-written code for:
 *
 *   npm run build && node tools/bench/bundle/bundle-request.bench.mjs [--base DIR] [--rounds 9] [--requests 5000]
 *
 * Workload: the comparison benchmark's generated PKI (ECDSA root → intermediate → leaf; the root
 * added to cfssl_trust's ca-bundle, cfssl_trust's int-bundle and metadata, read by path), and the
 * request `{certificate: leaf + intermediate}` run through the `bundle.json` worker task as the
 * server runs it (JSON body parsed, the context config arriving as a fresh copy as from the worker
 * pool, bundled, result written as JSON text). With `--base`, the same
 * requests also run against another checkout's built packages (e.g. a worktree of main). Each round
 * of each checkout is a fresh process (`--child`: warm-up, then the measured requests), the
 * checkouts alternating round by round so both see the same machine. Reported: process CPU µs per
 * request (GC included), median of the rounds; then per piece, this checkout only.
 */
import { hash, createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readBenchOptions } from '../bench-options.mjs';
import { generateBenchPki, writeTrustFiles } from '../compare/pki.mjs';

const here = fileURLToPath(new URL('../../..', import.meta.url));
const options = readBenchOptions(import.meta.url, {
  base: { type: 'string', value: 'DIR', check: (dir) => (existsSync(join(dir, 'packages/bundler/dist/index.js')) ? undefined : `no built packages/bundler in ${dir}`) },
  rounds: { type: 'integer', default: 9, min: 1 },
  requests: { type: 'integer', default: 5000, min: 1 },
  'trust-dir': { type: 'string', default: '/work/shared/trust' },
  child: { type: 'string', value: 'DIR' },
});

const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

if (options.child !== undefined) {
  // One round of one checkout in a fresh process: warm-up (context loaded, intermediate learned,
  // code optimised), then the measured requests; prints CPU µs per request.
  const context = JSON.parse(process.env.BUNDLE_BENCH_CONTEXT);
  const body = process.env.BUNDLE_BENCH_BODY;
  const bundler = await import(pathToFileURL(join(options.child, 'packages/bundler/dist/index.js')).href);
  // As the bundle operation sends it; checkouts before `bundleContextKey` have the worker derive it.
  const contextKey = bundler.bundleContextKey?.(context);
  const run = async (count) => {
    for (let i = 0; i < count; i++) {
      const request = JSON.parse(body);
      await bundler.bundleJsonTask.run({ context: structuredClone(context), contextKey, request: { certificatePem: request.certificate } });
    }
  };
  await run(options.requests);
  const before = cpuMicros();
  await run(options.requests);
  console.log((cpuMicros() - before) / options.requests);
  process.exit(0);
}

const workDir = mkdtempSync(join(tmpdir(), 'bundle-request-bench-'));
try {
  const pki = generateBenchPki();
  const trust = writeTrustFiles({ dir: workDir, trustDir: options['trust-dir'], pki });
  const context = { caBundleFile: trust.caBundle, intBundleFile: trust.intBundle, metadataFile: trust.metadata };
  const body = JSON.stringify({ certificate: pki.leaf.pem + pki.intermediate.pem });

  const checkouts = [{ name: 'this checkout', dir: here, cpu: [] }];
  if (options.base !== undefined) checkouts.push({ name: `base ${options.base}`, dir: resolve(options.base), cpu: [] });
  for (let round = 0; round < options.rounds; round++) {
    for (const checkout of checkouts) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', checkout.dir, '--requests', String(options.requests)], {
        env: { ...process.env, BUNDLE_BENCH_CONTEXT: JSON.stringify(context), BUNDLE_BENCH_BODY: body },
        encoding: 'utf8',
      });
      if (child.status !== 0) throw new Error(`child for ${checkout.dir} failed: ${child.stderr}`);
      checkout.cpu.push(Number(child.stdout.trim()));
    }
  }
  console.log(`bundle request (leaf + intermediate, bundle.json task), ${options.rounds} rounds × ${options.requests} requests, CPU µs per request (median; all rounds)`);
  for (const checkout of checkouts) {
    console.log(`  ${checkout.name.padEnd(40)} ${median(checkout.cpu).toFixed(1).padStart(6)}   (${checkout.cpu.map((v) => v.toFixed(1)).join(' ')})`);
  }

  // The pieces, this checkout only: the hand-written code against what it replaces.
  const piece = (fn, count = 20_000) => {
    for (let i = 0; i < count; i++) fn();
    const cpu = [];
    for (let round = 0; round < options.rounds; round++) {
      const before = cpuMicros();
      for (let i = 0; i < count; i++) fn();
      cpu.push(((cpuMicros() - before) / count) * 1000);
    }
    return median(cpu);
  };
  const { bundleCertificate, loadBundleContext } = await import(pathToFileURL(join(here, 'packages/bundler/dist/index.js')).href);
  const { bundleResultJson } = await import(pathToFileURL(join(here, 'packages/bundler/dist/bundle-result-json.js')).href);
  const { parseCertificates } = await import(pathToFileURL(join(here, 'packages/x509-core/dist/index.js')).href);
  const result = await bundleCertificate({ certificatePem: pki.leaf.pem + pki.intermediate.pem }, await loadBundleContext(context));
  if (bundleResultJson(result) !== JSON.stringify(result)) throw new Error('bundleResultJson differs from JSON.stringify');
  const leaf = parseCertificates(pki.leaf.pem)[0];
  const rows = [
    ['result as JSON: JSON.stringify', piece(() => JSON.stringify(result))],
    ['result as JSON: bundleResultJson', piece(() => bundleResultJson(result))],
    ['SHA-256 fingerprint: createHash().update().digest()', piece(() => createHash('sha256').update(leaf.der).digest('base64'))],
    ['SHA-256 fingerprint: crypto.hash()', piece(() => hash('sha256', leaf.der, 'base64'))],
  ];
  console.log(`pieces, CPU ns per call (median of ${options.rounds} rounds)`);
  for (const [name, ns] of rows) console.log(`  ${name.padEnd(52)} ${ns.toFixed(0).padStart(6)}`);
} finally {
  rmSync(workDir, { recursive: true, force: true });
}
