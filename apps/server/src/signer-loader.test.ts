import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@certsmith/http-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPathSpecifier, resolvePackageFrom, splitPackageSpecifier } from './plugin-resolution.js';
import { loadSigner } from './signer-loader.js';

let dir: string;
const logger = createLogger({ level: 'silent' });

/**
 * A plugin object literal that needs no import (the `kind` brand is what `defineSigner` adds). Its
 * signer is a stub: these tests exercise loading, not signing.
 */
function pluginSource(overrides = '', create = 'return signer(options);'): string {
  return `{
    kind: 'certsmith-signer',
    meta: { name: 'test-plugin', apiVersion: '^1.0.0', version: '9.9.9' },
    ${overrides}
    create(options, context) { ${create} },
  }`;
}

const signerFactory = `function signer(options) {
  return {
    algorithms: ['ECDSA-SHA256'],
    async getCertificate() { throw new Error('not used'); },
    async sign() { return new Uint8Array([1]); },
    async close() {},
    ...(options && options.forward ? { forwardsLabels: true } : {}),
  };
}`;

async function write(path: string, content: string): Promise<void> {
  await mkdir(join(dir, path, '..'), { recursive: true });
  await writeFile(join(dir, path), content);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-loader-'));
  await write('esm.mjs', `${signerFactory}\nexport default ${pluginSource()};\n`);
  await write('cjs.cjs', `${signerFactory}\nmodule.exports = ${pluginSource()};\n`);
  await write('transpiled.cjs', `${signerFactory}\nObject.defineProperty(exports, '__esModule', { value: true });\nexports.default = ${pluginSource()};\n`);
  await write('not-plugin.mjs', `export default { hello: 'world' };\n`);
  await write('broken.mjs', `import 'no-such-dependency-anywhere';\n`);
  await write('old-api.mjs', `${signerFactory}\nexport default ${pluginSource().replace("'^1.0.0'", "'^0.3.0'")};\n`);
  await write(
    'strict-options.mjs',
    `${signerFactory}\nexport default ${pluginSource("optionsSchema: { type: 'object', properties: { slot: { type: 'integer' } }, additionalProperties: false },")};\n`,
  );
  await write('throws-coded.mjs', `${signerFactory}\nexport default ${pluginSource('', "const e = new Error('Private key does not match public key'); e.code = 2300; throw e;")};\n`);
  await write('throws-plain.mjs', `${signerFactory}\nexport default ${pluginSource('', "throw new Error('token not present');")};\n`);
  await write('bad-shape.mjs', `${signerFactory}\nexport default ${pluginSource('', 'return { algorithms: [] };')};\n`);
  // An ESM-only package whose `exports` offers only the `import` condition.
  await write('node_modules/esm-only-signer/package.json', JSON.stringify({ name: 'esm-only-signer', type: 'module', exports: { '.': { import: './main.js' } } }));
  await write('node_modules/esm-only-signer/main.js', `${signerFactory}\nexport default ${pluginSource()};\n`);
  await write('node_modules/@acme/cjs-signer/package.json', JSON.stringify({ name: '@acme/cjs-signer', main: 'index.js' }));
  await write('node_modules/@acme/cjs-signer/index.js', `${signerFactory}\nmodule.exports = ${pluginSource()};\n`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function load(plugin: string, options: unknown = {}) {
  return loadSigner({ label: 'hsm', plugin, options, configDir: dir, logger });
}

describe('isPathSpecifier / splitPackageSpecifier', () => {
  it('tells paths from package names and splits scoped subpaths', () => {
    expect(['./a.js', '../a.js', '/abs/a.js', 'file:///a.js'].map(isPathSpecifier)).toEqual([true, true, true, true]);
    expect(['@certsmith/signer-local', 'plain', 'a/b'].map(isPathSpecifier)).toEqual([false, false, false]);
    expect(splitPackageSpecifier('@acme/x/sub/y')).toEqual({ name: '@acme/x', subpath: './sub/y' });
    expect(splitPackageSpecifier('x')).toEqual({ name: 'x', subpath: '.' });
  });
});

describe('resolvePackageFrom', () => {
  it('resolves an ESM-only package through its import condition, and null when absent', async () => {
    expect(await resolvePackageFrom('esm-only-signer', dir)).toBe(join(dir, 'node_modules/esm-only-signer/main.js'));
    expect(await resolvePackageFrom('not-installed-anywhere', dir)).toBeNull();
  });
});

describe('loadSigner', () => {
  it.each([
    ['./esm.mjs', 'path'],
    ['./cjs.cjs', 'path'],
    ['./transpiled.cjs', 'path'],
    ['esm-only-signer', 'config-dir'],
    ['@acme/cjs-signer', 'config-dir'],
  ])('loads %s (found by %s)', async (plugin, from) => {
    const loaded = await load(plugin);
    expect(loaded).toMatchObject({ label: 'hsm', specifier: plugin, pluginName: 'test-plugin', resolvedFrom: from, forwardsLabels: false });
    expect(loaded.signer.algorithms).toEqual(['ECDSA-SHA256']);
  });

  it('loads a first-party plugin by name from certsmith itself', async () => {
    const error = await load('@certsmith/signer-local', { certFile: 'missing.pem', keyFile: 'missing-key.pem' }).catch((caught: unknown) => caught);
    // Found and created: the failure is the plugin's own (its certificate file is missing).
    expect(error).toMatchObject({ code: 1001, label: 'hsm', plugin: '@certsmith/signer-local', exitCode: 2 });
  });

  it('detects label forwarding from the signer\'s forwardsLabels flag', async () => {
    expect((await load('./esm.mjs', { forward: true })).forwardsLabels).toBe(true);
  });

  it.each([
    ['not-installed-anywhere', {}, 2000, /package not-installed-anywhere is not installed; install it \(npm install not-installed-anywhere\)/],
    ['./missing.mjs', {}, 2000, /plugin file .*missing\.mjs does not exist; fix the path in signers\.hsm\.plugin/],
    ['./not-plugin.mjs', {}, 2000, /does not export a signer plugin; its default export must be the object made by defineSigner/],
    ['./broken.mjs', {}, 2000, /could not be imported: .*no-such-dependency-anywhere/],
    ['./old-api.mjs', {}, 2000, /supports signer API \^0\.3\.0, host provides 1\.0\.0; use a version of the plugin built for signer API 1\.0\.0/],
    ['./strict-options.mjs', { slot: 'one' }, 2000, /options rejected: .*options\.slot must be an? integer, got string; fix signers\.hsm\.options/],
    ['./strict-options.mjs', { slto: 1 }, 2000, /options\.slto is not a known option/],
    ['./throws-coded.mjs', {}, 2300, /could not create the signer: Private key does not match public key; check signers\.hsm\.options/],
    ['./throws-plain.mjs', {}, 2000, /could not create the signer: token not present/],
    ['./bad-shape.mjs', {}, 2000, /getCertificate must be a function.*report it to its author/],
  ])('fails for %s with a coded error naming the label and the plugin', async (plugin, options, code, message) => {
    const error = await load(plugin, options).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code, label: 'hsm', exitCode: 2 });
    expect((error as Error).message).toMatch(new RegExp(`^signer "hsm" \\(plugin ${plugin.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`));
    expect((error as Error).message).toMatch(message);
  });
});
