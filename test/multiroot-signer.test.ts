/**
 * @certsmith/signer-multiroot against a real Debian `multirootca` (behaviour doc 4.6, 7.11) with two
 * roots labelled `a` and `b` whose profiles all require the auth key.
 */
import type { SignerContext } from '@certsmith/signer-api';
import { createSigner, createSignerContext } from '@certsmith/signer-api';
import type { MultirootSigner } from '@certsmith/signer-multiroot';
import plugin from '@certsmith/signer-multiroot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CfsslPeer } from './peers/cfssl-peer.js';
import { startMultirootca } from './peers/cfssl-peer.js';
import type { MultirootFixture } from './peers/multiroot-fixture.js';
import { createMultirootFixture } from './peers/multiroot-fixture.js';

let fixture: MultirootFixture;
let peer: CfsslPeer;
let context: SignerContext;
const signers: MultirootSigner[] = [];

async function signerWith(options: Record<string, unknown>): Promise<MultirootSigner> {
  const signer = (await createSigner(plugin, { remotes: [peer.url], authKey: 'env:MR_AUTH_KEY', timeoutMs: 10_000, ...options }, context)) as MultirootSigner;
  signers.push(signer);
  return signer;
}

beforeAll(async () => {
  fixture = await createMultirootFixture({ labels: ['a', 'b'] });
  peer = await startMultirootca({ rootsFile: fixture.rootsFile, defaultLabel: 'a' });
  context = createSignerContext({ env: { MR_AUTH_KEY: fixture.authKeyHex, MR_WRONG_KEY: 'ffeeddccbbaa99887766554433221100' } });
});

afterAll(async () => {
  await Promise.all(signers.map((signer) => signer.close()));
  await peer?.stop();
  await fixture?.cleanup();
});

describe('signRequest', () => {
  it('issues from the root of the forwarded label when labels are a and b', async () => {
    const signer = await signerWith({});
    for (const [label, other] of [['a', 'b'], ['b', 'a']] as const) {
      const { certificatePem } = await signer.signRequest({ certificate_request: await fixture.createCsr(`leaf-${label}.example`), label });
      const right = await fixture.verifyIssuedBy(certificatePem, label);
      expect(right.ok, right.output).toBe(true);
      expect((await fixture.verifyIssuedBy(certificatePem, other)).ok).toBe(false);
    }
  });

  it('issues from the fixed label whatever label the request carries', async () => {
    const signer = await signerWith({ label: 'b' });
    const { certificatePem } = await signer.signRequest({ certificate_request: await fixture.createCsr('fixed.example'), label: 'primary' });
    expect((await fixture.verifyIssuedBy(certificatePem, 'b')).ok).toBe(true);
  });

  it('rejects with the remote error naming the remote when the label is unknown', async () => {
    const signer = await signerWith({});
    const csr = await fixture.createCsr('nosuch.example');
    // multirootca answers 400 {"code":1,"message":"bad request"}; code 1 is outside CFSSL's scheme → 7500.
    await expect(signer.signRequest({ certificate_request: csr, label: 'nosuch' })).rejects.toMatchObject({
      code: 7500,
      remoteCode: 1,
      status: 400,
      remote: peer.url,
      message: `remote ${peer.url} answered: bad request`,
    });
  });

  it('rejects with the remote error when the profile is unknown', async () => {
    const signer = await signerWith({ profile: 'nosuch' });
    await expect(signer.signRequest({ certificate_request: await fixture.createCsr('p.example'), label: 'a' })).rejects.toMatchObject({
      code: 7500,
      remoteCode: 1,
      message: `remote ${peer.url} answered: invalid profile`,
    });
  });

  it('rejects with a 7100 auth failure when the auth key is wrong', async () => {
    const signer = await signerWith({ authKey: 'env:MR_WRONG_KEY' });
    const error = (await signer.signRequest({ certificate_request: await fixture.createCsr('wrong.example'), label: 'a' }).then(
      () => new Error('expected a rejection'),
      (caught: unknown) => caught,
    )) as Error;
    expect(error).toMatchObject({ code: 7100, remoteCode: 1, message: `remote ${peer.url} answered: invalid token` });
    expect(error.message).not.toContain(fixture.authKeyHex);
    // The signer is still usable afterwards.
    await expect(signer.health()).resolves.toEqual({ ok: true });
  });

  it('rejects with the remote error when signing without a token', async () => {
    // multirootca has no /sign route: its mux answers 404 text → 7400 with the body excerpt.
    const signer = (await createSigner(plugin, { remotes: [peer.url] }, context)) as MultirootSigner;
    signers.push(signer);
    await expect(signer.signRequest({ certificate_request: await fixture.createCsr('plain.example') })).rejects.toMatchObject({
      code: 7400,
      message: `remote ${peer.url} answered HTTP 404: 404 page not found`,
    });
  });
});

describe('info', () => {
  it('returns the CA certificate and expiry of each label', async () => {
    const signer = await signerWith({});
    for (const label of ['a', 'b']) {
      const root = fixture.roots[label];
      const info = await signer.info({ label });
      expect(info.certificate).toBe(root?.certificatePem.trim());
      expect(info.expiry).toBe(root?.expiry);
      expect(info.usages).toEqual(['signing', 'key encipherment', 'server auth']);
    }
  });

  it('keeps the remote code 400 when the label is unknown', async () => {
    const signer = await signerWith({});
    await expect(signer.info({ label: 'nosuch' })).rejects.toMatchObject({ code: 400, message: `remote ${peer.url} answered: bad label` });
  });
});

describe('getCertificate', () => {
  it('returns the CA certificate of the fixed label', async () => {
    const signer = await signerWith({ label: 'b' });
    expect((await signer.getCertificate()).pem).toBe(fixture.roots.b?.certificatePem);
  });

  it('returns the default label CA without a fixed label and the asked label CA by getCertificateForLabel', async () => {
    const signer = await signerWith({});
    expect((await signer.getCertificate()).pem).toBe(fixture.roots.a?.certificatePem);
    expect((await signer.getCertificateForLabel('b')).pem).toBe(fixture.roots.b?.certificatePem);
  });
});
