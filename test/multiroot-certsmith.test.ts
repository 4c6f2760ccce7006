/**
 * certsmith as a multi-root server, the way multirootca is used: a BACK certsmith holds two roots
 * under the labels `a` and `b` (local signers, each with its own policy and auth key), and
 *
 * - a FRONT certsmith whose default signer is `@certsmith/signer-multiroot` without a fixed label
 *   forwards each request's `label` to the back (certsmith → certsmith);
 * - a second front pins each label with its own auth key, so issuance goes through `/authsign`; a
 *   key of one label never signs for the other (CFSSL #950);
 * - CFSSL's own client (`cfssl sign -remote … -label`) signs against the back.
 *
 * Every certificate is verified with openssl against the root of its label.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import {
  TLS_USAGES,
  createScratch,
  makeCsr,
  makeRootCa,
  post,
  startServer,
  verifyCertificate,
  type OpensslCa,
  type Scratch,
  type Server,
} from './fixtures-issue.js';

const run = promisify(execFile);
const KEY_A = '00112233445566778899aabbccddeeff';
const KEY_B = 'ffeeddccbbaa99887766554433221100';

let scratch: Scratch;
const roots: Record<'a' | 'b', OpensslCa> = {} as Record<'a' | 'b', OpensslCa>;
let openBack: Server;
let authBack: Server;
let forwardingFront: Server;
let pinnedFront: Server;

function localSigner(root: OpensslCa, authKey?: string) {
  const profile: Record<string, unknown> = { expiry: '720h', usages: TLS_USAGES };
  if (authKey) profile['auth_key'] = authKey;
  return { plugin: '@certsmith/signer-local', options: { certFile: root.certFile, keyFile: root.keyFile }, signing: { default: profile } };
}

beforeAll(async () => {
  scratch = await createScratch('multiroot-certsmith');
  roots.a = await makeRootCa(scratch, 'a', 'Root A');
  roots.b = await makeRootCa(scratch, 'b', 'Root B');

  // Back servers: one that signs without tokens (/sign), one whose labels each require their own key.
  const openConfig = await scratch.write('back-open.json', { signers: { a: localSigner(roots.a), b: localSigner(roots.b) } });
  const authConfig = await scratch.write('back-auth.json', {
    auth_keys: { ka: { type: 'standard', key: KEY_A }, kb: { type: 'standard', key: KEY_B } },
    signers: { a: localSigner(roots.a, 'ka'), b: localSigner(roots.b, 'kb') },
  });
  [openBack, authBack] = await Promise.all([
    startServer(['--config', openConfig, '--data-dir', scratch.path('back-open')]),
    startServer(['--config', authConfig, '--data-dir', scratch.path('back-auth')]),
  ]);

  const forwardingConfig = await scratch.write('front-forwarding.json', {
    signers: { default: { plugin: '@certsmith/signer-multiroot', options: { remotes: [openBack.url], timeoutMs: 20_000 } } },
  });
  const pinned = (label: string, keyEnv: string) => ({
    plugin: '@certsmith/signer-multiroot',
    options: { remotes: [authBack.url], label, authKey: `env:${keyEnv}`, timeoutMs: 20_000 },
  });
  const pinnedConfig = await scratch.write('front-pinned.json', {
    signers: {
      a: pinned('a', 'FRONT_KEY_A'),
      b: pinned('b', 'FRONT_KEY_B'),
      // Misconfigured on purpose: label b's root with label a's key.
      crossed: pinned('b', 'FRONT_KEY_A'),
    },
  });
  [forwardingFront, pinnedFront] = await Promise.all([
    // Trust for `bundle: true`: both roots, no intermediates (the roots sign the leaves directly).
    startServer([
      '--config',
      forwardingConfig,
      '--data-dir',
      scratch.path('front-forwarding'),
      '--ca-bundle',
      await scratch.write('front-roots.pem', `${roots.a.certificatePem.trim()}\n${roots.b.certificatePem.trim()}\n`),
      '--int-bundle',
      await scratch.write('front-ints.pem', ''),
    ]),
    startServer(['--config', pinnedConfig, '--data-dir', scratch.path('front-pinned')], { FRONT_KEY_A: KEY_A, FRONT_KEY_B: KEY_B }),
  ]);
}, 180_000);

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

async function expectIssuedBy(certificatePem: string, root: OpensslCa): Promise<void> {
  expect(await verifyCertificate(scratch, certificatePem, root.certFile)).toMatch(/: OK\n$/);
}

describe('certsmith in front of a certsmith multi-root server', () => {
  it('forwards label a and label b to the back, which signs with the root of that label', async () => {
    for (const label of ['a', 'b'] as const) {
      const { status, envelope } = await post(forwardingFront.url, 'newcert', {
        label,
        request: { CN: `${label}.example.com`, hosts: [`${label}.example.com`] },
      });
      expect(status, JSON.stringify(envelope.errors)).toBe(200);
      await expectIssuedBy(envelope.result.certificate, roots[label]);
    }
  });

  it('passes the back server\'s refusal of an unknown label on with its code, naming the remote', async () => {
    const { status, envelope } = await post(forwardingFront.url, 'newcert', { label: 'nosuch', request: { CN: 'x', hosts: ['x'] } });
    expect(status).toBe(400);
    expect(envelope.errors[0]?.code).toBe(5200);
    expect(envelope.errors[0]?.message).toContain(openBack.url);
    expect(envelope.errors[0]?.message).toContain('nosuch');
  });

  it('bundles a certificate issued by a remote label (bundle: true) up to that label\'s root', async () => {
    const { status, envelope } = await post(forwardingFront.url, 'newcert', {
      label: 'b',
      bundle: true,
      request: { CN: 'bundled.example.com', hosts: ['bundled.example.com'] },
    });
    expect(status, JSON.stringify(envelope.errors)).toBe(200);
    expect(envelope.result.bundle.root.trim()).toBe(roots.b.certificatePem.trim());
    expect(envelope.result.bundle.crt.trim()).toBe(envelope.result.certificate.trim());
  });

  it('answers info for a label with the back server\'s root of that label', async () => {
    const { status, envelope } = await post(forwardingFront.url, 'info', { label: 'b' });
    expect(status).toBe(200);
    expect(envelope.result.certificate.trim()).toBe(roots.b.certificatePem.trim());
  });
});

describe('labels pinned with their own auth key (authsign)', () => {
  it('issues through /authsign with the key of each label', async () => {
    for (const label of ['a', 'b'] as const) {
      const { status, envelope } = await post(pinnedFront.url, 'newcert', { label, request: { CN: `${label}.pinned.example`, hosts: [`${label}.pinned.example`] } });
      expect(status, JSON.stringify(envelope.errors)).toBe(200);
      await expectIssuedBy(envelope.result.certificate, roots[label]);
    }
  });

  it('refuses a key of label a used for label b (CFSSL #950) with an authentication failure, not a 500', async () => {
    const { status, envelope } = await post(pinnedFront.url, 'newcert', { label: 'crossed', request: { CN: 'x.example', hosts: ['x.example'] } });
    expect(status).toBe(400);
    expect(envelope.success).toBe(false);
    expect(envelope.errors[0]?.message).toContain('invalid token');
  });
});

describe('cfssl sign/gencert -remote against a certsmith multi-root server', () => {
  it('gencert -remote -label generates the key locally and signs with the root of the label', async () => {
    const csrJson = await scratch.write('gencert-csr.json', { CN: 'gencert.example.com', hosts: ['gencert.example.com'] });
    for (const label of ['a', 'b'] as const) {
      const { stdout } = await run('cfssl', ['gencert', '-remote', openBack.url, '-label', label, csrJson], { cwd: scratch.dir, timeout: 60_000 });
      const { cert, key } = JSON.parse(stdout) as { cert: string; key: string };
      expect(key).toContain('PRIVATE KEY');
      await expectIssuedBy(cert, roots[label]);
    }
  });

  it('signs a CSR with the root selected by -label', async () => {
    const { csrFile } = await makeCsr(scratch, 'cfssl-client', 'cfssl.example.com');
    for (const label of ['a', 'b'] as const) {
      const { stdout } = await run('cfssl', ['sign', '-remote', openBack.url, '-label', label, '-hostname', 'cfssl.example.com', csrFile], {
        cwd: scratch.dir,
        timeout: 60_000,
      });
      const { cert } = JSON.parse(stdout) as { cert: string };
      await expectIssuedBy(cert, roots[label]);
    }
  });
});
