/**
 * The revocation commands in-process (injected stdio): `ocspsign`, `gencrl`, `ocspserve`, checked
 * with the openssl CLI. The built CLI against real peers is covered by `test/revocation-*.test.ts`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { openStore } from '@certsmith/cert-store';
import type { CertificateRecord } from '@certsmith/cert-store';
import { parseOcspResponse } from '@certsmith/revocation';
import { TestPki } from '@certsmith/test-pki';
import { parseCertificate } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandIo } from './common.js';
import { registerGencrlCommand } from './gencrl.js';
import { registerOcspserveCommand } from './ocspserve.js';
import { registerOcspsignCommand } from './ocspsign.js';
import { registerOcspdumpCommand } from './ocspdump.js';
import { registerOcsprefreshCommand } from './ocsprefresh.js';
import { registerRevokeCommand } from './revoke.js';

const OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const pki = new TestPki();
const ca = pki.root({ O: 'certsmith', CN: 'commands revocation CA' }, { key: 'ecdsa-p256', keyLabel: 'cmd-rev-ca' });
const responder = pki.leaf('ocsp.commands.test', ca, { key: 'ecdsa-p256', keyLabel: 'cmd-rev-responder', dns: [], extKeyUsage: [OCSP_SIGNING], keyUsage: ['digitalSignature'] });
const tlsOnly = pki.leaf('tls.commands.test', ca, { key: 'ecdsa-p256', keyLabel: 'cmd-rev-tls' });
const leaf = pki.leaf('www.commands.test', ca, { keyLabel: 'cmd-rev-leaf' });
const otherCa = pki.root({ O: 'certsmith', CN: 'commands other CA' }, { key: 'ecdsa-p256', keyLabel: 'cmd-rev-other-ca' });
const otherLeaf = pki.leaf('www.other.commands.test', otherCa, { keyLabel: 'cmd-rev-other-leaf' });
const serial = BigInt(`0x${parseCertificate(leaf.der).serialNumberHex}`);
let dir: string;
let stop: () => void = () => {};

interface Run {
  out: string;
  err: string;
  code: number | undefined;
}

async function cli(args: string[], onStdout?: (text: string) => void): Promise<Run> {
  const run: Run = { out: '', err: '', code: undefined };
  const io: Partial<CommandIo> = {
    stdout: (text) => {
      run.out += text;
      onStdout?.(text);
    },
    stderr: (text) => void (run.err += text),
    readStdin: async () => Buffer.from(''),
    stderrIsTty: () => false,
    setExitCode: (value) => void (run.code = value),
    cwd: () => dir,
    env: {},
  };
  const program = new Command().exitOverride().configureOutput({ writeErr: (text) => void (run.err += text), writeOut: (text) => void (run.out += text) });
  registerOcspsignCommand(program, io);
  registerGencrlCommand(program, io);
  registerRevokeCommand(program, io);
  registerOcspdumpCommand(program, io);
  registerOcsprefreshCommand(program, io);
  registerOcspserveCommand(program, io, { stopped: () => new Promise<void>((resolve) => (stop = resolve)) });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    run.code = error.exitCode;
  }
  return run;
}

/** openssl, asynchronously: the responder under test answers on this event loop. */
function openssl(args: string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile('openssl', args, { cwd: dir, encoding: 'utf8', timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-revocation-commands-'));
  for (const [name, certificate] of [['ca', ca], ['responder', responder], ['tls', tlsOnly], ['leaf', leaf], ['other-ca', otherCa], ['other-leaf', otherLeaf]] as const) {
    await writeFile(join(dir, `${name}.pem`), certificate.pem);
    await writeFile(join(dir, `${name}-key.pem`), certificate.key.traditionalPem);
  }
  await writeFile(join(dir, 'serials.txt'), `${serial}\n\n123456789\n`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('certsmith ocspsign', () => {
  it('signs with a delegated responder (CFSSL flags) and prints {"ocspResponse"}', async () => {
    const run = await cli(['ocspsign', '--ca', 'ca.pem', '--responder', 'responder.pem', '--responder-key', 'responder-key.pem', '--cert', 'leaf.pem', '--status', 'revoked', '--reason', 'keyCompromise']);
    expect(run.code).toBeUndefined();
    const { ocspResponse } = JSON.parse(run.out) as { ocspResponse: string };
    const basic = parseOcspResponse(Buffer.from(ocspResponse, 'base64')).basic!;
    expect(basic.responses[0]).toMatchObject({ status: 'revoked', reason: 1 });
    expect(basic.certificates).toHaveLength(1);
  });

  it('signs with the CA itself, revoked without -reason meaning unspecified', async () => {
    const run = await cli(['ocspsign', '--ca', 'ca.pem', '--ca-key', 'ca-key.pem', '--cert', 'leaf.pem', '--status', 'revoked', '--interval', '1h']);
    expect(run.code).toBeUndefined();
    const basic = parseOcspResponse(Buffer.from((JSON.parse(run.out) as { ocspResponse: string }).ocspResponse, 'base64')).basic!;
    expect(basic.responses[0]).toMatchObject({ status: 'revoked', reason: null });
    expect(basic.certificates).toHaveLength(0);
  });

  it('refuses a responder the CA did not delegate OCSP signing to (2000)', async () => {
    const run = await cli(['ocspsign', '--ca', 'ca.pem', '--responder', 'tls.pem', '--responder-key', 'tls-key.pem', '--cert', 'leaf.pem']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.err)).toMatchObject({ code: 2000, message: expect.stringContaining('id-kp-OCSPSigning') });
  });

  it.each([
    [['--ca', 'ca.pem', '--cert', 'leaf.pem', '--responder', 'responder.pem'], 'need responder key (provide with -responder-key)'],
    [['--ca', 'ca.pem', '--ca-key', 'ca-key.pem'], 'need certificate (provide with -cert)'],
    [['--cert', 'leaf.pem'], 'need the CA'],
  ])('is a usage error without the flags it needs (%j)', async (args, message) => {
    const run = await cli(['ocspsign', ...args]);
    expect(run.code).toBe(1);
    expect(run.err).toContain(message);
  });

  it('answers a bad status with CFSSL\'s 8200', async () => {
    const run = await cli(['ocspsign', '--ca', 'ca.pem', '--ca-key', 'ca-key.pem', '--cert', 'leaf.pem', '--status', 'Good']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.err)).toEqual({ code: 8200, message: 'Invalid revocation status' });
  });
});

describe('certsmith gencrl', () => {
  it('prints a base64 CRL of the serials that openssl verifies with the CA', async () => {
    const run = await cli(['gencrl', 'serials.txt', 'ca.pem', 'ca-key.pem', '3600']);
    expect(run.code).toBeUndefined();
    expect(run.out).toMatch(/^[A-Za-z0-9+/]+=*\n$/);
    await writeFile(join(dir, 'list.crl'), Buffer.from(run.out, 'base64'));
    const text = await openssl(['crl', '-inform', 'DER', '-in', 'list.crl', '-CAfile', 'ca.pem', '-noout', '-text']);
    expect(text).toContain('verify OK');
    expect(text).toContain(`Serial Number: ${serial.toString(16).toUpperCase().padStart(2, '0')}`);
    expect(text).toContain('Serial Number: 075BCD15');
    const dates = await openssl(['crl', '-inform', 'DER', '-in', 'list.crl', '-noout', '-lastupdate', '-nextupdate']);
    const [last, next] = [...dates.matchAll(/Update=(.+)/g)].map((match) => Date.parse(match[1]!));
    expect(next! - last!).toBe(3_600_000);
  });

  it('refuses a serial that is not decimal, naming its line', async () => {
    await writeFile(join(dir, 'bad-serials.txt'), '12\n0x10\n');
    const run = await cli(['gencrl', 'bad-serials.txt', 'ca.pem', 'ca-key.pem']);
    expect(run.code).toBe(2);
    expect(JSON.parse(run.err)).toMatchObject({ code: 400, message: expect.stringContaining('line 2') });
  });

  it('is a usage error without CERT and KEY or --config', async () => {
    const run = await cli(['gencrl', 'serials.txt', 'ca.pem']);
    expect(run.code).toBe(1);
    expect(run.err).toContain('need CERT and KEY');
  });
});

describe('certsmith ocspserve', () => {
  it('serves a -responses file under -path to openssl ocsp, then stops', async () => {
    const signed = await cli(['ocspsign', '--ca', 'ca.pem', '--ca-key', 'ca-key.pem', '--cert', 'leaf.pem', '--status', 'revoked', '--reason', 'superseded']);
    await writeFile(join(dir, 'responses.txt'), `not-base64!\n${(JSON.parse(signed.out) as { ocspResponse: string }).ocspResponse}\n`);
    let listening: (url: string) => void = () => {};
    const url = new Promise<string>((resolve) => (listening = resolve));
    const running = cli(['ocspserve', '--responses', 'responses.txt', '--port', '0', '--path', '/ocsp', '--workers', '1'], (text) => {
      const match = /listening on (\S+)/.exec(text);
      if (match) listening(match[1]!);
    });
    const address = await url;
    expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ocsp$/);
    const answer = await openssl(['ocsp', '-issuer', 'ca.pem', '-cert', 'leaf.pem', '-url', address, '-CAfile', 'ca.pem', '-no_nonce']);
    expect(answer).toContain('Response verify OK');
    expect(answer).toContain('leaf.pem: revoked');
    expect(answer).toContain('Reason: superseded');
    stop();
    const run = await running;
    expect(run.code).toBeUndefined();
    expect(run.err).toContain('response 1 of responses.txt skipped');
  });

  it('is a usage error without -responses or -db-config (CFSSL\'s message)', async () => {
    const run = await cli(['ocspserve']);
    expect(run.code).toBe(1);
    expect(run.err).toContain('no response file or db-config provided, please set the one of these using either -responses or -db-config flags');
  });
});

describe('certsmith revoke, ocsprefresh, ocspdump (on a SQLite store)', () => {
  let rows: CertificateRecord[];

  beforeAll(async () => {
    await writeFile(join(dir, 'db.json'), JSON.stringify({ driver: 'sqlite3', data_source: join(dir, 'certs.db') }));
    const store = await openStore({ driver: 'sqlite3', dataSource: join(dir, 'certs.db') }, { sqlite: { thread: false } });
    rows = [await store.recordCertificate({ certificate: leaf.pem }), await store.recordCertificate({ certificate: otherLeaf.pem })];
    await store.close();
  });

  const statuses = async (): Promise<Array<string | null>> => {
    const store = await openStore({ driver: 'sqlite3', dataSource: join(dir, 'certs.db') }, { sqlite: { thread: false } });
    try {
      return await Promise.all(
        rows.map(async (row) => {
          const stored = await store.getOcspResponse(row.serial, row.authorityKeyId);
          if (stored === null) return null;
          const single = parseOcspResponse(stored.body).basic!.responses[0]!;
          return single.status === 'revoked' ? `revoked ${single.reason ?? 0}` : single.status;
        }),
      );
    } finally {
      await store.close();
    }
  };

  it("refreshes the rows of the CA it signs for, and warns about the other CA's instead of stopping", async () => {
    const run = await cli(['ocsprefresh', '--db-config', 'db.json', '--ca', 'ca.pem', '--ca-key', 'ca-key.pem']);
    expect(run.code).toBeUndefined();
    expect(run.out).toBe('');
    expect(run.err).toContain('1 certificates of CAs without a signer here skipped');
    expect(await statuses()).toEqual(['good', null]);
  });

  it('revokes with CFSSL\'s flags, then ocsprefresh states it', async () => {
    const row = rows[0]!;
    const run = await cli(['revoke', '--db-config', 'db.json', '--serial', row.serial, '--aki', row.authorityKeyId, '--reason', 'superseded']);
    expect(run).toMatchObject({ code: undefined, out: '', err: '' });
    await cli(['ocsprefresh', '--db-config', 'db.json', '--ca', 'ca.pem', '--responder', 'responder.pem', '--responder-key', 'responder-key.pem', '--interval', '2h']);
    expect(await statuses()).toEqual(['revoked 4', null]);
  });

  it('signs for every CA of a certsmith config', async () => {
    await writeFile(
      join(dir, 'two-cas.json'),
      JSON.stringify({ db_config: 'db.json', signers: { default: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem' } }, other: { plugin: '@certsmith/signer-local', options: { certFile: 'other-ca.pem', keyFile: 'other-ca-key.pem' } } } }),
    );
    const run = await cli(['ocsprefresh', '--config', 'two-cas.json']);
    expect(run.err).toBe('');
    expect(run.code).toBeUndefined();
    expect(await statuses()).toEqual(['revoked 4', 'good']);
  });

  it('dumps the unexpired responses, one base64 line each', async () => {
    const run = await cli(['ocspdump', '--db-config', 'db.json']);
    const lines = run.out.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(parseOcspResponse(Buffer.from(line, 'base64')).status).toBe('successful');
  });

  it.each([
    [['--db-config', 'db.json', '--aki', 'ab'], 1, 'serial number is required but not provided'],
    [['--db-config', 'db.json', '--serial', '1'], 1, 'authority key id is required but not provided'],
    [['--db-config', 'db.json', '--serial', '1', '--aki', 'ab'], 2, '{"code":11200,"message":"failed to revoke the certificate: certificate not found"}'],
    [['--db-config', 'db.json', '--serial', '1', '--aki', 'ab', '--reason', 'bogus'], 2, '{"code":8200,"message":"Invalid revocation status"}'],
  ])('revoke %j exits %d with CFSSL\'s message', async (args, code, message) => {
    const run = await cli(['revoke', ...args]);
    expect(run.code).toBe(code);
    expect(run.err).toContain(message);
  });
});
