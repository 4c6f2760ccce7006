/**
 * sign, authsign and info with three labels, each with its own CA and its own auth keys (behaviour
 * doc 4.4, 4.5, 7.10; CFSSL issues #788 and #950), against the real built server:
 *
 * - `default`: `--config`'s signing section (default profile open, `secure` needs `main`, with
 *   `old` as the previous key), tuple form `[plugin, options]`;
 * - `a`: its own inline `signing` section whose default profile needs `akey`;
 * - `b`: its own CFSSL config file (`config`), default profile needing `bkey` from a `file:` secret.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_BUNDLER_MESSAGE } from '@certsmith/issuer';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import {
  TLS_USAGES,
  authenticatedRequest,
  certificateText,
  createScratch,
  makeCsr,
  makeRootCa,
  post,
  startServer,
  verifyCertificate,
} from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';

const MAIN_KEY = '00112233445566778899aabbccddeeff';
const OLD_KEY = 'aabbccddeeff00112233445566778899';
const A_KEY = '0f0e0d0c0b0a09080706050403020100';
const B_KEY = 'f0e0d0c0b0a090807060504030201000';

let scratch: Scratch;
let caDefault: OpensslCa;
let caA: OpensslCa;
let caB: OpensslCa;
let server: Server;
let csrPem: string;

beforeAll(async () => {
  scratch = await createScratch('sign');
  [caDefault, caA, caB] = await Promise.all([makeRootCa(scratch, 'default'), makeRootCa(scratch, 'a'), makeRootCa(scratch, 'b')]);
  await scratch.write('old.key', `${OLD_KEY}\n`);
  await scratch.write('b.key', `${B_KEY}\n`);
  await scratch.write('b-config.json', {
    signing: { default: { expiry: '48h', usages: TLS_USAGES, auth_key: 'bkey' } },
    auth_keys: { bkey: { type: 'standard', key: 'file:b.key' } },
  });
  const config = await scratch.write('certsmith.json', {
    signing: {
      default: { expiry: '8760h', usages: TLS_USAGES },
      profiles: { secure: { expiry: '24h', usages: TLS_USAGES, auth_key: 'main', prev_auth_key: 'old' } },
    },
    auth_keys: {
      main: { type: 'standard', key: 'env:E2E_MAIN_KEY' },
      old: { type: 'standard', key: 'file:old.key' },
      akey: { type: 'standard', key: 'env:E2E_A_KEY' },
    },
    signers: {
      default: ['@certsmith/signer-local', { certFile: 'default.pem', keyFile: 'default-key.pem' }],
      a: {
        plugin: '@certsmith/signer-local',
        options: { certFile: 'a.pem', keyFile: 'env:E2E_A_CA_KEY' },
        signing: { default: { expiry: '8760h', usages: TLS_USAGES, auth_key: 'akey' } },
      },
      b: { plugin: '@certsmith/signer-local', options: { certFile: 'b.pem', keyFile: 'b-key.pem' }, config: 'b-config.json' },
    },
  });
  server = await startServer(['--config', config, '--data-dir', scratch.path('data')], {
    E2E_MAIN_KEY: MAIN_KEY,
    E2E_A_KEY: A_KEY,
    E2E_A_CA_KEY: await readFile(caA.keyFile, 'utf8'),
  });
  csrPem = (await makeCsr(scratch, 'leaf', 'leaf.example')).csrPem;
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

async function expectIssuedBy(certificatePem: string, ca: OpensslCa): Promise<string> {
  expect(await verifyCertificate(scratch, certificatePem, ca.certFile)).toMatch(/: OK\n$/);
  return certificateText(scratch, certificatePem);
}

function validityHours(text: string): number {
  const notBefore = Date.parse(/Not Before: (.*)\n/.exec(text)![1]!);
  const notAfter = Date.parse(/Not After : (.*)\n/.exec(text)![1]!);
  return (notAfter - notBefore) / 3_600_000;
}

describe('sign', () => {
  it('signs a CSR with hosts and subject overrides (behaviour doc 7.10)', async () => {
    const { envelope } = await post(server.url, 'sign', {
      certificate_request: csrPem,
      hosts: ['override.example', '10.1.1.1'],
      subject: { CN: 'override', names: [{ O: 'OverrideOrg' }] },
    });
    expect(Object.keys(envelope.result)).toEqual(['certificate']);
    expect(envelope.result.certificate).toMatch(/-----END CERTIFICATE-----\n$/);
    const text = await expectIssuedBy(envelope.result.certificate, caDefault);
    expect(text).toContain('Subject: CN=override,O=OverrideOrg');
    expect(text).toContain('DNS:override.example, IP Address:10.1.1.1');
  });

  it('lets the comma-separated hostname win over hosts', async () => {
    const { envelope } = await post(server.url, 'sign', { certificate_request: csrPem, hosts: ['ignored.example'], hostname: 'h1.example,h2.example' });
    expect(await expectIssuedBy(envelope.result.certificate, caDefault)).toContain('DNS:h1.example, DNS:h2.example');
  });

  it.each([
    [{}, 400, "missing parameter 'certificate_request'"],
    [{ certificate_request: 'garbage' }, 9002, 'CSR Decode failed'],
    [{ certificate_request: 5 }, 400, 'Unable to parse sign request'],
    [{ certificate_request: 'x', profile: 'nosuch' }, 5400, 'Unknown policy profile'],
    [{ certificate_request: 'x', label: 'nosuch' }, 5200, 'unknown label "nosuch": no signer is configured for it'],
  ])('refuses %j with %i', async (body, code, message) => {
    const { status, envelope } = await post(server.url, 'sign', body);
    expect(status).toBe(400);
    expect(envelope.errors).toEqual([{ code, message }]);
  });

  it('requires authentication for a profile or a label whose policy has an auth_key', async () => {
    for (const body of [{ profile: 'secure' }, { label: 'a' }, { label: 'b' }]) {
      const { envelope } = await post(server.url, 'sign', { certificate_request: csrPem, ...body });
      expect(envelope.errors).toEqual([{ code: 400, message: 'authentication required' }]);
    }
  });

  it('answers the no-bundler message when a bundle is asked and the server has no bundler', async () => {
    const { envelope } = await post(server.url, 'sign', { certificate_request: csrPem, bundle: true });
    expect(envelope.messages).toEqual([{ code: 5300, message: NO_BUNDLER_MESSAGE }]);
    expect(Object.keys(envelope.result)).toEqual(['certificate']);
  });
});

describe('authsign', () => {
  it('signs with the profile auth_key and with its prev_auth_key', async () => {
    for (const key of [MAIN_KEY, OLD_KEY]) {
      const { envelope } = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, profile: 'secure', hosts: ['secure.example'] }, key));
      expect(envelope.errors).toEqual([]);
      const text = await expectIssuedBy(envelope.result.certificate, caDefault);
      expect(validityHours(text)).toBe(24);
      expect(text).toContain('DNS:secure.example');
    }
  });

  it('signs for each label with that label\'s own key and CA', async () => {
    const a = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, label: 'a' }, A_KEY));
    await expectIssuedBy(a.envelope.result.certificate, caA);
    const b = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, label: 'b' }, B_KEY));
    expect(validityHours(await expectIssuedBy(b.envelope.result.certificate, caB))).toBe(48);
  });

  it.each([
    ['a wrong key', { certificate_request: 'x', profile: 'secure' }, 'ffffffffffffffffffffffffffffffff', 'invalid token'],
    ["label a's key for label b (CFSSL #950)", { certificate_request: 'x', label: 'b' }, A_KEY, 'invalid token'],
    ["label b's key for label a", { certificate_request: 'x', label: 'a' }, B_KEY, 'invalid token'],
    ["the default label's key for label a", { certificate_request: 'x', label: 'a' }, MAIN_KEY, 'invalid token'],
    ["label a's key for the default label", { certificate_request: 'x', profile: 'secure' }, A_KEY, 'invalid token'],
    ['a profile without auth_key', { certificate_request: 'x' }, MAIN_KEY, 'no authentication provider'],
    ['a request without CSR', { profile: 'secure' }, MAIN_KEY, "missing parameter 'certificate_request'"],
  ])('refuses %s', async (_name, inner, key, message) => {
    const { status, envelope } = await post(server.url, 'authsign', authenticatedRequest(inner, key));
    expect(status).toBe(400);
    expect(envelope.errors).toEqual([{ code: 400, message }]);
  });

  it('refuses an unknown label and an unparsable inner request', async () => {
    expect((await post(server.url, 'authsign', authenticatedRequest({ certificate_request: 'x', label: 'zz' }, MAIN_KEY))).envelope.errors[0]!.code).toBe(5200);
    const garbage = { token: 'AAAA', request: Buffer.from('not json').toString('base64') };
    expect((await post(server.url, 'authsign', garbage)).envelope.errors).toEqual([{ code: 400, message: 'Unable to parse authenticated sign request' }]);
  });

  it('reads bundle from the inner request', async () => {
    const { envelope } = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, profile: 'secure', bundle: true }, MAIN_KEY));
    expect(envelope.success).toBe(true);
    expect(envelope.messages).toEqual([{ code: 5300, message: NO_BUNDLER_MESSAGE }]);
  });
});

describe('newcert with auth keys (CFSSL #788)', () => {
  it('refuses unauthenticated newcert for a profile or a label that needs a token', async () => {
    for (const body of [{ profile: 'secure' }, { label: 'a' }, { label: 'b' }]) {
      const { status, envelope } = await post(server.url, 'newcert', { request: { CN: 'x', hosts: ['x.example'] }, ...body });
      expect(status).toBe(400);
      expect(envelope.errors).toEqual([{ code: 400, message: 'authentication required' }]);
    }
    const open = await post(server.url, 'newcert', { request: { CN: 'x', hosts: ['x.example'] } });
    await expectIssuedBy(open.envelope.result.certificate, caDefault);
  });

  it('disables sign and keeps newcert refusing when every profile needs a token', async () => {
    const config = await scratch.write('all-auth.json', {
      signing: { default: { expiry: '1h', usages: TLS_USAGES, auth_key: 'k' } },
      auth_keys: { k: { type: 'standard', key: MAIN_KEY } },
    });
    const locked = await startServer(['--config', config, '--ca', caDefault.certFile, '--ca-key', caDefault.keyFile, '--data-dir', scratch.path('data2')]);
    try {
      const sign = await fetch(`${locked.url}/api/v1/cfssl/sign`, { method: 'POST', body: '{}' });
      expect(sign.status).toBe(404);
      expect((await post(locked.url, 'newcert', { request: { CN: 'x' } })).envelope.errors).toEqual([{ code: 400, message: 'authentication required' }]);
      const signed = await post(locked.url, 'authsign', authenticatedRequest({ certificate_request: csrPem }, MAIN_KEY));
      expect(validityHours(await expectIssuedBy(signed.envelope.result.certificate, caDefault))).toBe(1);
    } finally {
      await locked.stop();
    }
  });
});

describe('info and health per label', () => {
  it('answers each label\'s CA and policy', async () => {
    expect((await post(server.url, 'info', { label: 'a' })).envelope.result).toEqual({ certificate: caA.certificatePem.trim(), usages: TLS_USAGES, expiry: '8760h' });
    expect((await post(server.url, 'info', { label: 'b' })).envelope.result).toMatchObject({ certificate: caB.certificatePem.trim(), expiry: '48h' });
    expect((await post(server.url, 'info', { profile: 'secure' })).envelope.result).toMatchObject({ certificate: caDefault.certificatePem.trim(), expiry: '24h' });
    expect((await post(server.url, 'info', { label: 'zz' })).envelope.errors[0]!.code).toBe(5200);
  });

  it('lists every label in health', async () => {
    const body = (await (await fetch(`${server.url}/api/v1/cfssl/health`)).json()) as { result: unknown };
    expect(body.result).toEqual({ healthy: true, signers: { default: { healthy: true }, a: { healthy: true }, b: { healthy: true } }, store: { healthy: true, driver: 'sqlite3' } });
  });
});
