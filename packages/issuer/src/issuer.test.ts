/**
 * The issuing use case as one composition: label routing, the signature site, the record port
 * (every certificate this instance signs, before it is returned), the bundle port and
 * authentication. The certificates' content is checked in new-certificate.test.ts and
 * sign-request.test.ts; the HTTP shape in http-api's issue-operations.test.ts.
 */
import { X509Certificate } from 'node:crypto';

import type { SignRequest, Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, createAuthenticatedRequest, signWithKeyObject } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import { afterEach, describe, expect, it } from 'vitest';

import { peekAuthenticatedSignRequest } from './authenticated-sign-request.js';
import { decodeNewCertificateRequest } from './certificate-request.js';
import { createIssuer, newKey, NO_BUNDLER_MESSAGE, NO_HOSTS_MESSAGE } from './issuer.js';
import type { IssuedCertificateRecord, IssuerOptions, IssuingTaskRunner } from './issuer.js';
import { createSignerDirectory } from './signer-directory.js';
import type { SignerEntry } from './signer-directory.js';
import { decodeInfoRequest } from './signer-info.js';
import { parseSigningPolicy } from './signing-policy-loader.js';
import { provideWorkerSigners } from './worker-signers.js';

const pki = new TestPki();
const caDefault = pki.root({ CN: 'Issuer Default CA' }, { key: 'ecdsa-p256' });
const caWorker = pki.root({ CN: 'Issuer Worker CA' }, { key: 'ecdsa-p256' });
const KEY_HEX = '00112233445566778899aabbccddeeff';
const policy = parseSigningPolicy({
  signing: { default: { expiry: '1h', usages: ['signing', 'server auth'] }, profiles: { secure: { expiry: '1h', usages: ['client auth'], auth_key: 'k' } } },
  auth_keys: { k: { type: 'standard', key: KEY_HEX } },
});
const PLUGIN = new URL('./test-support/pem-signer-plugin.ts', import.meta.url).href;

function localSigner(ca: TestCertificate): Signer & { signed: number } {
  const signer = {
    signed: 0,
    algorithms: algorithmsForKeyObject(ca.key.privateKey),
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    async sign(tbs: Uint8Array, algorithm: Parameters<typeof signWithKeyObject>[2]) {
      signer.signed += 1;
      return signWithKeyObject(ca.key.privateKey, tbs, algorithm);
    },
    close: async () => {},
  };
  return signer;
}

/** A remote CA: signs whole requests with the default CA. */
function remoteSigner(seen: SignRequest[]): Signer {
  const behind = createIssuer({ signers: createSignerDirectory([{ label: 'default', signer: localSigner(caDefault), policy }]) });
  return {
    algorithms: [],
    getCertificate: async () => ({ der: caDefault.der, pem: caDefault.pem }),
    async signRequest(request) {
      seen.push(request);
      return { certificatePem: (await behind.signCertificate({ ...request, label: '' }, { authenticated: true })).certificatePem };
    },
    close: async () => {},
  };
}

const runner = createInlineTaskRunner();
const tasks: IssuingTaskRunner = { runTask: (task, input) => runner.run(task, input) };

function issuerWith(entries: SignerEntry[], options: Omit<IssuerOptions, 'signers'> = {}) {
  const records: IssuedCertificateRecord[] = [];
  const issuer = createIssuer({
    signers: createSignerDirectory(entries),
    recordIssued: async (record) => {
      records.push(record);
    },
    ...options,
  });
  return { issuer, records };
}

async function csrPem(hosts: string[] = ['csr.example']): Promise<string> {
  return (await newKey(decodeNewCertificateRequest({ request: { CN: 'csr.example', hosts } }).request)).csrPem;
}

afterEach(() => provideWorkerSigners(null));

describe('createIssuer', () => {
  it('records the certificate signed here with the label and profile before returning it', async () => {
    const { issuer, records } = issuerWith([{ label: 'default', signer: localSigner(caDefault), policy }]);
    const issued = await issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'r.example', hosts: ['r.example'] } }), { tasks });
    expect(records).toEqual([{ label: 'default', profile: '', certificateDer: issued.certificateDer, certificatePem: issued.certificatePem }]);
    expect(Buffer.from(issued.certificateDer).equals(new X509Certificate(issued.certificatePem).raw)).toBe(true);
    const signed = await issuer.signCertificate({ certificate_request: await csrPem() }, { tasks });
    expect(records.map((record) => record.certificatePem)).toEqual([issued.certificatePem, signed.certificatePem]);
  });

  it('records the certificate a worker signed, on the calling thread', async () => {
    const main = localSigner(caWorker);
    const entry: SignerEntry = {
      label: 'w',
      signer: main,
      policy,
      workerRecipe: { module: PLUGIN, options: { certificatePem: caWorker.pem, keyPem: caWorker.key.pkcs8Pem }, configDir: '/' },
    };
    provideWorkerSigners([{ label: 'w', recipe: entry.workerRecipe!, policy }]);
    const { issuer, records } = issuerWith([entry], { signatureSite: 'worker' });
    const issued = await issuer.newCertificate(decodeNewCertificateRequest({ label: 'w', request: { CN: 'w.example', hosts: ['w.example'] } }), { tasks });
    const signed = await issuer.signCertificate({ label: 'w', certificate_request: await csrPem() }, { tasks });
    expect(main.signed).toBe(0);
    expect(records.map(({ label, certificatePem }) => ({ label, certificatePem }))).toEqual([
      { label: 'w', certificatePem: issued.certificatePem },
      { label: 'w', certificatePem: signed.certificatePem },
    ]);
    expect(new X509Certificate(issued.certificatePem).checkIssued(new X509Certificate(caWorker.pem))).toBe(true);
  });

  it('signs here with the configured signer when recreatable signers are to sign here', async () => {
    const main = localSigner(caWorker);
    const entry: SignerEntry = { label: 'default', signer: main, policy, workerRecipe: { module: PLUGIN, options: {}, configDir: '/' } };
    const { issuer } = issuerWith([entry], { signatureSite: 'here' });
    await issuer.newCertificate(decodeNewCertificateRequest({ request: { CN: 'h.example', hosts: ['h.example'] } }), { tasks });
    expect(main.signed).toBe(1);
  });

  it('records nothing a remote CA signed: the row is written where the certificate is signed', async () => {
    const seen: SignRequest[] = [];
    const { issuer, records } = issuerWith([{ label: 'default', signer: remoteSigner(seen), policy, forwardsLabels: true }]);
    await issuer.newCertificate(decodeNewCertificateRequest({ label: 'root7', request: { CN: 'f.example', hosts: ['f.example'] } }), { tasks });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ label: 'root7', profile: '' });
    expect(records).toEqual([]);
  });

  it('fails the request with the record error, before any bundle, when recording fails', async () => {
    const unavailable = Object.assign(new Error('certificate store unavailable'), { code: 503 });
    const issuer = createIssuer({
      signers: createSignerDirectory([{ label: 'default', signer: localSigner(caDefault), policy }]),
      recordIssued: () => Promise.reject(unavailable),
    });
    let bundled = 0;
    const bundle = async () => {
      bundled += 1;
      return 'bundle';
    };
    await expect(issuer.newCertificate(decodeNewCertificateRequest({ bundle: true, request: { CN: 'x.example', hosts: ['x.example'] } }), { tasks, bundle })).rejects.toBe(unavailable);
    await expect(issuer.signCertificate({ certificate_request: await csrPem(), bundle: true }, { tasks, bundle })).rejects.toBe(unavailable);
    expect(bundled).toBe(0);
  });

  it('bundles through the port when asked, and gives only the no-bundler message without one', async () => {
    const { issuer } = issuerWith([{ label: 'default', signer: localSigner(caDefault), policy }]);
    const request = decodeNewCertificateRequest({ bundle: true, request: { CN: 'b.example' } });
    const bundled = await issuer.newCertificate(request, { tasks, bundle: async (pem) => ({ leaf: pem }) });
    expect(bundled.bundle).toEqual({ leaf: bundled.certificatePem });
    expect(bundled.messages).toEqual([{ code: 5300, message: NO_HOSTS_MESSAGE }]);
    const unbundled = await issuer.newCertificate(request, { tasks });
    expect(unbundled.bundle).toBeUndefined();
    expect(unbundled.messages).toEqual([{ code: 5300, message: NO_BUNDLER_MESSAGE }]);
    const signed = await issuer.signCertificate({ certificate_request: await csrPem(), bundle: true }, { tasks, bundle: null });
    expect(signed.messages).toEqual([{ code: 5300, message: NO_BUNDLER_MESSAGE }]);
  });

  it('replaces the CSR hosts in the certificate when given hosts, without the no-hosts message', async () => {
    const { issuer } = issuerWith([{ label: 'default', signer: localSigner(caDefault), policy }]);
    const issued = await issuer.newCertificate({ ...decodeNewCertificateRequest({ request: { CN: 'o.example' } }), hosts: ['o.example', '192.0.2.9'] });
    expect(new X509Certificate(issued.certificatePem).subjectAltName).toBe('DNS:o.example, IP Address:192.0.2.9');
    expect(issued.messages).toEqual([]);
  });

  it('refuses auth_key profiles unless the caller is authenticated, before any key is made', async () => {
    const { issuer, records } = issuerWith([{ label: 'default', signer: localSigner(caDefault), policy }]);
    const request = decodeNewCertificateRequest({ profile: 'secure', request: { CN: 's.example', hosts: ['s.example'] } });
    const counting: IssuingTaskRunner = { runTask: () => Promise.reject(new Error('no task may run')) };
    await expect(issuer.newCertificate(request, { tasks: counting })).rejects.toMatchObject({ code: 400, message: 'authentication required' });
    await expect(issuer.newCertificate(request, { tasks, authenticated: true })).resolves.toMatchObject({ messages: [] });
    expect(records).toHaveLength(1);
  });

  it('checks the authsign token with the keys of the label it names, then signs and records', async () => {
    const other = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['client auth'], auth_key: 'o' } }, auth_keys: { o: { type: 'standard', key: 'ffeeddccbbaa99887766554433221100' } } });
    const { issuer, records } = issuerWith([
      { label: 'default', signer: localSigner(caDefault), policy },
      { label: 'other', signer: localSigner(caWorker), policy: other },
    ]);
    const csr = await csrPem();
    const token = (request: object) => createAuthenticatedRequest(JSON.stringify(request), Buffer.from(KEY_HEX, 'hex'));
    const signed = await issuer.authsign(token({ certificate_request: csr, profile: 'secure' }), { tasks });
    expect(new X509Certificate(signed.certificatePem).checkIssued(new X509Certificate(caDefault.pem))).toBe(true);
    // The default label's key does not sign for `other` (CFSSL issue #950).
    await expect(issuer.authsign(token({ certificate_request: csr, label: 'other' }), { tasks })).rejects.toMatchObject({ code: 400, message: 'invalid token' });
    await expect(issuer.authsign(token({ certificate_request: csr, label: 'nosuch' }), { tasks })).rejects.toMatchObject({ code: 5200 });
    expect(records.map((record) => record.profile)).toEqual(['secure']);
  });

  it('answers info for the label with the profile usages and expiry, and refuses unknown labels with 5200', async () => {
    const { issuer } = issuerWith([{ label: 'default', signer: localSigner(caDefault), policy }]);
    await expect(issuer.info({ label: '', profile: 'secure' })).resolves.toEqual({ certificate: caDefault.pem.trim(), usages: ['client auth'], expiry: '1h' });
    await expect(issuer.info({ label: 'zz', profile: '' })).rejects.toMatchObject({ code: 5200, message: 'unknown label "zz": no signer is configured for it' });
  });
});

describe('createSignerDirectory', () => {
  it('routes by label, forwards only through a forwarding default, refuses the rest', () => {
    const signer = localSigner(caDefault);
    const local = createSignerDirectory([{ label: 'default', signer, policy }]);
    expect(local.route(undefined)).toMatchObject({ label: 'default', forwardLabel: '', forwarded: false });
    expect(() => local.route('zz')).toThrow(expect.objectContaining({ code: 5200 }));
    const forwarding = createSignerDirectory([{ label: 'default', signer, policy, forwardsLabels: true }]);
    expect(forwarding.route('zz')).toMatchObject({ label: 'default', forwardLabel: 'zz', forwarded: true });
    expect(() => createSignerDirectory([{ label: 'a', signer, policy }, { label: 'a', signer, policy }])).toThrow(TypeError);
  });
});

describe('decodeInfoRequest', () => {
  it('lets the last case-insensitive key win and treats null as empty', () => {
    expect(decodeInfoRequest({ label: 'a', LABEL: 'b', profile: null })).toEqual({ label: 'b', profile: '' });
  });

  it('throws 400 with Go\'s text when a field is not a string', () => {
    expect(() => decodeInfoRequest({ label: 5 })).toThrow(expect.objectContaining({ code: 400, message: 'json: cannot unmarshal number into Go struct field Req.label of type string' }));
  });
});

describe('peekAuthenticatedSignRequest', () => {
  it('reads the inner label and profile, and gives null for anything unreadable', () => {
    const inner = Buffer.from(JSON.stringify({ Label: 'x', profile: 'p', certificate_request: 'c' })).toString('base64');
    expect(peekAuthenticatedSignRequest({ request: inner })).toEqual({ label: 'x', profile: 'p' });
    expect(peekAuthenticatedSignRequest({ request: 'not base64 json' })).toBeNull();
    expect(peekAuthenticatedSignRequest({ request: 5 })).toBeNull();
    expect(peekAuthenticatedSignRequest('body')).toBeNull();
  });
});
