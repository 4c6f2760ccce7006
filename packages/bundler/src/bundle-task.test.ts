import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { TestPki, chainPem, trimmedPem } from '@certsmith/test-pki';
import { isCodedError } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import type { BundleContextConfig } from './bundle-context.js';
import { bundleJsonTask, bundleTask } from './bundle-task.js';

const pki = new TestPki();
const root = pki.root('Task Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Task Inter', root, { key: 'ecdsa-p256' });
const leaf = pki.leaf('task.example.com', inter, { key: 'ecdsa-p256', ips: ['192.0.2.1'] });
const learnedInter = pki.intermediate('Task Learned Inter', root, { key: 'ecdsa-p256' });
const learnedLeaf = pki.leaf('learned.example.com', learnedInter, { key: 'ecdsa-p256' });

let dir: string;
let context: BundleContextConfig;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bundle-task-'));
  await writeFile(join(dir, 'roots.pem'), root.pem);
  await writeFile(join(dir, 'inters.pem'), inter.pem);
  context = { caBundleFile: join(dir, 'roots.pem'), intBundleFile: join(dir, 'inters.pem'), aia: false };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('bundleTask.run', () => {
  it('bundles against the trust files named in the context config', async () => {
    const result = await bundleTask.run({ context, request: { certificatePem: leaf.pem } });
    expect(result).toMatchObject({
      bundle: chainPem(leaf, inter).trim(),
      root: trimmedPem(root),
      crt: trimmedPem(leaf),
      status: { rebundled: true, untrusted_root_stores: [], code: 2 },
    });
    // No metadata file and a ca-bundle: no platforms, as `cfssl serve` without -metadata.
    expect(result.status.messages).toContain('Unable to measure bundle ubiquity: No platform metadata present.');
  });

  it('keeps the loaded context between runs, with what it learned', async () => {
    // Not in the int-bundle: unknown until a request supplies it.
    await expect(bundleTask.run({ context, request: { certificatePem: learnedLeaf.pem } })).rejects.toMatchObject({ code: 1220 });
    await bundleTask.run({ context, request: { certificatePem: chainPem(learnedLeaf, learnedInter) } });
    const later = await bundleTask.run({ context: { ...context }, request: { certificatePem: learnedLeaf.pem } });
    expect(later.bundle).toBe(chainPem(learnedLeaf, learnedInter).trim());
  });

  it('rejects with the coded error of the use case', async () => {
    await expect(bundleTask.run({ context, request: { certificatePem: 'garbage' } })).rejects.toMatchObject({
      code: 1002,
      message: 'Failed to decode certificate',
    });
    await expect(bundleTask.run({ context, request: { certificatePem: leaf.pem, ip: '10.0.0.1' } })).rejects.toMatchObject({
      code: 1200,
      message: 'x509: certificate is valid for 192.0.2.1, not 10.0.0.1',
    });
  });

  it('rejects with the load error of the context when a trust file is missing', async () => {
    await expect(
      bundleTask.run({ context: { caBundleFile: join(dir, 'absent.pem'), aia: false }, request: { certificatePem: leaf.pem } }),
    ).rejects.toMatchObject({ code: 4001 });
  });

  it('crosses the worker boundary as plain data (inline runner: structured clone, error payloads)', async () => {
    const runner = createInlineTaskRunner({ tasks: [bundleTask] });
    const result = await runner.run(bundleTask, { context, request: { certificatePem: leaf.pem, flavor: 'optimal' } });
    expect(result.crt).toBe(trimmedPem(leaf));
    await expect(runner.run(bundleTask, { context, request: { certificatePem: leaf.key.pkcs8Pem } })).rejects.toMatchObject({ code: 1003 });
  });

  it('only reads its input, as its readsInputOnly declaration promises (a frozen input runs)', async () => {
    expect([bundleTask.readsInputOnly, bundleJsonTask.readsInputOnly]).toEqual([true, true]);
    const frozen = <T>(value: T): T => {
      if (value !== null && typeof value === 'object') {
        for (const child of Object.values(value)) frozen(child);
        Object.freeze(value);
      }
      return value;
    };
    // A config not loaded yet (its own key), with every kind of field, so the load reads it too.
    const config = frozen({ ...context, aia: { timeoutMs: 1000 }, network: { allowPrivateNetworks: false, allowCidrs: ['192.0.2.0/24'] } });
    const requests = [
      { certificatePem: chainPem(leaf, inter), privateKeyPem: leaf.key.pkcs8Pem, flavor: 'force', domain: 'task.example.com', ip: '192.0.2.1' },
      { certificatePem: leaf.pem, flavor: 'optimal' },
      { certificatePem: leaf.pem, ip: '10.0.0.1' },
      { certificatePem: 'garbage' },
    ];
    for (const request of requests) {
      const input = frozen({ context: config, request });
      const [object, text] = await Promise.allSettled([bundleTask.run(input), bundleJsonTask.run(input)]);
      // Failing by the use case's codes, never by a TypeError from a write to the frozen input.
      for (const outcome of [object, text]) if (outcome.status === 'rejected') expect(isCodedError(outcome.reason)).toBe(true);
    }
  });

  it('answers every certificate-mode input with a result or a CFSSL-coded error (fuzz)', async () => {
    /** `valid` with a few characters overwritten, optionally cut short. */
    const mangled = (valid: string) =>
      fc
        .tuple(fc.nat(valid.length), fc.nat(valid.length), fc.string({ minLength: 0, maxLength: 8 }))
        .map(([at, cut, insert]) => (valid.slice(0, at) + insert + valid.slice(at + insert.length)).slice(0, Math.max(cut, at)));
    const armoured = (label: string) =>
      fc
        .uint8Array({ minLength: 0, maxLength: 600 })
        .map((bytes) => `-----BEGIN ${label}-----\n${Buffer.from(bytes).toString('base64')}\n-----END ${label}-----\n`);
    const chain = chainPem(leaf, inter);
    const request = fc.record(
      {
        certificatePem: fc.oneof(fc.string({ maxLength: 64 }), mangled(chain), armoured('CERTIFICATE'), armoured('PKCS7'), fc.constant(chain)),
        privateKeyPem: fc.oneof(
          fc.constant(''),
          fc.string({ maxLength: 32 }),
          fc.constant(leaf.key.pkcs8Pem),
          mangled(leaf.key.pkcs8Pem),
          mangled(leaf.key.traditionalPem),
          armoured('PRIVATE KEY'),
          armoured('EC PRIVATE KEY'),
        ),
        flavor: fc.constantFrom('', 'ubiquitous', 'optimal', 'force', 'bogus'),
        domain: fc.oneof(fc.constant(''), fc.domain(), fc.string({ maxLength: 16 })),
        ip: fc.oneof(fc.constant(''), fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 16 })),
      },
      { requiredKeys: ['certificatePem'] },
    );
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        try {
          const result = await bundleTask.run({ context, request: input });
          expect(result.crt).toMatch(/^-----BEGIN CERTIFICATE-----/);
        } catch (error) {
          expect(isCodedError(error), String(error)).toBe(true);
          expect((error as { code: number }).code).toBeGreaterThanOrEqual(1000);
        }
      }),
      { numRuns: 300, seed: 20261122 },
    );
  });
});
