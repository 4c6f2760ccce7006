/**
 * The CFSSL-style commands run in-process through commander with injected stdio: flags, outputs,
 * exit codes. The built CLI in real pipelines (with openssl, cfssl and cfssljson) is covered by
 * `test/cli-*.test.ts`.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_HOSTS_MESSAGE } from '@certsmith/issuer';
import { registerBundleCommand } from './bundle.js';
import { registerCertinfoCommand } from './certinfo.js';
import type { CommandIo } from './common.js';
import { registerGencertCommand } from './gencert.js';
import { registerGenkeyCommand } from './genkey.js';
import { registerSignCommand } from './sign.js';

let dir: string;

interface Run {
  out: string;
  err: string;
  /** Exit code set by the command (undefined = 0), or commander's for usage errors. */
  code: number | undefined;
  json(): Record<string, string>;
}

async function cli(args: string[], stdin = ''): Promise<Run> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const io: Partial<CommandIo> = {
    stdout: (text) => void (out += text),
    stderr: (text) => void (err += text),
    readStdin: async () => Buffer.from(stdin),
    stderrIsTty: () => false,
    setExitCode: (value) => void (code = value),
    cwd: () => dir,
    env: {},
  };
  const program = new Command().exitOverride().configureOutput({ writeErr: (text) => void (err += text), writeOut: (text) => void (out += text) });
  for (const register of [registerGencertCommand, registerGenkeyCommand, registerSignCommand, registerBundleCommand, registerCertinfoCommand]) register(program, io);
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = error.exitCode;
  }
  return { out, err, code, json: () => JSON.parse(out) as Record<string, string> };
}

const CSR = { CN: 'www.example.com', hosts: ['www.example.com', '127.0.0.1'], names: [{ C: 'US', O: 'Example' }] };
let caCert: X509Certificate;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-commands-'));
  await writeFile(join(dir, 'ca-csr.json'), JSON.stringify({ CN: 'Commands CA', ca: { pathlen: 0, pathlenzero: true } }));
  await writeFile(join(dir, 'csr.json'), JSON.stringify(CSR));
  await writeFile(
    join(dir, 'cfssl.json'),
    JSON.stringify({ signing: { default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth'] }, profiles: { client: { expiry: '1h', usages: ['signing', 'client auth'] } } } }),
  );
  const ca = await cli(['gencert', '-initca', 'ca-csr.json']);
  expect(ca.code).toBeUndefined();
  await writeFile(join(dir, 'ca.pem'), ca.json()['cert']!);
  await writeFile(join(dir, 'ca-key.pem'), ca.json()['key']!);
  caCert = new X509Certificate(ca.json()['cert']!);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('gencert', () => {
  it('prints {"cert","csr","key"} signed by -ca under the -config profile, -hostname replacing the hosts', async () => {
    const run = await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-config', 'cfssl.json', '-profile', 'client', '-hostname', 'a.example,10.0.0.7', 'csr.json']);
    expect(run.err).toBe('');
    expect(run.out.endsWith('}\n')).toBe(true);
    expect(Object.keys(run.json())).toEqual(['cert', 'csr', 'key']);
    const certificate = new X509Certificate(run.json()['cert']!);
    expect(certificate.verify(caCert.publicKey)).toBe(true);
    expect(certificate.checkPrivateKey((await import('node:crypto')).createPrivateKey(run.json()['key']!))).toBe(true);
    expect(certificate.subjectAltName).toBe('DNS:a.example, IP Address:10.0.0.7');
    expect(certificate.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(Date.parse(certificate.validTo) - Date.parse(certificate.validFrom)).toBe(3_600_000);
  });

  it('reads the CSR JSON from stdin and warns about a missing hosts field unless -loglevel hides it', async () => {
    const warned = await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-'], JSON.stringify({ CN: 'nohosts' }));
    expect(warned.code).toBeUndefined();
    expect(warned.err).toBe(`certsmith gencert: warning: ${NO_HOSTS_MESSAGE}\n`);
    const quiet = await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-loglevel', '3', '-'], JSON.stringify({ CN: 'nohosts' }));
    expect(quiet.err).toBe('');
  });

  it('signs with a signers entry of a certsmith -config, chosen by -label', async () => {
    await writeFile(
      join(dir, 'certsmith.json'),
      JSON.stringify({ signers: { edge: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem' } } } }),
    );
    const run = await cli(['gencert', '-config', 'certsmith.json', '-label', 'edge', 'csr.json']);
    expect(run.err).toBe('');
    expect(new X509Certificate(run.json()['cert']!).verify(caCert.publicKey)).toBe(true);
    const unknown = await cli(['gencert', '-config', 'certsmith.json', '-label', 'nope', 'csr.json']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.err)).toMatchObject({ code: 5200, message: expect.stringContaining('unknown label "nope"') });
  });

  it('exits 2 with a coded JSON line when the operation fails, 1 for usage errors', async () => {
    const profile = await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-profile', 'nope', 'csr.json']);
    expect([profile.code, profile.err, profile.out]).toEqual([2, '{"code":5400,"message":"Unknown policy profile"}\n', '']);
    const weak = await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-'], '{"CN":"x","key":{"algo":"rsa","size":1024}}');
    expect([weak.code, weak.err]).toEqual([2, '{"code":2400,"message":"RSA key is too weak"}\n']);
    const missing = await cli(['gencert', '-ca', 'missing.pem', '-ca-key', 'ca-key.pem', 'csr.json']);
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.err)).toMatchObject({ code: 1001, message: expect.stringMatching(/^--ca: /) });
    const caSection = await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', 'ca-csr.json']);
    expect(caSection.err).toBe('{"code":400,"message":"ca section only permitted in initca"}\n');
    const noCa = await cli(['gencert', 'csr.json']);
    expect(noCa.code).toBe(1);
    expect(noCa.err).toMatch(/^error: need a CA certificate/);
    const onlyCa = await cli(['gencert', '-ca', 'ca.pem', 'csr.json']);
    expect([onlyCa.code, onlyCa.err.split('\n')[0]]).toEqual([1, 'error: need a CA key (provide one with -ca-key)']);
    expect((await cli(['gencert', '-bogus', 'csr.json'])).code).toBe(1);
    expect((await cli(['gencert'])).code).toBe(1);
    const badJson = await cli(['gencert', '-initca', '-'], '{');
    expect(JSON.parse(badJson.err)).toMatchObject({ code: 400, message: expect.stringMatching(/^CSRJSON: invalid JSON: /) });
  });

  it('re-issues a CA certificate for an existing key with -initca -ca-key', async () => {
    const run = await cli(['gencert', '-initca', '-ca-key', 'ca-key.pem', 'ca-csr.json']);
    expect(Object.keys(run.json())).toEqual(['cert', 'csr']);
    expect(new X509Certificate(run.json()['cert']!).publicKey.equals(caCert.publicKey)).toBe(true);
  });
});

describe('genkey and sign', () => {
  it('genkey prints {"csr","key"}; sign prints {"cert","csr"} with the subject file and hosts applied', async () => {
    const genkey = await cli(['genkey', 'csr.json']);
    expect(Object.keys(genkey.json())).toEqual(['csr', 'key']);
    await writeFile(join(dir, 'www.csr'), genkey.json()['csr']!);
    await writeFile(join(dir, 'subject.json'), JSON.stringify({ CN: 'renamed.example', names: [{ O: 'Renamed' }] }));
    const sign = await cli(['sign', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-hostname', 'b.example', 'www.csr', 'subject.json']);
    expect(sign.err).toBe('');
    expect(Object.keys(sign.json())).toEqual(['cert', 'csr']);
    expect(sign.json()['csr']).toBe(genkey.json()['csr']);
    const certificate = new X509Certificate(sign.json()['cert']!);
    expect(certificate.subject).toBe('C=US\nO=Renamed\nCN=renamed.example');
    expect(certificate.subjectAltName).toBe('DNS:b.example');
    expect(certificate.verify(caCert.publicKey)).toBe(true);
    // --csr takes precedence; then the first argument is the subject.
    const flagged = await cli(['sign', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-csr', 'www.csr', 'subject.json']);
    expect(new X509Certificate(flagged.json()['cert']!).subject).toContain('CN=renamed.example');
    expect((await cli(['sign', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem'])).code).toBe(1);
    const garbage = await cli(['sign', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-'], 'not a csr');
    expect(garbage.code).toBe(2);
    expect(JSON.parse(garbage.err).code).toBeGreaterThanOrEqual(9000);
  });
});

describe('certinfo and bundle', () => {
  it('certinfo -cert prints the certinfo JSON indented; a missing file is 1001', async () => {
    await writeFile(join(dir, 'leaf.pem'), (await cli(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', 'csr.json'])).json()['cert']!);
    const run = await cli(['certinfo', '-cert', 'leaf.pem']);
    expect(run.out).toMatch(/^\{\n {2}"subject": \{\n {4}"common_name": "www.example.com",/);
    expect(run.json()).toMatchObject({ sans: ['www.example.com', '127.0.0.1'], sigalg: 'ECDSAWithSHA256' });
    const missing = await cli(['certinfo', '-cert', 'nope.pem']);
    expect([missing.code, JSON.parse(missing.err)]).toEqual([2, { code: 1001, message: '--cert: cannot read file "nope.pem" (ENOENT)' }]);
    expect((await cli(['certinfo'])).code).toBe(1);
  });

  it('bundle -cert builds the chain to -ca-bundle; a self-signed certificate is 1100', async () => {
    const run = await cli(['bundle', '-cert', 'leaf.pem', '-ca-bundle', 'ca.pem']);
    expect(run.err).toBe('');
    expect(run.code).toBeUndefined();
    const result = JSON.parse(run.out) as { root: string; crt: string; status: { code: number }; hostnames: string[] };
    expect(result.root).toBe((await readFile(join(dir, 'ca.pem'), 'utf8')).trim());
    expect(result.hostnames).toEqual(['www.example.com']);
    const selfSigned = await cli(['bundle', '-cert', 'ca.pem', '-ca-bundle', 'ca.pem']);
    expect([selfSigned.code, selfSigned.err]).toEqual([2, '{"code":1100,"message":"Certificate is self signed"}\n']);
    expect((await cli(['bundle'])).code).toBe(1);
    expect((await cli(['bundle', '-key', 'ca-key.pem', '-domain', 'x'])).code).toBe(1);
  });
});
