/**
 * `certsmith serve --workers 0` end to end: the built server with no worker thread (every task on its
 * event loop — the layout of each worker process of `serve --processes`, ADR 0004), a local-key CA
 * made by openssl, the shared cfssl_trust data (extended with the test root and intermediate) and the
 * default SQLite store. It bundles, issues ECDSA and RSA certificates, signs a CSR, and reports a
 * pool of 0 threads in its log and its metrics. Certificates are checked with `openssl verify`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { TRUST_FILES, writeExtendedBundle } from './helpers/trust-dir.js';
import { TLS_USAGES, createScratch, makeCsr, makeIntermediateCa, makeRootCa, post, verifyCertificate } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';

let scratch: Scratch;
let root: OpensslCa;
let issuing: OpensslCa;
let server: CertsmithProcess;
let url: string;

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;

beforeAll(async () => {
  scratch = await createScratch('threadless');
  root = await makeRootCa(scratch, 'root', 'Threadless Root');
  issuing = await makeIntermediateCa(scratch, 'issuing', root);
  const config = await scratch.write('certsmith.json', {
    signing: { default: { expiry: '8760h', usages: TLS_USAGES } },
    signers: { default: { plugin: '@certsmith/signer-local', options: { certFile: 'issuing.pem', keyFile: 'file:issuing-key.pem' } } },
  });
  const caBundle = await writeExtendedBundle(TRUST_FILES.caBundle, [root.certificatePem], scratch.path('ca-bundle.crt'));
  const intBundle = await writeExtendedBundle(TRUST_FILES.intBundle, [issuing.certificatePem], scratch.path('int-bundle.crt'));
  // prettier-ignore
  server = spawnCertsmith([
    // One process: the test is about one serving process without threads (the pool gauges of
    // several processes add up in /metrics).
    'serve', '--port', '0', '--processes', '1', '--workers', '0', '--config', config, '--data-dir', scratch.path('data'),
    '--ca-bundle', caBundle, '--int-bundle', intBundle, '--metadata', TRUST_FILES.metadata,
  ]);
  url = LISTENING.exec(await server.waitForLine((line) => LISTENING.test(line), 30_000))![1]!;
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('certsmith serve --workers 0', () => {
  it('says it runs without worker threads and is healthy', async () => {
    const listening = parseLogLine(await server.waitForLine((line) => parseLogLine(line)?.['msg'] === 'listening', 10_000));
    expect(listening).toMatchObject({ workers: 0, store: 'sqlite3' });
    const health = await fetch(`${url}/api/v1/cfssl/health`, { signal: AbortSignal.timeout(10_000) });
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ success: true, result: { healthy: true, signers: { default: { healthy: true } } } });
  });

  it('issues ECDSA and RSA certificates on its event loop, and bundles one with the trust files', async () => {
    const [ecdsa, rsa] = await Promise.all([
      post(url, 'newcert', { request: { CN: 'ecdsa.threadless.example', hosts: ['ecdsa.threadless.example'], key: { algo: 'ecdsa', size: 256 } } }),
      post(url, 'newcert', { request: { CN: 'rsa.threadless.example', hosts: ['rsa.threadless.example'], key: { algo: 'rsa', size: 2048 } } }),
    ]);
    for (const { status, envelope } of [ecdsa, rsa]) {
      expect(status).toBe(200);
      expect(envelope.success).toBe(true);
      expect(await verifyCertificate(scratch, envelope.result.certificate, root.certFile, issuing.certFile)).toMatch(/: OK\n$/);
    }
    expect(ecdsa.envelope.result.private_key).toContain('BEGIN EC PRIVATE KEY');
    expect(rsa.envelope.result.private_key).toContain('BEGIN RSA PRIVATE KEY');

    const bundled = await post(url, 'bundle', { certificate: ecdsa.envelope.result.certificate });
    expect(bundled.status).toBe(200);
    expect(bundled.envelope.success).toBe(true);
    // The chain goes leaf → issuing (from --int-bundle), up to the test root (from --ca-bundle).
    expect(bundled.envelope.result.bundle).toContain(issuing.certificatePem.trim().split('\n')[1]);
    expect(bundled.envelope.result.root).toContain(root.certificatePem.trim().split('\n')[1]);
  });

  it('signs a CSR', async () => {
    const { csrPem } = await makeCsr(scratch, 'signed', 'signed.threadless.example');
    const { status, envelope } = await post(url, 'sign', { certificate_request: csrPem, hosts: ['signed.threadless.example'] });
    expect(status).toBe(200);
    expect(await verifyCertificate(scratch, envelope.result.certificate, root.certFile, issuing.certFile)).toMatch(/: OK\n$/);
  });

  it('reports a pool of 0 threads and the tasks it ran in /metrics', async () => {
    const response = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
    expect(response.status).toBe(200);
    const text = await response.text();
    const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1]);
    expect(value(/^certsmith_worker_pool_threads (\S+)$/m)).toBe(0);
    expect(value(/^certsmith_worker_pool_max_queue (\S+)$/m)).toBe(64);
    expect(value(/^certsmith_worker_pool_queue_depth (\S+)$/m)).toBe(0);
    expect(value(/^certsmith_worker_tasks_total\{task="issue.newcert-in-worker",outcome="success"\} (\S+)$/m)).toBeGreaterThanOrEqual(2);
    expect(value(/^certsmith_worker_tasks_total\{task="bundle.json",outcome="success"\} (\S+)$/m)).toBe(1);
    expect(value(/^certsmith_worker_tasks_total\{task="issue.sign-in-worker",outcome="success"\} (\S+)$/m)).toBe(1);
  });
});

describe('certsmith serve --workers 0 with a broken trust file', () => {
  // Without worker threads the event loop reads the trust files; with them a prestarted worker
  // does, and a reading that fails there is done again by the server (cli.ts): either way a broken
  // file must be reported alike.
  it('stops start-up with the same message and exit code as with worker threads', async () => {
    const broken = await scratch.write('broken-metadata.json', '{"name":');
    const failures = await Promise.all(
      ['0', '1'].map(async (workers) => {
        // prettier-ignore
        const child = spawnCertsmith([
          'serve', '--port', '0', '--processes', '1', '--workers', workers, '--data-dir', scratch.path(`data-broken-${workers}`),
          '--ca-bundle', TRUST_FILES.caBundle, '--int-bundle', TRUST_FILES.intBundle, '--metadata', broken,
        ]);
        return { exit: await child.waitForExit(), stderr: child.stderr() };
      }),
    );
    expect(failures[0]!.exit).toEqual({ code: 2, signal: null });
    expect(failures[0]!.stderr).toMatch(/^certsmith: --metadata: .* \(code 4003\)\n$/);
    expect(failures[0]).toEqual(failures[1]);
  });
});
