/**
 * Label routing through a remote multi-root CA: certsmith in front of a real Debian `multirootca`
 * with roots `a` and `b` (`-l a`), reached with `@certsmith/signer-multiroot` as the `default`
 * signer (loaded by package name). Without a fixed `label` that signer forwards labels nobody
 * configured locally; with one, unknown labels are refused (5200), as for local signers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import { startMultirootca } from './peers/cfssl-peer.js';
import type { CfsslPeer } from './peers/cfssl-peer.js';
import { createMultirootFixture } from './peers/multiroot-fixture.js';
import type { MultirootFixture } from './peers/multiroot-fixture.js';
import { createScratch, makeRootCa, post, startServer, verifyCertificate } from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';

let scratch: Scratch;
let fixture: MultirootFixture;
let multirootca: CfsslPeer;
let forwarding: Server;
let fixed: Server;
let localCa: OpensslCa;

beforeAll(async () => {
  scratch = await createScratch('routing');
  fixture = await createMultirootFixture({ labels: ['a', 'b'] });
  multirootca = await startMultirootca({ rootsFile: fixture.rootsFile, defaultLabel: 'a' });
  localCa = await makeRootCa(scratch, 'loc');
  const env = { E2E_MULTIROOT_KEY: fixture.authKeyHex };
  // A file with only `signers`: CFSSL's DefaultConfig applies locally, the remote applies its own policy.
  const forwardingConfig = await scratch.write('forwarding.json', {
    signers: { default: { plugin: '@certsmith/signer-multiroot', options: { remotes: [multirootca.url], authKey: 'env:E2E_MULTIROOT_KEY' } } },
  });
  const fixedConfig = await scratch.write('fixed.json', {
    signers: {
      default: ['@certsmith/signer-multiroot', { remotes: multirootca.url, authKey: 'env:E2E_MULTIROOT_KEY', label: 'b' }],
      loc: ['@certsmith/signer-local', { certFile: 'loc.pem', keyFile: 'loc-key.pem' }],
    },
  });
  [forwarding, fixed] = await Promise.all([
    startServer(['--config', forwardingConfig, '--data-dir', scratch.path('data1')], env),
    startServer(['--config', fixedConfig, '--data-dir', scratch.path('data2')], env),
  ]);
});

afterAll(async () => {
  await killAllCertsmith();
  await multirootca?.stop();
  await fixture?.cleanup();
  await scratch?.cleanup();
});

async function newcert(server: Server, label?: string) {
  return post(server.url, 'newcert', { request: { CN: 'routed.example', hosts: ['routed.example'] }, ...(label === undefined ? {} : { label }) });
}

describe('a default multi-root signer without a fixed label', () => {
  it('forwards each label to the remote root of that name', async () => {
    for (const label of ['a', 'b']) {
      const { envelope } = await newcert(forwarding, label);
      expect(envelope.errors).toEqual([]);
      expect(await fixture.verifyIssuedBy(envelope.result.certificate, label)).toMatchObject({ ok: true });
      expect(await fixture.verifyIssuedBy(envelope.result.certificate, label === 'a' ? 'b' : 'a')).toMatchObject({ ok: false });
    }
  });

  it('uses the remote default label for requests without one', async () => {
    const { envelope } = await newcert(forwarding);
    expect(await fixture.verifyIssuedBy(envelope.result.certificate, 'a')).toMatchObject({ ok: true });
  });

  it('signs CSRs through /sign with the label forwarded', async () => {
    const csr = await fixture.createCsr('signed.example');
    const { envelope } = await post(forwarding.url, 'sign', { certificate_request: csr, label: 'b', hosts: ['signed.example'] });
    expect(await fixture.verifyIssuedBy(envelope.result.certificate, 'b')).toMatchObject({ ok: true });
  });

  it('passes the remote refusal of an unknown label on (multirootca "bad request" → 7500)', async () => {
    const { status, envelope } = await newcert(forwarding, 'zz');
    expect(status).toBe(400);
    expect(envelope.errors[0]).toMatchObject({ code: 7500, message: expect.stringMatching(/answered: bad request/) });
  });

  it('answers info from the remote root of the label', async () => {
    const { envelope } = await post(forwarding.url, 'info', { label: 'b' });
    expect(envelope.result).toMatchObject({ certificate: fixture.roots['b']!.certificatePem.trim(), expiry: fixture.roots['b']!.expiry });
  });

  it('reports the remote in health', async () => {
    const body = (await (await fetch(`${forwarding.url}/api/v1/cfssl/health`)).json()) as { result: { healthy: boolean; signers: Record<string, { healthy: boolean }> } };
    expect(body.result).toMatchObject({ healthy: true, signers: { default: { healthy: true } } });
  });
});

describe('a default multi-root signer with a fixed label', () => {
  it('signs requests without a label at its root, routes configured labels locally, refuses the rest', async () => {
    const none = await newcert(fixed);
    expect(await fixture.verifyIssuedBy(none.envelope.result.certificate, 'b')).toMatchObject({ ok: true });
    const local = await newcert(fixed, 'loc');
    expect(await verifyCertificate(scratch, local.envelope.result.certificate, localCa.certFile)).toMatch(/: OK\n$/);
    const unknown = await newcert(fixed, 'a');
    expect(unknown.envelope.errors).toEqual([{ code: 5200, message: 'unknown label "a": no signer is configured for it' }]);
  });
});
