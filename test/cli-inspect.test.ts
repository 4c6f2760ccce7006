/**
 * The built `certsmith` CLI next to a running `certsmith serve` (started once): `bundle` and
 * `certinfo` print exactly the endpoint's `result` for the same input and trust flags, `--domain`
 * against a loopback TLS server, `gencert -remote`, `split` of an API envelope (compared with
 * cfssljson), `config check` on good and bad files, and progress on a terminal only.
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, startCertsmith, type StartedCertsmith } from './helpers/certsmith-process.js';
import { cliShell } from './helpers/cli-shell.js';

let dir: string;
let server: StartedCertsmith;
let tlsServer: Server;
let tlsPort: number;

/** Run `script` with bash (pipefail) in the test folder; `$CS` is the built CLI. Bounded. */
const sh = cliShell(() => dir);

async function api(operation: string, body: unknown): Promise<{ success: boolean; result: unknown; errors: unknown[] }> {
  const response = await fetch(`${server.url}/api/v1/cfssl/${operation}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  return (await response.json()) as { success: boolean; result: unknown; errors: unknown[] };
}

const pki = new TestPki({ now: new Date() });
const root = pki.root('certsmith CLI Inspect Root', { key: 'ecdsa-p256' });
const leaf = pki.leaf('www.inspect.test', root, { ips: ['127.0.0.1'] });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-cli-inspect-'));
  await writeFile(join(dir, 'ca.pem'), root.pem);
  await writeFile(join(dir, 'ca-key.pem'), root.key.pkcs8Pem, { mode: 0o600 });
  await writeFile(join(dir, 'www.pem'), leaf.pem);
  await writeFile(join(dir, 'www-key.pem'), leaf.key.pkcs8Pem, { mode: 0o600 });
  await writeFile(join(dir, 'csr.json'), JSON.stringify({ CN: 'remote.inspect.test', hosts: ['remote.inspect.test'] }));
  tlsServer = createServer({ cert: leaf.pem, key: leaf.key.pkcs8Pem }, (socket) => socket.end());
  tlsServer.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => tlsServer.listen(0, '127.0.0.1', resolve));
  tlsPort = (tlsServer.address() as AddressInfo).port;
  server = await startCertsmith(
    ['-port', '0', '-ca', join(dir, 'ca.pem'), '-ca-key', join(dir, 'ca-key.pem'), '-ca-bundle', join(dir, 'ca.pem'), '-data-dir', join(dir, 'data'), '-workers', '1', '-loglevel', '3'],
    60_000,
  );
});

afterAll(async () => {
  await killAllCertsmith();
  await new Promise<void>((resolve) => (tlsServer ? tlsServer.close(() => resolve()) : resolve()));
  await rm(dir, { recursive: true, force: true });
});

describe('bundle and certinfo equal the endpoint results', () => {
  it('bundle --cert --key with the server\'s --ca-bundle prints the /bundle result; certinfo --cert the /certinfo result', async () => {
    const [bundle, certinfo, endpointBundle, endpointCertinfo] = await Promise.all([
      sh('$CS bundle --cert www.pem --key www-key.pem --ca-bundle ca.pem'),
      sh('$CS certinfo --cert www.pem'),
      api('bundle', { certificate: leaf.pem, private_key: leaf.key.pkcs8Pem }),
      api('certinfo', { certificate: leaf.pem }),
    ]);
    expect(bundle.stderr).toBe('');
    expect(endpointBundle.success).toBe(true);
    expect(JSON.parse(bundle.stdout)).toEqual(endpointBundle.result);
    expect(bundle.stdout).toBe(`${JSON.stringify(endpointBundle.result)}\n`);
    expect(certinfo.stderr).toBe('');
    expect(JSON.parse(certinfo.stdout)).toEqual(endpointCertinfo.result);
    expect(certinfo.stdout).toBe(`${JSON.stringify(endpointCertinfo.result, null, 2)}\n`);
  });

  it('--domain reads the chain of a loopback TLS server; split -bare writes NAME-bundle.pem', async () => {
    const [certinfo, bundle] = await Promise.all([
      sh(`$CS certinfo -domain 127.0.0.1:${tlsPort}`),
      sh(`$CS bundle -domain 127.0.0.1:${tlsPort} -ca-bundle ca.pem | tee remote-bundle.json | $CS split -bare remote`),
    ]);
    expect(certinfo.code).toBe(0);
    expect(JSON.parse(certinfo.stdout)).toMatchObject({ subject: { common_name: 'www.inspect.test' }, sans: ['www.inspect.test', '127.0.0.1'] });
    expect(bundle).toEqual({ code: 0, stdout: '', stderr: '' });
    const result = JSON.parse(await readFile(join(dir, 'remote-bundle.json'), 'utf8')) as { root: string; status: { code: number } };
    expect(result.root).toBe(root.pem.trim());
    expect(await readFile(join(dir, 'remote-bundle.pem'), 'utf8')).toBe(leaf.pem.trim());
  });

  it('shows progress on a terminal only (the runs above were piped and silent)', async () => {
    const tty = await sh("script -qec '$CS bundle -cert www.pem -ca-bundle ca.pem > tty-bundle.json' /dev/null");
    expect(tty.code).toBe(0);
    expect(tty.stdout).toContain('certsmith bundle: loading trust bundles…');
    expect(JSON.parse(await readFile(join(dir, 'tty-bundle.json'), 'utf8'))).toMatchObject({ root: root.pem.trim() });
  });
});

describe('against the running server', () => {
  it('gencert -remote signs on the server; an unknown label is the server\'s coded error', async () => {
    const [issued, unknownLabel] = await Promise.all([
      sh(`$CS gencert -remote ${server.url} csr.json | $CS split -bare remote-issued`),
      sh(`$CS gencert -remote ${server.url} -label nope csr.json`),
    ]);
    expect(issued).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await sh('openssl verify -CAfile ca.pem remote-issued.pem')).stdout.trim()).toBe('remote-issued.pem: OK');
    expect((await stat(join(dir, 'remote-issued-key.pem'))).mode & 0o777).toBe(0o600);
    expect(unknownLabel.code).toBe(2);
    expect(JSON.parse(unknownLabel.stderr)).toMatchObject({ code: 5200, message: expect.stringContaining('unknown label "nope"') });
  });

  it('split (not -bare) takes a newcert API envelope, naming the files as cfssljson does', async () => {
    const envelope = await api('newcert', { request: { CN: 'envelope.inspect.test', hosts: ['envelope.inspect.test'] } });
    expect(envelope.success).toBe(true);
    await writeFile(join(dir, 'envelope.json'), JSON.stringify(envelope));
    const [ours, theirs] = await Promise.all([
      sh('mkdir -p ours && cd ours && $CS split -f ../envelope.json nc && ls'),
      sh('mkdir -p theirs && cd theirs && cfssljson -f ../envelope.json nc && ls'),
    ]);
    expect(ours).toMatchObject({ code: 0, stderr: '' });
    expect(ours.stdout).toBe(theirs.stdout);
    expect(ours.stdout.split('\n').filter(Boolean)).toEqual(['nc-key.pem', 'nc.csr', 'nc.pem']);
    expect(await readFile(join(dir, 'ours', 'nc.pem'), 'utf8')).toBe(await readFile(join(dir, 'theirs', 'nc.pem'), 'utf8'));
    expect((await sh('openssl verify -CAfile ca.pem ours/nc.pem')).stdout.trim()).toBe('ours/nc.pem: OK');
  });
});

describe('config check', () => {
  it('exits 0 for a valid file and 2 listing every problem with its JSON path', async () => {
    await writeFile(
      join(dir, 'good.json'),
      JSON.stringify({
        signing: { default: { expiry: '8760h', usages: ['signing', 'server auth'] }, profiles: { client: { expiry: '720h', usages: ['client auth'] } } },
        signers: { default: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem' } } },
      }),
    );
    await writeFile(
      join(dir, 'bad.json'),
      JSON.stringify({
        signing: { default: { expiry: '8760h', usages: ['signing'] }, profiles: { www: { expiry: '1y', usages: ['signing'] }, api: { expiry: '1h', usages: ['sever auth'], auth_key: 'main' } } },
        auth_keys: { main: { type: 'standard', key: 'env:CERTSMITH_CLI_TEST_UNSET_KEY' } },
        signers: { hsm: { plugin: '@acme/certsmith-signer-absent' }, default: { plugin: '@certsmith/signer-local', options: { certFile: 'missing.pem', keyFile: 'ca-key.pem' } } },
      }),
    );
    const [good, bad] = await Promise.all([sh('$CS config check good.json'), sh('$CS config check -ca-bundle missing-roots.pem bad.json')]);
    expect(good).toEqual({ code: 0, stdout: 'good.json: OK (2 profiles, 0 auth keys, 1 signer)\n', stderr: '' });
    expect(bad.code).toBe(2);
    expect(bad.stdout.split('\n').map((line) => line.split(': ')[0])).toEqual([
      'signing.profiles.www.expiry',
      'signing.profiles.api.usages',
      'signing.profiles.api.auth_key',
      'auth_keys.main.key',
      'signers.hsm.plugin',
      'signers.default.options',
      '--ca-bundle',
      'bad.json',
      '',
    ]);
    expect(bad.stdout).toContain('auth_keys.main.key: environment variable CERTSMITH_CLI_TEST_UNSET_KEY is not set\n');
    expect(bad.stdout).toContain('signing.profiles.www.expiry: time: unknown unit "y" in duration "1y"\n');
    expect(bad.stdout).toMatch(/\nbad\.json: 7 problems \(3 profiles, 1 auth key, 2 signers\)\n$/);
  });
});
