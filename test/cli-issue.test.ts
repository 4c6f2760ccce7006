/**
 * The built `certsmith` CLI as a user runs it from a shell: `genkey`, `gencert`, `sign` and `split`
 * in pipelines, checked with openssl, and interoperating with the real Debian `cfssl` 1.2.0 and
 * `cfssljson` both ways. Exit codes 1 (usage) and 2 (operation failed, coded JSON on stderr).
 */
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliShell, type Shell } from './helpers/cli-shell.js';

let dir: string;

/** Run `script` with bash (pipefail) in the test folder; `$CS` is the built CLI. Bounded. */
const sh = cliShell(() => dir);

/** `openssl verify` says OK, the key matches the certificate and the key file is 0600. */
async function expectIssued(name: string, caFile = 'ca.pem'): Promise<void> {
  const verify = await sh(`openssl verify -CAfile ${caFile} ${name}.pem`);
  expect(verify.stdout.trim()).toBe(`${name}.pem: OK`);
  const match = await sh(`diff <(openssl x509 -in ${name}.pem -noout -pubkey) <(openssl pkey -in ${name}-key.pem -pubout)`);
  expect(match.code).toBe(0);
  expect((await stat(join(dir, `${name}-key.pem`))).mode & 0o777).toBe(0o600);
}

const CA_CSR = { CN: 'certsmith CLI Test Root', names: [{ C: 'US', O: 'certsmith tests' }], key: { algo: 'ecdsa', size: 256 }, ca: { expiry: '87600h', pathlen: 1 } };
const CSR = { CN: 'www.example.test', hosts: ['www.example.test', '127.0.0.1'], names: [{ C: 'US', O: 'certsmith tests' }], key: { algo: 'ecdsa', size: 256 } };
const CONFIG = {
  signing: {
    default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth', 'client auth'] },
    profiles: { www: { expiry: '720h', usages: ['signing', 'key encipherment', 'server auth'] } },
  },
};

let caPipeline: Shell;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-cli-issue-'));
  await writeFile(join(dir, 'ca-csr.json'), JSON.stringify(CA_CSR));
  await writeFile(join(dir, 'csr.json'), JSON.stringify(CSR));
  await writeFile(join(dir, 'cfg.json'), JSON.stringify(CONFIG));
  caPipeline = await sh('$CS genkey -initca ca-csr.json | $CS split -bare ca');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('certsmith genkey -initca | certsmith split -bare ca', () => {
  it('writes a self-signed CA as cfssl does: ca.pem, ca-key.pem (0600), ca.csr', async () => {
    expect(caPipeline).toEqual({ code: 0, stdout: '', stderr: '' });
    expect((await sh('openssl verify -CAfile ca.pem ca.pem')).stdout.trim()).toBe('ca.pem: OK');
    const text = (await sh('openssl x509 -in ca.pem -noout -subject -issuer -ext keyUsage,basicConstraints')).stdout;
    expect(text).toContain('subject=C = US, O = certsmith tests, CN = certsmith CLI Test Root');
    expect(text).toContain('issuer=C = US, O = certsmith tests, CN = certsmith CLI Test Root');
    expect(text).toMatch(/Key Usage: critical\n\s+Certificate Sign, CRL Sign/);
    expect(text).toMatch(/Basic Constraints: critical\n\s+CA:TRUE, pathlen:1/);
    expect((await sh('openssl req -in ca.csr -noout -verify')).stderr).toMatch(/verify OK|Certificate request self-signature verify OK/);
    expect((await stat(join(dir, 'ca-key.pem'))).mode & 0o777).toBe(0o600);
  });
});

describe('certsmith gencert | certsmith split -bare', () => {
  it('issues under the -config profile from stdin CSR JSON; piped, stderr stays silent', async () => {
    const run = await sh('cat csr.json | $CS gencert -ca ca.pem -ca-key ca-key.pem -config cfg.json -profile www - | $CS split -bare www');
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    await expectIssued('www');
    const text = (await sh('openssl x509 -in www.pem -noout -ext subjectAltName,extendedKeyUsage -dates')).stdout;
    expect(text).toMatch(/DNS:www\.example\.test, IP Address:127\.0\.0\.1/);
    expect(text).toMatch(/Extended Key Usage: \n\s+TLS Web Server Authentication\n/);
    expect(await readFile(join(dir, 'www.csr'), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n/);
  });
});

describe('interoperability with cfssl 1.2.0 and cfssljson', () => {
  it('cfssljson splits certsmith gencert output, certsmith split splits cfssl gencert output', async () => {
    const [intoCfssljson, fromCfssl] = await Promise.all([
      sh('$CS gencert -ca ca.pem -ca-key ca-key.pem csr.json | cfssljson -bare viacfssljson'),
      sh('cfssl gencert -ca ca.pem -ca-key ca-key.pem csr.json 2>/dev/null | $CS split -bare fromcfssl'),
    ]);
    expect(intoCfssljson).toMatchObject({ code: 0, stderr: '' });
    expect(fromCfssl).toMatchObject({ code: 0, stderr: '' });
    await expectIssued('viacfssljson');
    await expectIssued('fromcfssl');
    for (const name of ['viacfssljson', 'fromcfssl']) {
      expect(await readFile(join(dir, `${name}.csr`), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----/);
    }
  });

  it('prints the same JSON members and the same CA extensions as cfssl gencert -initca', async () => {
    const [ours, theirs] = await Promise.all([sh('$CS gencert -initca ca-csr.json'), sh('cfssl gencert -initca ca-csr.json 2>/dev/null')]);
    expect(ours.stdout).toMatch(/^\{"cert":"-----BEGIN CERTIFICATE-----\\n.*\\n-----END CERTIFICATE-----\\n","csr":"-----BEGIN CERTIFICATE REQUEST-----\\n.*","key":"-----BEGIN EC PRIVATE KEY-----\\n.*\\n"\}\n$/);
    const parsedOurs = JSON.parse(ours.stdout) as Record<string, string>;
    const parsedTheirs = JSON.parse(theirs.stdout) as Record<string, string>;
    expect(Object.keys(parsedOurs)).toEqual(Object.keys(parsedTheirs));
    await writeFile(join(dir, 'ours-ca.pem'), parsedOurs['cert']!);
    await writeFile(join(dir, 'theirs-ca.pem'), parsedTheirs['cert']!);
    await writeFile(join(dir, 'ours-ca.csr'), parsedOurs['csr']!);
    await writeFile(join(dir, 'theirs-ca.csr'), parsedTheirs['csr']!);
    const extensions = (file: string) => sh(`openssl x509 -in ${file} -noout -subject -issuer -ext keyUsage,basicConstraints,authorityKeyIdentifier`);
    expect((await extensions('ours-ca.pem')).stdout).toBe((await extensions('theirs-ca.pem')).stdout);
    const requested = (file: string) => sh(`openssl req -in ${file} -noout -text | sed -n '/Attributes/,/Signature Algorithm/p'`);
    expect((await requested('ours-ca.csr')).stdout).toBe((await requested('theirs-ca.csr')).stdout);
  });
});

describe('certsmith sign', () => {
  it('signs a genkey CSR with -hostname; prints {"cert","csr"} as cfssl sign does', async () => {
    const run = await sh(
      '$CS genkey csr.json | $CS split -bare signed && $CS sign -ca ca.pem -ca-key ca-key.pem -hostname signed.example,10.9.8.7 signed.csr > sign.json && $CS split -bare signed < sign.json',
    );
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    await expectIssued('signed');
    expect((await sh('openssl x509 -in signed.pem -noout -ext subjectAltName')).stdout).toMatch(/DNS:signed\.example, IP Address:10\.9\.8\.7/);
    const ours = JSON.parse(await readFile(join(dir, 'sign.json'), 'utf8')) as Record<string, string>;
    const theirs = JSON.parse((await sh('cfssl sign -ca ca.pem -ca-key ca-key.pem signed.csr 2>/dev/null')).stdout) as Record<string, string>;
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect(ours['csr']).toBe(await readFile(join(dir, 'signed.csr'), 'utf8'));
  });
});

describe('exit codes', () => {
  it('1 for usage errors, 2 with a coded JSON line for failed operations', async () => {
    const [unknownFlag, missingArgument, noCa, badProfile, missingFile, failedEnvelope] = await Promise.all([
      sh('$CS gencert -bogus csr.json'),
      sh('$CS gencert -ca ca.pem -ca-key ca-key.pem'),
      sh('$CS gencert csr.json'),
      sh('$CS gencert -ca ca.pem -ca-key ca-key.pem -profile nope csr.json'),
      sh('$CS sign -ca ca.pem -ca-key ca-key.pem missing.csr'),
      sh(`echo '{"success":false,"result":null,"errors":[{"code":5300,"message":"bad"}],"messages":[]}' | $CS split x`),
    ]);
    expect(unknownFlag.code).toBe(1);
    expect(unknownFlag.stderr).toMatch(/^error: unknown option '-bogus'/);
    expect(missingArgument.code).toBe(1);
    expect(missingArgument.stderr).toMatch(/^error: missing required argument 'csrjson'/);
    expect(noCa.code).toBe(1);
    expect(noCa.stderr).toMatch(/^error: need a CA certificate/);
    expect(badProfile).toEqual({ code: 2, stdout: '', stderr: '{"code":5400,"message":"Unknown policy profile"}\n' });
    expect(missingFile.code).toBe(2);
    expect(JSON.parse(missingFile.stderr)).toEqual({ code: 9001, message: 'CSR: cannot read file "missing.csr" (ENOENT)' });
    expect(failedEnvelope).toEqual({ code: 2, stdout: '', stderr: '{"code":5300,"message":"Request failed: bad"}\n' });
  });
});
