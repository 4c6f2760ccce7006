/**
 * Signer plugin loading (issue 6) and the embedded development CA, against the real built server:
 * plugins by relative path (ESM and CommonJS), by package name from the config folder (an ESM-only
 * package, and one written with `defineSigner`), first-party plugins by name; every loading
 * failure stops `certsmith serve` with exit code 2 and a message naming the label and the plugin.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, logLinesByProcess, parseLogLine } from './helpers/certsmith-process.js';
import { createScratch, failedStart, makeRootCa, post, startServer, verifyCertificate } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { TEST_PLUGINS, writeTestPlugins } from './fixtures-plugins.js';

let scratch: Scratch;
const cas: Record<string, OpensslCa> = {};

beforeAll(async () => {
  scratch = await createScratch('plugins');
  for (const name of ['esm', 'cjs', 'pkg', 'defined', 'local']) cas[name] = await makeRootCa(scratch, name);
  await writeTestPlugins(scratch.dir);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

const fileOptions = (name: string) => ({ cert: `${name}.pem`, key: `${name}-key.pem` });

async function expectIssuedBy(url: string, label: string, ca: OpensslCa): Promise<void> {
  const { envelope } = await post(url, 'newcert', { request: { CN: `${label}.example`, hosts: [`${label}.example`] }, label });
  expect(envelope.errors).toEqual([]);
  expect(await verifyCertificate(scratch, envelope.result.certificate, ca.certFile)).toMatch(/: OK\n$/);
}

describe('loading plugins', () => {
  it('loads plugins by path (ESM, CommonJS), by package name (ESM-only, defineSigner) and first-party by name', async () => {
    const config = await scratch.write('plugins.json', {
      signing: { default: { expiry: '24h', usages: ['signing', 'server auth'] } },
      signers: {
        default: { plugin: TEST_PLUGINS.esmPath, options: fileOptions('esm') },
        cjs: [TEST_PLUGINS.cjsPath, fileOptions('cjs')],
        pkg: { plugin: TEST_PLUGINS.esmOnlyPackage, options: fileOptions('pkg') },
        defined: { plugin: TEST_PLUGINS.definedPackage, options: fileOptions('defined') },
        local: { plugin: '@certsmith/signer-local', options: { certFile: 'local.pem', keyFile: 'local-key.pem' } },
      },
    });
    const server = await startServer(['--config', config, '--data-dir', scratch.path('data'), '--loglevel', 'info']);
    try {
      await expectIssuedBy(server.url, 'default', cas['esm']!);
      await expectIssuedBy(server.url, 'cjs', cas['cjs']!);
      await expectIssuedBy(server.url, 'pkg', cas['pkg']!);
      await expectIssuedBy(server.url, 'defined', cas['defined']!);
      await expectIssuedBy(server.url, 'local', cas['local']!);
      const health = (await (await fetch(`${server.url}/api/v1/cfssl/health`)).json()) as { result: unknown };
      expect(health.result).toEqual({
        healthy: true,
        signers: {
          default: { healthy: true, message: 'acme-esm-signer ok' },
          cjs: { healthy: true, message: 'acme-cjs-signer ok' },
          pkg: { healthy: true, message: 'acme-esm-only-signer ok' },
          defined: { healthy: true },
          local: { healthy: true },
        },
        store: { healthy: true, driver: 'sqlite3' },
      });
      // Every serving process loads the signers (serve --processes N: N groups of the same lines).
      const loadedBy = logLinesByProcess(server.lines, (line) => line['msg'] === 'signer loaded');
      expect(loadedBy.length).toBeGreaterThan(0);
      for (const loaded of loadedBy) {
        expect(loaded.map((line) => [line['signer'], line['resolvedFrom']])).toEqual([
          ['default', 'path'],
          ['cjs', 'path'],
          ['pkg', 'config-dir'],
          ['defined', 'config-dir'],
          ['local', 'certsmith'],
        ]);
      }
      // The plugin's own log lines carry its label and name.
      expect(server.lines.map(parseLogLine).some((line) => line?.['msg'] === 'file signer ready' && line['signer'] === 'cjs')).toBe(true);
    } finally {
      await server.stop();
    }
  });

  it.each([
    ['not installed', { plugin: '@acme/not-installed-signer', options: {} }, /signer "hsm" \(plugin @acme\/not-installed-signer\): package @acme\/not-installed-signer is not installed; install it \(npm install @acme\/not-installed-signer\)/, 2000],
    ['a missing file', { plugin: './plugins/missing.mjs', options: {} }, /signer "hsm" \(plugin \.\/plugins\/missing\.mjs\): plugin file .*missing\.mjs does not exist/, 2000],
    ['not a plugin', { plugin: TEST_PLUGINS.notPlugin, options: {} }, /signer "hsm" \(plugin \.\/plugins\/not-a-plugin\.mjs\): .* does not export a signer plugin; its default export must be the object made by defineSigner/, 2000],
    ['an incompatible apiVersion', { plugin: TEST_PLUGINS.oldApi, options: fileOptions('esm') }, /signer "hsm" \(plugin .*old-api-signer\.mjs = acme-old-signer\): signer plugin acme-old-signer supports signer API \^0\.9\.0, host provides 1\.0\.0; use a version of the plugin built for signer API 1\.0\.0/, 2000],
    ['bad options', { plugin: TEST_PLUGINS.esmPath, options: { cert: 'esm.pem' } }, /signer "hsm" \(plugin .*esm-signer\.mjs = acme-esm-signer\): options rejected: .*options\.key is required; fix signers\.hsm\.options in .*failing\.json/, 2000],
    ['create throwing', { plugin: TEST_PLUGINS.cjsPath, options: { ...fileOptions('cjs'), fail: true } }, /signer "hsm" \(plugin .*cjs-signer\.cjs = acme-cjs-signer\): could not create the signer: the HSM slot is busy; check signers\.hsm\.options in .*failing\.json and the resources they name/, 2000],
    ['a first-party plugin with bad options', { plugin: '@certsmith/signer-local', options: { certFile: 'local.pem' } }, /signer "hsm" \(plugin @certsmith\/signer-local\): options rejected: .*keyFile is required/, 2000],
    ['a first-party plugin whose key does not match', { plugin: '@certsmith/signer-local', options: { certFile: 'local.pem', keyFile: 'esm-key.pem' } }, /signer "hsm" \(plugin @certsmith\/signer-local\): could not create the signer: /, 2300],
  ])('stops startup with exit code 2 for %s', async (_name, entry, message, code) => {
    const config = await scratch.write('failing.json', { signers: { hsm: entry } });
    const { code: exitCode, stderr } = await failedStart(['--config', config, '--data-dir', scratch.path('data')]);
    expect(exitCode).toBe(2);
    expect(stderr).toMatch(/^certsmith: /);
    expect(stderr).toMatch(message);
    expect(stderr).toContain(`(code ${code})`);
  });

  it('loads @certsmith/signer-pkcs11 and @certsmith/signer-multiroot by name (failing on their own options)', async () => {
    for (const plugin of ['@certsmith/signer-pkcs11', '@certsmith/signer-multiroot']) {
      const config = await scratch.write('first-party.json', { signers: { ext: { plugin, options: { bogusOption: true } } } });
      const { code, stderr } = await failedStart(['--config', config, '--data-dir', scratch.path('data')]);
      expect(code).toBe(2);
      expect(stderr).toMatch(new RegExp(`signer "ext" \\(plugin ${plugin.replace('/', '\\/')}\\): options rejected: .*bogusOption`));
    }
  });

  it('exits 2 for an invalid config file and 1 for usage errors', async () => {
    const broken = await scratch.write('broken.json', '{"signing":');
    const invalid = await failedStart(['--config', broken, '--data-dir', scratch.path('data')]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^certsmith: config file .*broken\.json: failed to unmarshal configuration: .* \(code 5200\)\n$/);

    const twice = await scratch.write('twice.json', { signers: { default: ['@certsmith/signer-local', { certFile: 'local.pem', keyFile: 'local-key.pem' }] } });
    const conflict = await failedStart(['--config', twice, '--ca', cas['local']!.certFile, '--ca-key', cas['local']!.keyFile, '--data-dir', scratch.path('data')]);
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toMatch(/signer "default" is defined twice, by --ca\/--ca-key and by signers\.default/);

    const lone = await failedStart(['--ca', cas['local']!.certFile, '--data-dir', scratch.path('data')]);
    expect(lone.code).toBe(1);
    expect(lone.stderr).toMatch(/^certsmith: --ca-key: is required with --ca/);

    const mismatch = await failedStart(['--ca', cas['local']!.certFile, '--ca-key', cas['esm']!.keyFile, '--data-dir', scratch.path('data')]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(/signer "default" \(plugin @certsmith\/signer-local from --ca\/--ca-key\): could not create the signer: .*; check --ca\/--ca-key/);
  });

  it('refuses a CFSSL remote profile, naming its JSON path (serve reaches remote CAs through signers)', async () => {
    const config = await scratch.write('remote-profile.json', {
      signing: { default: { remote: 'ca1', expiry: '1h', usages: ['signing'] } },
      remotes: { ca1: '127.0.0.1:8888' },
    });
    const { code, stderr } = await failedStart(['--config', config, '--ca', cas['local']!.certFile, '--ca-key', cas['local']!.keyFile, '--data-dir', scratch.path('data')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^certsmith: config file .*remote-profile\.json: signing\.default\.remote: profile "default" sends requests to remote "ca1"; .*@certsmith\/signer-multiroot.* \(code 5200\)\n$/);
  });
});

describe('the embedded development CA', () => {
  it('is created on first start, warned about, used to issue, and reused after a restart', async () => {
    const dataDir = scratch.path('dev-data');
    const first = await startServer(['--data-dir', dataDir]);
    const caFile = `${dataDir}/dev-ca/ca.pem`;
    let caPem: string;
    try {
      const warning = first.lines.map(parseLogLine).find((line) => line?.['level'] === 40 && String(line['msg']).includes('development CA'));
      expect(warning).toMatchObject({ certFile: caFile, created: true });
      expect(String(warning!['msg'])).toMatch(/for development only/);
      const { envelope } = await post(first.url, 'newcert', { request: { CN: 'dev.example', hosts: ['dev.example'] } });
      expect(await verifyCertificate(scratch, envelope.result.certificate, caFile)).toMatch(/: OK\n$/);
      caPem = await readFile(caFile, 'utf8');
      expect((await post(first.url, 'info', {})).envelope.result.certificate).toBe(caPem.trim());
    } finally {
      await first.stop();
    }
    const second = await startServer(['--data-dir', dataDir]);
    try {
      const warning = second.lines.map(parseLogLine).find((line) => line?.['level'] === 40 && String(line['msg']).includes('development CA'));
      expect(warning).toMatchObject({ created: false });
      expect(await readFile(caFile, 'utf8')).toBe(caPem);
      const { envelope } = await post(second.url, 'newcert', { request: { CN: 'dev2.example', hosts: ['dev2.example'] } });
      expect(await verifyCertificate(scratch, envelope.result.certificate, caFile)).toMatch(/: OK\n$/);
    } finally {
      await second.stop();
    }
  });
});
