import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Signer } from '@certsmith/signer-api';
import { createLocalSignerFromPem } from '@certsmith/signer-local';
import { TestPki } from '@certsmith/test-pki';
import { parseCertificate } from '@certsmith/x509-core';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResponderDefinition } from './revocation-config.js';
import { RevocationStartError, loadRevocationAuthorities } from './revocation-authorities.js';

const OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const pki = new TestPki();
const ca = pki.root({ O: 'certsmith', CN: 'authorities CA' }, { key: 'ecdsa-p256', keyLabel: 'auth-ca' });
const other = pki.root({ O: 'certsmith', CN: 'other CA' }, { key: 'ecdsa-p256', keyLabel: 'auth-other' });
const responder = pki.leaf('ocsp.authorities.test', ca, { key: 'ecdsa-p256', keyLabel: 'auth-responder', dns: [], extKeyUsage: [OCSP_SIGNING], keyUsage: ['digitalSignature'] });
const notDelegated = pki.leaf('tls.authorities.test', ca, { key: 'ecdsa-p256', keyLabel: 'auth-tls', extKeyUsage: ['1.3.6.1.5.5.7.3.1'] });
const leaf = pki.leaf('www.authorities.test', ca, { keyLabel: 'auth-leaf' });
const logger = pino({ level: 'silent' });
let dir: string;

const localSigner = (certificate: typeof ca): Signer => createLocalSignerFromPem(certificate.pem, certificate.key.pkcs8Pem);
/** A signer that forwards whole requests (as @certsmith/signer-multiroot does). */
const remoteSigner = (): Signer => ({
  algorithms: [],
  getCertificate: async () => ({ der: other.der, pem: other.pem }),
  signRequest: async () => {
    throw new Error('not used');
  },
  close: async () => {},
});

async function files(certificate: typeof ca, name: string): Promise<ResponderDefinition> {
  await writeFile(join(dir, `${name}.pem`), certificate.pem);
  await writeFile(join(dir, `${name}-key.pem`), certificate.key.traditionalPem);
  return { kind: 'files', certFile: join(dir, `${name}.pem`), keyFile: join(dir, `${name}-key.pem`), where: '--responder/--responder-key' };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-authorities-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('loadRevocationAuthorities', () => {
  it('lets each CA sign its own OCSP responses when no responder is configured', async () => {
    const authorities = await loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }, { label: 'other', signer: localSigner(other) }], responders: new Map(), logger });
    expect(authorities.all.map((authority) => [authority.label, authority.responder, authority.ocsp.delegated])).toEqual([
      ['default', 'the CA', false],
      ['other', 'the CA', false],
    ]);
    expect(authorities.explicitResponders).toBe(false);
    expect(authorities.forCertificate(parseCertificate(leaf.der))?.label).toBe('default');
    expect(authorities.byKeyIdentifier(authorities.all[1]!.keyIdentifier.toUpperCase())?.label).toBe('other');
    await authorities.close();
  });

  it('signs with a delegated responder from CFSSL\'s -responder files', async () => {
    const authorities = await loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }], responders: new Map([['default', await files(responder, 'responder')]]), logger });
    const authority = authorities.byLabel('default')!;
    expect(authority.ocsp.delegated).toBe(true);
    expect(authority.responder).toBe('--responder/--responder-key');
    expect(authorities.explicitResponders).toBe(true);
    await authorities.close();
  });

  it('refuses with 2000 a responder certificate without id-kp-OCSPSigning', async () => {
    const attempt = loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }], responders: new Map([['default', await files(notDelegated, 'tls')]]), logger });
    await expect(attempt).rejects.toBeInstanceOf(RevocationStartError);
    await expect(attempt).rejects.toMatchObject({ code: 2000, message: expect.stringMatching(/^--responder\/--responder-key: .*id-kp-OCSPSigning/) });
  });

  it('refuses with 2000 a responder another CA issued', async () => {
    const attempt = loadRevocationAuthorities({ signers: [{ label: 'other', signer: localSigner(other) }], responders: new Map([['other', await files(responder, 'responder2')]]), logger });
    await expect(attempt).rejects.toMatchObject({ code: 2000, message: expect.stringContaining('not issued by the CA') });
  });

  it('lists a remote signer as unavailable, and refuses it where the configuration names it', async () => {
    const authorities = await loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }, { label: 'remote', signer: remoteSigner() }], responders: new Map(), logger });
    expect(authorities.all.map((authority) => authority.label)).toEqual(['default']);
    expect(authorities.unavailable).toEqual([{ label: 'remote', reason: expect.stringContaining('cannot sign CRLs or OCSP responses') }]);
    const named = loadRevocationAuthorities({
      signers: [{ label: 'remote', signer: remoteSigner() }],
      responders: new Map([['remote', { kind: 'ca', where: 'revocation.ocsp.responders.remote' }]]),
      logger,
    });
    await expect(named).rejects.toMatchObject({ code: 2000, message: expect.stringMatching(/^revocation\.ocsp\.responders\.remote: signer "remote" cannot sign CRLs or OCSP responses/) });
  });

  it('refuses a responder for a label no signer has', async () => {
    const attempt = loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }], responders: new Map([['hsm', { kind: 'ca', where: 'revocation.ocsp.responders.hsm' }]]), logger });
    await expect(attempt).rejects.toMatchObject({ code: 2000, message: 'revocation.ocsp.responders.hsm: no signer has the label "hsm" (labels: default)' });
  });

  it('names the flag of an unreadable responder key (2001)', async () => {
    const definition: ResponderDefinition = { kind: 'files', certFile: (await files(responder, 'responder3')).certFile, keyFile: join(dir, 'missing-key.pem'), where: '--responder/--responder-key' };
    const attempt = loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }], responders: new Map([['default', definition]]), logger });
    await expect(attempt).rejects.toMatchObject({ code: 2001, message: expect.stringContaining('--responder-key: cannot read file') });
  });
});
