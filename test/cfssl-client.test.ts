/**
 * CFSSL's own client (Debian cfssl 1.2.0) against certsmith: `cfssl sign -remote`, `cfssl gencert
 * -remote`, and `cfssl gencert -config` with an `auth_remote` profile (authenticated `/authsign`).
 * Every certificate is checked with `openssl verify` against the CA certsmith signs with.
 *
 * Debian's 1.2.0 (built with Go 1.19) cannot parse a `-remote host:port` without a scheme
 * (`failed to connect to remote`, before any connection is made), so the remotes here are written
 * `http://127.0.0.1:<port>`, which every cfssl version accepts.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import { TLS_USAGES, certificateText, createScratch, makeCsr, makeRootCa, startServer, verifyCertificate } from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';

const run = promisify(execFile);
const AUTH_KEY = '79a5b8c3d2e1f0a1b2c3d4e5f6a7b8c9';

let scratch: Scratch;
let ca: OpensslCa;
let server: Server;

beforeAll(async () => {
  scratch = await createScratch('cfssl-client');
  ca = await makeRootCa(scratch, 'ca', 'cfssl client test CA');
  const config = await scratch.write('server.json', {
    signing: {
      default: { expiry: '8760h', usages: TLS_USAGES },
      profiles: { authd: { expiry: '12h', usages: TLS_USAGES, auth_key: 'shared' } },
    },
    auth_keys: { shared: { type: 'standard', key: AUTH_KEY } },
  });
  // CFSSL's own flags: -config, -ca, -ca-key (single dash).
  server = await startServer(['-config', config, '-ca', ca.certFile, '-ca-key', ca.keyFile, '-data-dir', scratch.path('data')]);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** Run cfssl in the scratch folder; resolves with its JSON output. */
async function cfssl(args: string[]): Promise<Record<string, string>> {
  try {
    const { stdout } = await run('cfssl', args, { cwd: scratch.dir, timeout: 60_000 });
    return JSON.parse(stdout) as Record<string, string>;
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`cfssl ${args.join(' ')} failed: ${failure.message}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}

async function expectIssued(certificatePem: string): Promise<string> {
  expect(await verifyCertificate(scratch, certificatePem, ca.certFile)).toMatch(/: OK\n$/);
  return certificateText(scratch, certificatePem);
}

describe('cfssl 1.2.0 client', () => {
  it('cfssl sign -remote signs an openssl CSR through /sign', async () => {
    const { csrFile } = await makeCsr(scratch, 'client-sign', 'signme.example');
    const output = await cfssl(['sign', '-remote', server.url, '-hostname', 'signme.example,10.9.8.7', csrFile]);
    const text = await expectIssued(output['cert']!);
    expect(text).toContain('DNS:signme.example, IP Address:10.9.8.7');
  });

  it('cfssl gencert -remote generates locally and signs through /sign', async () => {
    await scratch.write('csr.json', { CN: 'gen.example', hosts: ['gen.example', '127.0.0.1'], key: { algo: 'ecdsa', size: 256 }, names: [{ O: 'cfssl client' }] });
    const output = await cfssl(['gencert', '-remote', server.url, 'csr.json']);
    expect(output['key']).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    const text = await expectIssued(output['cert']!);
    expect(text).toContain('Subject: CN=gen.example,O=cfssl client');
    expect(text).toContain('DNS:gen.example, IP Address:127.0.0.1');
  });

  it('cfssl gencert -config with an auth_remote profile signs through /authsign', async () => {
    await scratch.write('client.json', {
      // Only remote profiles: with a local one, cfssl would want a CA key of its own (2000).
      signing: {
        default: { auth_remote: { remote: 'certsmith', auth_key: 'shared' }, expiry: '1h', usages: TLS_USAGES },
        profiles: { authd: { auth_remote: { remote: 'certsmith', auth_key: 'shared' }, expiry: '12h', usages: TLS_USAGES } },
      },
      auth_keys: { shared: { type: 'standard', key: AUTH_KEY } },
      remotes: { certsmith: server.url },
    });
    await scratch.write('csr-auth.json', { CN: 'auth.example', hosts: ['auth.example'], key: { algo: 'rsa', size: 2048 } });
    const output = await cfssl(['gencert', '-config', 'client.json', '-profile', 'authd', 'csr-auth.json']);
    const text = await expectIssued(output['cert']!);
    const notBefore = Date.parse(/Not Before: (.*)\n/.exec(text)![1]!);
    const notAfter = Date.parse(/Not After : (.*)\n/.exec(text)![1]!);
    // The server's `authd` profile (12h) signed it; `/sign` refuses that profile without a token,
    // so this went through `/authsign` and the token was checked.
    expect((notAfter - notBefore) / 3_600_000).toBe(12);
  });

  it('cfssl gencert with a wrong auth key is refused', async () => {
    await scratch.write('client-bad.json', {
      signing: { default: { auth_remote: { remote: 'certsmith', auth_key: 'wrong' }, expiry: '1h', usages: TLS_USAGES } },
      auth_keys: { wrong: { type: 'standard', key: 'ffffffffffffffffffffffffffffffff' } },
      remotes: { certsmith: server.url },
    });
    await expect(cfssl(['gencert', '-config', 'client-bad.json', '-profile', 'authd', 'csr-auth.json'])).rejects.toThrow(/invalid token/);
  });
});
