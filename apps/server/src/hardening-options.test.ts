/**
 * The TLS, endpoint-control and signer-timeout options of `serve`: flag parsing (CFSSL single-dash
 * spellings included), validation in `resolveServerOptions` (usage errors naming the flag), the
 * TLS files checked by `startServer`, and `--disable` / `--require-auth` applied to the operations.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeHttpServer, createApp, createHttpServer, defineOperation, listen } from '@certsmith/http-api';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import type { AnyOperation } from '@certsmith/http-api';
import type { CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyEndpointControls } from './operations.js';
import { parseEndpointList, resolveServerOptions } from './server-options.js';
import type { ServerOptionsInput } from './server-options.js';
import { startServer } from './start-server.js';
import { parseServe } from './test-support/parse-serve.js';

let dir: string;
let files: { cert: string; key: string; otherKey: string; clientCa: string; garbage: string };

/** A P-256 key and self-signed certificate made by the openssl CLI (no test-only dependency). */
function opensslCertificate(name: string): void {
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-keyout', join(dir, `${name}-key.pem`), '-out', join(dir, `${name}.pem`), '-subj', `/CN=${name}`,
  ], { stdio: 'ignore', timeout: 30_000 });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-hardening-options-'));
  opensslCertificate('tls');
  opensslCertificate('other');
  await writeFile(join(dir, 'garbage.pem'), 'hello\n');
  files = {
    cert: join(dir, 'tls.pem'),
    key: join(dir, 'tls-key.pem'),
    otherKey: join(dir, 'other-key.pem'),
    clientCa: join(dir, 'other.pem'),
    garbage: join(dir, 'garbage.pem'),
  };
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});


describe('serve flags', () => {
  it('maps the TLS, endpoint and timeout flags, CFSSL single-dash spellings included', async () => {
    await expect(
      parseServe([
        '-tls-cert', 'c.pem', '-tls-key=k.pem', '-min-tls-version', '1.3', '-mutual-tls-ca', 'ca.pem',
        '-mutual-tls-cn', '^ops-', '-disable', 'newcert, sign,,scan', '--require-auth', 'sign', '--signer-timeout', '1500',
      ]),
    ).resolves.toEqual({
      tlsCertFile: 'c.pem',
      tlsKeyFile: 'k.pem',
      minTlsVersion: '1.3',
      mutualTlsCaFile: 'ca.pem',
      mutualTlsCn: '^ops-',
      disable: ['newcert', 'sign', 'scan'],
      requireAuth: ['sign'],
      signerTimeoutMs: 1500,
    });
  });

  it('refuses TLS 1.0/1.1 and a zero timeout as usage errors', async () => {
    await expect(parseServe(['-min-tls-version', '1.1'])).rejects.toMatchObject({ code: 'commander.invalidArgument' } satisfies Partial<CommanderError>);
    await expect(parseServe(['--signer-timeout', '0'])).rejects.toMatchObject({ code: 'commander.invalidArgument' });
  });
});

describe('resolveServerOptions: TLS and endpoint controls', () => {
  const base = (): ServerOptionsInput => ({ dataDir: join(dir, 'data') });

  it('defaults: no TLS, TLS 1.2 minimum, nothing disabled, 30 s signer timeout', async () => {
    const options = await resolveServerOptions(base());
    expect(options).toMatchObject({ minTlsVersion: '1.2', disable: [], requireAuth: [], signerTimeoutMs: 30_000 });
    expect(options.tlsCertFile).toBeUndefined();
  });

  it('resolves the TLS files to absolute paths', async () => {
    const options = await resolveServerOptions({ ...base(), tlsCertFile: files.cert, tlsKeyFile: files.key, mutualTlsCaFile: files.clientCa, mutualTlsCn: 'x' });
    expect(options).toMatchObject({ tlsCertFile: files.cert, tlsKeyFile: files.key, mutualTlsCaFile: files.clientCa, mutualTlsCn: 'x' });
  });

  it.each([
    [{ tlsCertFile: 'c.pem' }, '--tls-cert: needs --tls-key too'],
    [{ tlsKeyFile: 'k.pem' }, '--tls-key: needs --tls-cert too'],
    [{ mutualTlsCaFile: 'ca.pem' }, '--mutual-tls-ca: needs --tls-cert and --tls-key'],
    [{ mutualTlsCn: '^a' }, '--mutual-tls-cn: needs --mutual-tls-ca'],
    [{ minTlsVersion: '1.0' as never }, '--min-tls-version: must be 1.2 or 1.3'],
    [{ disable: ['newcert', 'health'] }, '--disable: health cannot be disabled'],
    [{ requireAuth: ['info'] }, '--require-auth: must list endpoints among newcert, sign'],
    [{ signerTimeoutMs: 0 }, '--signer-timeout: must be an integer'],
  ])('refuses %j', async (input, message) => {
    await expect(resolveServerOptions({ ...base(), ...input })).rejects.toMatchObject({ code: 400, exitCode: 1, message: expect.stringContaining(message) });
  });

  it('refuses a malformed CN expression and unreadable TLS files with the flag', async () => {
    await expect(
      resolveServerOptions({ ...base(), tlsCertFile: files.cert, tlsKeyFile: files.key, mutualTlsCaFile: files.clientCa, mutualTlsCn: '(' }),
    ).rejects.toMatchObject({ code: 400, message: expect.stringContaining('--mutual-tls-cn: malformed CN regex') });
    await expect(resolveServerOptions({ ...base(), tlsCertFile: join(dir, 'missing.pem'), tlsKeyFile: files.key })).rejects.toMatchObject({
      code: 1001,
      message: expect.stringContaining('--tls-cert: cannot read file'),
    });
    await expect(resolveServerOptions({ ...base(), tlsCertFile: files.cert, tlsKeyFile: join(dir, 'missing.pem') })).rejects.toMatchObject({ code: 2001 });
  });

  it('splits endpoint lists as CFSSL does, dropping empty names', () => {
    expect(parseEndpointList('a,,b, a ')).toEqual(['a', 'b']);
    expect(parseEndpointList(['a,b', 'c'])).toEqual(['a', 'b', 'c']);
  });
});

describe('startServer: TLS file contents', () => {
  it('refuses a key that does not match the certificate (2300) and a non-PEM client CA (4002), before listening', async () => {
    const common = { port: 0, workers: 1, dataDir: join(dir, 'data') };
    await expect(startServer({ ...common, tlsCertFile: files.cert, tlsKeyFile: files.otherKey })).rejects.toMatchObject({
      code: 2300,
      exitCode: 1,
      message: expect.stringMatching(/^--tls-key: the private key does not match/),
    });
    await expect(startServer({ ...common, tlsCertFile: files.cert, tlsKeyFile: files.key, mutualTlsCaFile: files.garbage })).rejects.toMatchObject({
      code: 4002,
      message: expect.stringMatching(/^--mutual-tls-ca: /),
    });
    await expect(startServer({ ...common, tlsCertFile: files.garbage, tlsKeyFile: files.key })).rejects.toMatchObject({ code: 1002 });
  });

  it('serves HTTPS and reports it', async () => {
    const server = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), logLevel: 'silent', tlsCertFile: files.cert, tlsKeyFile: files.key });
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await server.close();
    }
  });
});

describe('applyEndpointControls', () => {
  const operation = (name: string): AnyOperation =>
    defineOperation({ name, method: 'POST', body: undefined, handle: () => ({ served: name }) });

  it('removes disabled endpoints, tolerates names certsmith does not serve, and logs both', () => {
    const logged: string[] = [];
    const logger = { info: (_: unknown, message: string) => logged.push(message) } as never;
    const result = applyEndpointControls([operation('health'), operation('newcert'), operation('sign')], { disable: ['newcert', 'scan'], requireAuth: [] }, logger);
    expect(result.map((o) => o.name)).toEqual(['health', 'sign']);
    expect(logged).toEqual([
      "endpoint 'newcert' is explicitly disabled (--disable)",
      "--disable scan: certsmith does not serve 'scan' here; nothing to disable",
    ]);
  });

  it('makes --require-auth endpoints answer 400 authentication required without reading the body', async () => {
    const operations = applyEndpointControls([operation('newcert'), operation('sign'), operation('authsign')], { disable: [], requireAuth: ['newcert', 'sign'] });
    const app = createApp({ operations, taskRunner: createInlineTaskRunner() });
    const server = createHttpServer(app);
    const { url } = await listen(server, 0, '127.0.0.1');
    try {
      for (const name of ['newcert', 'sign']) {
        const response = await fetch(`${url}/api/v1/cfssl/${name}`, { method: 'POST', body: 'not even JSON' });
        expect(response.status).toBe(400);
        expect(await response.json()).toEqual({ success: false, result: null, errors: [{ code: 400, message: 'authentication required' }], messages: [] });
        // The method check still applies: the endpoint exists.
        expect((await fetch(`${url}/api/v1/cfssl/${name}`)).status).toBe(405);
      }
      const authsign = await fetch(`${url}/api/v1/cfssl/authsign`, { method: 'POST', body: '{}' });
      expect(await authsign.json()).toMatchObject({ success: true, result: { served: 'authsign' } });
    } finally {
      await closeHttpServer(server, { timeoutMs: 2000 });
    }
  });
});
