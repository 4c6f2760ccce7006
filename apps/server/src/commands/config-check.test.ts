import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfigFile, formatConfigCheck, joinPath, registerConfigCommand } from './config-check.js';
import { initCa } from './key-and-csr.js';
import { loadServerConfig } from '../config-file.js';

let dir: string;

async function writeConfig(name: string, value: unknown): Promise<string> {
  await writeFile(join(dir, name), typeof value === 'string' ? value : JSON.stringify(value));
  return name;
}

const paths = (findings: { path: string }[]): string[] => findings.map((finding) => finding.path);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-config-check-'));
  const ca = await initCa({ CN: 'Check CA' });
  await writeFile(join(dir, 'ca.pem'), ca.cert!);
  await writeFile(join(dir, 'ca-key.pem'), ca.key!, { mode: 0o600 });
  await writeFile(join(dir, 'previous.hex'), '00112233\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ENV = { CHECK_MAIN_KEY: '0011223344556677' };

describe('checkConfigFile', () => {
  it('accepts a valid CFSSL + signers config', async () => {
    const file = await writeConfig('good.json', {
      signing: {
        default: { expiry: '8760h', usages: ['signing', 'server auth'] },
        profiles: { secure: { expiry: '24h', usages: ['signing'], auth_key: 'main', prev_auth_key: 'previous' } },
      },
      auth_keys: { main: { type: 'standard', key: 'env:CHECK_MAIN_KEY' }, previous: { type: 'standard', key: 'file:previous.hex' } },
      signers: { default: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem' } } },
      ocsp: { anything: true },
    });
    const result = await checkConfigFile(file, { cwd: dir, env: ENV });
    expect(result.problems).toEqual([]);
    expect(result.counts).toEqual({ profiles: 2, authKeys: 2, signers: 1 });
    expect(result.warnings).toEqual([{ path: 'ocsp', message: 'CFSSL does not read it either (its OCSP signer takes -responder and -responder-key); certsmith ignores it' }]);
    expect(formatConfigCheck(result, file)).toBe(
      'warning: ocsp: CFSSL does not read it either (its OCSP signer takes -responder and -responder-key); certsmith ignores it\ngood.json: OK (2 profiles, 2 auth keys, 1 signer, 1 warning)\n',
    );
  });

  it('lists every problem with its JSON path, never a secret value', async () => {
    const file = await writeConfig('bad.json', {
      signing: {
        default: { expiry: '1x', usages: ['signing'] },
        profiles: {
          www: { expiry: '', usages: ['signing'] },
          none: { expiry: '1h', usages: [] },
          typo: { expiry: '1h', usages: ['server auht'] },
          half: { expiry: '1h', usages: ['server auht', 'signing'] },
          'odd.name': { expiry: '1h', usages: ['signing'], backdate: 'zz' },
          wl: { expiry: '1h', usages: ['signing'], name_whitelist: '(' },
          auth: { expiry: '1h', usages: ['signing'], auth_key: 'missing', prev_auth_key: 'hidden' },
          typed: { expiry: 5, usages: ['signing'] },
          far: { remote: 'nowhere' },
          dates: { expiry: '1h', usages: ['signing'], not_before: '2030-01-01T00:00:00Z', not_after: '2020-01-01T00:00:00Z' },
        },
      },
      auth_keys: {
        hidden: { type: 'standard', key: 'env:CHECK_UNSET_VARIABLE' },
        nofile: { type: 'standard', key: 'file:missing.hex' },
        nothex: { type: 'standard', key: 'xyz-secret-value' },
        kind: { type: 'fancy', key: '00' },
      },
      signers: {
        default: { plugin: '@certsmith/signer-local', options: { certFile: 'missing.pem', keyFile: 'ca-key.pem' } },
        absent: { plugin: '@acme/certsmith-not-installed' },
        'bad label!': { plugin: 'x' },
        shape: { plugin: 7, option: {} },
        file: ['./missing-plugin.mjs', {}],
        extra: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem', extra: 1 } },
        both: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem' }, signing: {}, config: 'x.json' },
        ownconfig: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'ca-key.pem' }, config: 'missing-cfssl.json' },
      },
    });
    const result = await checkConfigFile(file, { cwd: dir, env: ENV });
    expect(paths(result.problems)).toEqual([
      'signing.profiles.typed.expiry',
      'signing.default.expiry',
      'signing.profiles.www.expiry',
      'signing.profiles.none.usages',
      'signing.profiles.typo.usages',
      'signing.profiles["odd.name"].backdate',
      'signing.profiles.wl.name_whitelist',
      'signing.profiles.auth.auth_key',
      'signing.profiles.auth.prev_auth_key',
      'signing.profiles.far.remote',
      'signing.profiles.dates.not_after',
      'auth_keys.hidden.key',
      'signers["bad label!"]',
      'signers.shape.option',
      'signers.shape.plugin',
      'signers.both',
      'signers.ownconfig.config',
      'signers.default.options',
      'signers.absent.plugin',
      'signers.file.plugin',
      'signers.extra.options',
    ]);
    const byPath = new Map(result.problems.map((problem) => [problem.path, problem]));
    expect(byPath.get('auth_keys.hidden.key')?.message).toBe('environment variable CHECK_UNSET_VARIABLE is not set');
    expect(byPath.get('signing.default.expiry')?.message).toBe('time: unknown unit "x" in duration "1x"');
    expect(byPath.get('signing.profiles.typo.usages')?.message).toBe('none of the usages is known: "server auht"');
    expect(byPath.get('signing.profiles.auth.prev_auth_key')?.message).toBe(
      'auth key "hidden" is not usable (see auth_keys.hidden): environment variable CHECK_UNSET_VARIABLE is not set',
    );
    expect(byPath.get('signers.absent.plugin')?.message).toMatch(/^package @acme\/certsmith-not-installed is not installed; install it/);
    expect(byPath.get('signers.extra.options')?.message).toMatch(/options rejected: .*extra/);
    // Codes are the loaders' own: 5200 for the policy, the signer's for a signer (1001 unreadable certificate).
    expect(byPath.get('signers.default.options')?.code).toBe(1001);
    expect(byPath.get('signers.absent.plugin')?.code).toBe(2000);
    expect(byPath.get('signing.default.expiry')?.code).toBe(5200);
    // Auth keys no profile uses cannot change what is issued: warnings, as CFSSL never reads them.
    expect(result.warnings).toEqual([
      { path: 'signing.profiles.half.usages', message: 'unknown usage "server auht" is ignored' },
      { path: 'auth_keys.nofile.key', message: `cannot read file ${join(dir, 'missing.hex')} (ENOENT) (no profile of this signing section uses the key)` },
      { path: 'auth_keys.nothex.key', message: 'the key is not hex-encoded (encoding/hex: invalid byte or odd length) (no profile of this signing section uses the key)' },
      { path: 'auth_keys.kind.type', message: 'unknown authentication type "fancy" (expected "standard") (no profile of this signing section uses the key)' },
    ]);
    expect(JSON.stringify(result)).not.toContain('xyz-secret-value');
    expect(formatConfigCheck(result, file)).toMatch(/\nbad\.json: 21 problems, 4 warnings \(11 profiles, 4 auth keys, 8 signers\)\n$/);
  });

  it('stops serve at the first problem the check lists, with the same path and message', async () => {
    const file = await writeConfig('first.json', { signing: { default: { expiry: '1h', lint_error_level: 'error' }, profiles: { www: { expiry: '1y', usages: ['signing'] } } } });
    const result = await checkConfigFile(file, { cwd: dir, env: ENV });
    expect(paths(result.problems)).toEqual(['signing.default.lint_error_level', 'signing.profiles.www.expiry']);
    const error = await loadServerConfig(join(dir, file), { purpose: 'serve' }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ exitCode: 2, path: result.problems[0]!.path, message: `config file ${join(dir, file)}: ${result.problems[0]!.path}: ${result.problems[0]!.message}` });
  });

  it('applies the serve rule on remote profiles and checks the serve flag files', async () => {
    const file = await writeConfig('remote.json', {
      signing: { default: { expiry: '1h', usages: ['signing'] }, profiles: { far: { remote: 'ca1' } } },
      remotes: { ca1: '127.0.0.1:8888' },
    });
    const result = await checkConfigFile(file, {
      cwd: dir,
      env: ENV,
      caFile: 'ca.pem',
      caKeyFile: 'ca-key.pem',
      caBundleFile: 'missing-roots.pem',
      metadataFile: 'missing-metadata.json',
    });
    expect(paths(result.problems)).toEqual(['signing.profiles.far.remote', '--ca-bundle', '--metadata']);
    expect(result.problems[0]!.message).toMatch(/^profile "far" sends requests to remote "ca1"; certsmith serve reaches remote CAs through a signer/);
  });

  it('does not load signers with loadSigners: false, and reports unreadable or non-JSON files', async () => {
    const file = await writeConfig('lazy.json', { signers: { absent: { plugin: '@acme/certsmith-not-installed' } } });
    expect((await checkConfigFile(file, { cwd: dir, loadSigners: false })).problems).toEqual([]);
    expect((await checkConfigFile('nope.json', { cwd: dir })).problems).toEqual([{ path: '', message: 'cannot read the file (ENOENT)', code: 5200 }]);
    const broken = await writeConfig('broken.json', '{"signing": ');
    expect((await checkConfigFile(broken, { cwd: dir })).problems[0]!.message).toMatch(/^failed to unmarshal configuration: /);
    const empty = await writeConfig('empty.json', {});
    expect((await checkConfigFile(empty, { cwd: dir })).problems).toEqual([{ path: 'signing', message: 'No "signing" field present', code: 5200 }]);
  });

  it('writes odd keys in brackets', () => {
    expect(joinPath('signers', 'a.b')).toBe('signers["a.b"]');
    expect(joinPath('', 'signing')).toBe('signing');
  });
});

describe('certsmith config check', () => {
  async function run(args: string[]): Promise<{ out: string; code: number | undefined }> {
    let out = '';
    let code: number | undefined;
    const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
    registerConfigCommand(program, { stdout: (text) => void (out += text), setExitCode: (value) => void (code = value), cwd: () => dir, env: ENV });
    await program.parseAsync(['config', 'check', ...args], { from: 'user' });
    return { out, code };
  }

  it('exits 0 for a valid file and 2 with --json output for problems', async () => {
    const good = await writeConfig('cli-good.json', { signing: { default: { expiry: '1h', usages: ['signing'] } } });
    expect(await run([good])).toEqual({ out: 'cli-good.json: OK (1 profile, 0 auth keys, 0 signers)\n', code: undefined });
    const bad = await writeConfig('cli-bad.json', { signing: { profiles: { www: { expiry: '1y', usages: ['signing'] } } } });
    const result = await run(['--json', bad]);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.out)).toEqual({
      file: join(dir, bad),
      valid: false,
      problems: [{ path: 'signing.profiles.www.expiry', message: 'time: unknown unit "y" in duration "1y"', code: 5200 }],
      warnings: [],
    });
  });

  it('makes --ca without --ca-key a usage error', async () => {
    await expect(run(['-ca', 'ca.pem', 'x.json'])).rejects.toMatchObject({ exitCode: 1, message: 'error: --ca and --ca-key go together' });
  });
});
