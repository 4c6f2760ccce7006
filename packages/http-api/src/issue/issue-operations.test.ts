import { X509Certificate, createHash } from 'node:crypto';
import { createIssuer, createSignerDirectory, parseSigningPolicy, NO_BUNDLER_MESSAGE, NO_HOSTS_MESSAGE } from '@certsmith/issuer';
import type { SignerEntry, SigningPolicy } from '@certsmith/issuer';
import type { InfoRequest, SignRequest, Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, computeAuthToken, signWithKeyObject } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import type { AnyOperation } from '../operation.js';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import { createInfoOperation } from './info-operation.js';
import { createNewcertOperation } from './newcert-operation.js';
import { newkeyOperation } from './newkey-operation.js';
import { createAuthsignOperation, createSignOperation } from './sign-operation.js';

const pki = new TestPki();
const caDefault = pki.root({ CN: 'Unit Default CA' }, { key: 'ecdsa-p256' });
const caA = pki.root({ CN: 'Unit CA A' }, { key: 'ecdsa-p256' });

function localSigner(ca: TestCertificate): Signer {
  return {
    algorithms: algorithmsForKeyObject(ca.key.privateKey),
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    sign: (tbs, algorithm) => signWithKeyObject(ca.key.privateKey, tbs, algorithm),
    close: async () => {},
  };
}

const KEY_A = '00112233445566778899aabbccddeeff';
const KEY_DEFAULT = 'ffeeddccbbaa99887766554433221100';
const usages = ['signing', 'key encipherment', 'server auth', 'client auth'];

function policy(defaultAuthKey?: string): SigningPolicy {
  return parseSigningPolicy({
    signing: {
      default: { expiry: '8760h', usages, ...(defaultAuthKey ? { auth_key: defaultAuthKey } : {}) },
      profiles: { secure: { expiry: '1h', usages: ['client auth'], auth_key: 'dflt' } },
    },
    auth_keys: { a: { type: 'standard', key: KEY_A }, dflt: { type: 'standard', key: KEY_DEFAULT } },
  });
}

function remoteSigner(calls: SignRequest[], infos: InfoRequest[]): Signer {
  return {
    algorithms: [],
    getCertificate: async () => ({ der: caA.der, pem: caA.pem }),
    async signRequest(request) {
      calls.push(request);
      const leaf = pki.leaf('remote.example', caA, { key: 'ecdsa-p256' });
      return { certificatePem: leaf.pem };
    },
    async info(request) {
      infos.push(request);
      return { certificate: caA.pem.trim(), usages: ['remote'], expiry: '1h' };
    },
    close: async () => {},
  };
}

function app(entries: SignerEntry[], bundler = null): ReturnType<typeof createApp> {
  const options = { issuer: createIssuer({ signers: createSignerDirectory(entries) }), bundler };
  const operations: AnyOperation[] = [
    createNewcertOperation(options),
    newkeyOperation,
    createSignOperation(options),
    createAuthsignOperation(options),
    createInfoOperation(options),
  ];
  return createApp({ operations, taskRunner: createInlineTaskRunner() });
}

async function post(koa: ReturnType<typeof createApp>, name: string, body: unknown): Promise<{ status: number; json: any }> {
  const { createServer } = await import('node:http');
  const server = createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/cfssl/${name}`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, json: await response.json() };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const standard = (): SignerEntry[] => [
  { label: 'default', signer: localSigner(caDefault), policy: policy() },
  { label: 'a', signer: localSigner(caA), policy: policy('a') },
];

function derOf(pem: string): Buffer {
  return Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
}

describe('newcert', () => {
  it('issues with the default signer, keys alphabetical, sums over the DER, PEMs ending in \\n', async () => {
    const { status, json } = await post(app(standard()), 'newcert', { request: { CN: 'x.example', hosts: ['x.example'] } });
    expect(status).toBe(200);
    expect(Object.keys(json.result)).toEqual(['certificate', 'certificate_request', 'private_key', 'sums']);
    expect(json.messages).toEqual([]);
    for (const key of ['certificate', 'certificate_request', 'private_key']) expect(json.result[key]).toMatch(/\n$/);
    const certificate = new X509Certificate(json.result.certificate);
    expect(certificate.checkIssued(new X509Certificate(caDefault.pem))).toBe(true);
    expect(json.result.sums.certificate['sha-256']).toBe(createHash('sha256').update(derOf(json.result.certificate)).digest('hex').toUpperCase());
    expect(json.result.sums.certificate_request.md5).toBe(createHash('md5').update(derOf(json.result.certificate_request)).digest('hex').toUpperCase());
  });

  it('adds the 5300 no-hosts message when the request has no hosts', async () => {
    const { json } = await post(app(standard()), 'newcert', { request: {} });
    expect(json.messages).toEqual([{ code: 5300, message: NO_HOSTS_MESSAGE }]);
  });

  it('refuses a body without a request section (CFSSL issues an empty-subject certificate for {} and null)', async () => {
    for (const body of [{}, null, { profile: 'default' }]) {
      expect((await post(app(standard()), 'newcert', body)).json.errors).toEqual([{ code: 400, message: 'request is required' }]);
    }
    expect((await post(app(standard()), 'newcert', { REQUEST: { CN: 'upper' } })).json.success).toBe(true);
  });

  it('answers only the no-bundler message when a bundle is asked without a bundler', async () => {
    const { json } = await post(app(standard()), 'newcert', { request: { CN: 'b' }, bundle: true });
    expect(json.success).toBe(true);
    expect(json.messages).toEqual([{ code: 5300, message: NO_BUNDLER_MESSAGE }]);
    expect(json.result.bundle).toBeUndefined();
  });

  it('refuses an unknown label with 5200 and an unknown profile with 5400', async () => {
    expect((await post(app(standard()), 'newcert', { request: {}, label: 'nosuch' })).json.errors).toEqual([
      { code: 5200, message: 'unknown label "nosuch": no signer is configured for it' },
    ]);
    expect((await post(app(standard()), 'newcert', { request: {}, profile: 'nosuch' })).json.errors[0].code).toBe(5400);
  });

  it('refuses newcert for a profile with an auth_key (CFSSL issue #788)', async () => {
    const koa = app(standard());
    expect((await post(koa, 'newcert', { request: {}, label: 'a' })).json.errors).toEqual([{ code: 400, message: 'authentication required' }]);
    expect((await post(koa, 'newcert', { request: {}, profile: 'secure' })).json.errors).toEqual([{ code: 400, message: 'authentication required' }]);
  });

  it('decodes with Go semantics: case-insensitive keys, request null, ca section, key errors', async () => {
    const koa = app(standard());
    const ci = await post(koa, 'newcert', { REQUEST: { cn: 'ci.example', HOSTS: ['ci.example'] } });
    expect(new X509Certificate(ci.json.result.certificate).subject).toBe('CN=ci.example');
    expect((await post(koa, 'newcert', { request: null })).json.errors).toEqual([{ code: 400, message: 'missing request section' }]);
    expect((await post(koa, 'newcert', { request: { ca: {} } })).json.errors).toEqual([{ code: 400, message: 'ca section only permitted in initca' }]);
    expect((await post(koa, 'newcert', { request: { key: { algo: 'rsa' } } })).json.errors).toEqual([{ code: 2400, message: 'RSA key is too weak' }]);
  });

  it('forwards an unconfigured label to a default signer that forwards labels', async () => {
    const calls: SignRequest[] = [];
    const koa = app([{ label: 'default', signer: remoteSigner(calls, []), policy: policy(), forwardsLabels: true }]);
    const { json } = await post(koa, 'newcert', { request: { CN: 'r' }, label: 'root7', profile: 'remote-only' });
    expect(json.success).toBe(true);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ label: 'root7', profile: 'remote-only' });
    expect(calls[0]!.certificate_request).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----/);
  });
});

describe('newkey', () => {
  it('returns key, CSR and CSR sums in CFSSL struct order', async () => {
    const { json } = await post(app(standard()), 'newkey', { CN: 'nk.example', hosts: ['nk.example'], key: { algo: 'ed25519' } });
    expect(Object.keys(json.result)).toEqual(['private_key', 'certificate_request', 'sums']);
    expect(json.result.private_key).toMatch(/^-----BEGIN Ed25519 PRIVATE KEY-----\n/);
    expect(Object.keys(json.result.sums.certificate_request)).toEqual(['md5', 'sha-1', 'sha-256']);
  });
});

describe('sign and authsign', () => {
  async function csrPem(): Promise<string> {
    const { json } = await post(app(standard()), 'newkey', { CN: 'csr.example', hosts: ['csr.example'] });
    return json.result.certificate_request as string;
  }

  function authenticated(request: object, keyHex: string): object {
    const bytes = Buffer.from(JSON.stringify(request));
    const token = computeAuthToken(bytes, Buffer.from(keyHex, 'hex'));
    return { token: Buffer.from(token).toString('base64'), request: bytes.toString('base64') };
  }

  it.each([
    ['a syntax error', 'xx'],
    ['an empty body', ''],
    ['an array', '[]'],
    ['a string', '"certificate_request"'],
  ])('answers %s with CFSSL\'s `Unable to parse sign request` (400, code 400)', async (_, body) => {
    const { status, json } = await post(app(standard()), 'sign', body);
    expect(status).toBe(400);
    expect(json.errors).toEqual([{ code: 400, message: 'Unable to parse sign request' }]);
  });

  it('keeps the parser\'s own description of bad JSON for endpoints without a CFSSL text of their own', async () => {
    const { status, json } = await post(app(standard()), 'newcert', 'xx');
    expect(status).toBe(400);
    expect(json.errors[0].message).toMatch(/not valid JSON/);
  });

  it('signs with hostname taking precedence over hosts, and refuses profiles with auth keys', async () => {
    const koa = app(standard());
    const csr = await csrPem();
    const { json } = await post(koa, 'sign', { certificate_request: csr, hosts: ['ignored.example'], hostname: 'h1.example,10.0.0.1' });
    expect(Object.keys(json.result)).toEqual(['certificate']);
    expect(new X509Certificate(json.result.certificate).subjectAltName).toBe('DNS:h1.example, IP Address:10.0.0.1');
    expect((await post(koa, 'sign', { certificate_request: csr, profile: 'secure' })).json.errors).toEqual([{ code: 400, message: 'authentication required' }]);
    expect((await post(koa, 'sign', {})).json.errors).toEqual([{ code: 400, message: "missing parameter 'certificate_request'" }]);
    expect((await post(koa, 'sign', { certificate_request: 'garbage' })).json.errors).toEqual([{ code: 9002, message: 'CSR Decode failed' }]);
  });

  it('checks the token with the keys of the label it signs for (CFSSL issue #950)', async () => {
    const koa = app(standard());
    const csr = await csrPem();
    const good = await post(koa, 'authsign', authenticated({ certificate_request: csr, label: 'a' }, KEY_A));
    expect(new X509Certificate(good.json.result.certificate).checkIssued(new X509Certificate(caA.pem))).toBe(true);
    // A's key does not sign for the default label, whose `secure` profile has another key.
    const foreign = await post(koa, 'authsign', authenticated({ certificate_request: csr, profile: 'secure' }, KEY_A));
    expect(foreign.json.errors).toEqual([{ code: 400, message: 'invalid token' }]);
    const own = await post(koa, 'authsign', authenticated({ certificate_request: csr, profile: 'secure' }, KEY_DEFAULT));
    expect(new X509Certificate(own.json.result.certificate).checkIssued(new X509Certificate(caDefault.pem))).toBe(true);
  });
});

describe('info', () => {
  it('answers the CA of the label with the profile usages and expiry; remote signers answer themselves', async () => {
    const infos: InfoRequest[] = [];
    const koa = app([
      { label: 'default', signer: localSigner(caDefault), policy: policy() },
      { label: 'r', signer: remoteSigner([], infos), policy: policy() },
    ]);
    const local = await post(koa, 'info', { Profile: 'secure' });
    expect(local.json.result).toEqual({ certificate: caDefault.pem.trim(), usages: ['client auth'], expiry: '1h' });
    const remote = await post(koa, 'info', { label: 'r' });
    expect(remote.json.result.usages).toEqual(['remote']);
    expect(infos).toEqual([{ profile: '', label: 'r' }]);
    expect((await post(koa, 'info', { label: 5 })).json.errors).toEqual([
      { code: 400, message: 'json: cannot unmarshal number into Go struct field Req.label of type string' },
    ]);
  });
});
