import { X509Certificate } from 'node:crypto';
import type { Signer } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import { afterEach, describe, expect, it } from 'vitest';

import { decodeNewCertificateRequest } from './certificate-request.js';
import { createIssuer } from './issuer.js';
import type { IssuingTaskRunner } from './issuer.js';
import { generateKeyAndCsr } from './key-and-csr.js';
import { createSignerDirectory } from './signer-directory.js';
import type { SignerEntry } from './signer-directory.js';
import { parseSigningPolicy } from './signing-policy-loader.js';
import { created } from './test-support/pem-signer-plugin.js';
import { provideWorkerIssuedHook } from './worker-issued-hook.js';
import type { WorkerIssuedCertificate } from './worker-issued-hook.js';
import { provideWorkerSigners, workerSignerSpecs, workerSigning } from './worker-signers.js';
import type { WorkerSignerSpec } from './worker-signers.js';

const pki = new TestPki();
const ca = pki.root({ CN: 'Worker Signing CA' }, { key: 'ecdsa-p256' });
const PLUGIN = new URL('./test-support/pem-signer-plugin.ts', import.meta.url).href;
const policy = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['digital signature', 'server auth'] }, profiles: { short: { expiry: '10m', usages: ['client auth'] } } } });

/** A main-thread signer that must never be asked to sign: the worker copy does it. */
function mainThreadSigner(): Signer & { signCalls: number } {
  const signer = {
    signCalls: 0,
    algorithms: ['ECDSA-SHA256' as const],
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    async sign(): Promise<Uint8Array> {
      signer.signCalls += 1;
      throw new Error('the main-thread signer was asked to sign');
    },
    close: async () => {},
  };
  return signer;
}

/** Tasks with worker semantics (inputs, results and errors cloned) on this thread, as the pool runs them. */
const runner = createInlineTaskRunner();
const tasks: IssuingTaskRunner = { runTask: (task, input) => runner.run(task, input) };

function harness(options: { failWith?: string } = {}) {
  const observed: { seconds: number; ok: boolean }[] = [];
  const main = mainThreadSigner();
  const entry: SignerEntry = {
    label: 'default',
    signer: main,
    policy,
    pluginName: 'test-pem-signer',
    workerRecipe: { module: PLUGIN, options: { certificatePem: ca.pem, keyPem: ca.key.pkcs8Pem, ...options }, configDir: '/' },
    observeWorkerSign: (seconds, ok) => observed.push({ seconds, ok }),
  };
  // Tasks run on this thread: it gets the spec directly, as the init hook gives it to a worker.
  // The module stays the TypeScript source here (vitest imports it), so no dist mapping.
  provideWorkerSigners([{ label: 'default', recipe: entry.workerRecipe!, policy }]);
  const issuer = createIssuer({ signers: createSignerDirectory([entry]), signatureSite: 'worker' });
  return { observed, main, issuer };
}

afterEach(() => {
  provideWorkerSigners(null);
  provideWorkerIssuedHook(null);
});

describe("createIssuer with signatureSite 'worker'", () => {
  it('newcert: the worker copy signs, the certificate verifies under the CA, and the signature is counted', async () => {
    const h = harness();
    const before = created.count;
    const issued = await h.issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'w.example', hosts: ['w.example'] }, profile: 'short' }), { tasks });
    const certificate = new X509Certificate(issued.certificatePem);
    expect(Buffer.from(issued.certificateDer).equals(certificate.raw)).toBe(true);
    expect(certificate.verify(new X509Certificate(ca.pem).publicKey)).toBe(true);
    expect(certificate.subjectAltName).toBe('DNS:w.example');
    // Profile `short` (10 minutes, client auth) was applied by the worker, from its copy of the policy.
    expect(new Date(certificate.validTo).getTime() - new Date(certificate.validFrom).getTime()).toBe(10 * 60_000);
    expect(certificate.keyUsage).toContain('1.3.6.1.5.5.7.3.2');
    expect(h.main.signCalls).toBe(0);
    expect(created.count).toBe(before + 1);
    expect(h.observed).toHaveLength(1);
    expect(h.observed[0]!.ok).toBe(true);
    expect(h.observed[0]!.seconds).toBeGreaterThan(0);
  });

  it('sign: the CSR is checked and the overrides applied by the worker copy', async () => {
    const h = harness();
    const { csrPem: csr } = await generateKeyAndCsr(decodeNewCertificateRequest({ request: { CN: 'csr.example', hosts: ['csr.example'] } }).request);
    const issued = await h.issuer.signCertificate({ certificate_request: csr, hosts: ['override.example', '192.0.2.7'] }, { tasks });
    const certificate = new X509Certificate(issued.certificatePem);
    expect(certificate.verify(new X509Certificate(ca.pem).publicKey)).toBe(true);
    expect(certificate.subjectAltName).toBe('DNS:override.example, IP Address:192.0.2.7');
    expect(h.main.signCalls).toBe(0);
    expect(h.observed.map((o) => o.ok)).toEqual([true]);
  });

  it('sign: a bad CSR keeps its CFSSL code across the worker and counts no signature', async () => {
    const h = harness();
    const failure = h.issuer.signCertificate({ certificate_request: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n' }, { tasks });
    const error = (await failure.then(() => null, (rejection: unknown) => rejection)) as { code: number };
    expect(error.code).toBeGreaterThanOrEqual(9000);
    expect(h.observed).toEqual([]);
  });

  it('a failing worker signer answers 2500 and is counted as a failed signature', async () => {
    const h = harness({ failWith: 'key gone' });
    await expect(h.issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'f.example', hosts: ['f.example'] } }), { tasks })).rejects.toMatchObject({ code: 2500 });
    expect(h.observed).toEqual([{ seconds: 0, ok: false }]);
  });

  it('an unknown profile is refused on the main thread (5400) before any worker signer is made', async () => {
    const h = harness();
    const before = created.count;
    await expect(h.issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'p.example', hosts: ['p.example'] }, profile: 'nope' }), { tasks })).rejects.toMatchObject({ code: 5400 });
    expect(created.count).toBe(before);
  });

  it("runs the worker's issued hook with the worker copy and hands its attachment to the record port, counting its signatures", async () => {
    const seen: WorkerIssuedCertificate[] = [];
    provideWorkerIssuedHook(async (issued) => {
      seen.push(issued);
      // A second signature with the worker's copy, as the first OCSP response is signed.
      const signature = await issued.signer.sign!(Uint8Array.of(1, 2, 3), 'ECDSA-SHA256');
      return { attachment: { label: issued.label, bytes: issued.certificateDer.length, signed: signature.length > 0 }, signSeconds: [0.000_5] };
    });
    const recorded: unknown[] = [];
    const h = harness();
    const issuer = createIssuer({ signers: h.issuer.signers, signatureSite: 'worker', recordIssued: async (record) => void recorded.push(record) });
    const newcert = await issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'hook.example', hosts: ['hook.example'] } }), { tasks });
    const { csrPem: csr } = await generateKeyAndCsr(decodeNewCertificateRequest({ request: { CN: 'csr.example', hosts: ['csr.example'] } }).request);
    const signed = await issuer.signCertificate({ certificate_request: csr }, { tasks });
    expect(seen.map((issued) => issued.label)).toEqual(['default', 'default']);
    // The same worker copy every time (a hook may prepare what it needs for it once), and never the main thread's.
    expect(seen[0]!.signer).toBe(seen[1]!.signer);
    expect(h.main.signCalls).toBe(0);
    expect(recorded).toEqual([
      expect.objectContaining({ label: 'default', certificatePem: newcert.certificatePem, attachment: { label: 'default', bytes: newcert.certificateDer.length, signed: true } }),
      expect.objectContaining({ label: 'default', certificatePem: signed.certificatePem, attachment: { label: 'default', bytes: signed.certificateDer.length, signed: true } }),
    ]);
    // Per certificate: its own signature, then the hook's.
    expect(h.observed.map((o) => o.seconds > 0 && o.ok)).toEqual([true, true, true, true]);
    expect(h.observed[1]!.seconds).toBe(0.000_5);
  });

  it("a failing issued hook fails the request with the hook's code and records nothing", async () => {
    provideWorkerIssuedHook(() => {
      throw Object.assign(new Error('signer "default" failed'), { code: 2500 });
    });
    const recorded: unknown[] = [];
    const h = harness();
    const issuer = createIssuer({ signers: h.issuer.signers, signatureSite: 'worker', recordIssued: async (record) => void recorded.push(record) });
    await expect(issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'x.example', hosts: ['x.example'] } }), { tasks })).rejects.toMatchObject({ code: 2500 });
    expect(recorded).toEqual([]);
  });

  it('a label without a spec is a wiring error, not a silent main-thread fallback', async () => {
    provideWorkerSigners([]);
    await expect(workerSigning('default')).rejects.toThrow(/no signer for label "default"/);
  });
});

describe('workerSignerSpecs', () => {
  it('lists only entries with a recipe, with the plugin module mapped to built JavaScript', () => {
    const main = mainThreadSigner();
    const specs: WorkerSignerSpec[] = workerSignerSpecs([
      { label: 'default', signer: main, policy, workerRecipe: { module: 'file:///repo/plugins/x/src/index.ts', options: { a: 1 }, configDir: '/etc' } },
      { label: 'hsm', signer: main, policy },
    ]);
    expect(specs).toHaveLength(1);
    expect(specs[0]).toMatchObject({ label: 'default', recipe: { module: 'file:///repo/plugins/x/dist/index.js', options: { a: 1 }, configDir: '/etc' } });
    // Specs cross into workers by structured clone: the policy (RegExps, Maps, bytes) must survive it.
    const cloned = structuredClone(specs[0]!);
    expect(cloned.policy.profiles.get('short')?.expiry).toBe(10 * 60_000);
  });
});
