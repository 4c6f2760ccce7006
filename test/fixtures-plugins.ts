/**
 * Third-party signer plugins written at test time into a scratch folder, the way an operator would
 * install them next to a config file: as ESM and CommonJS modules given by path, as packages in
 * `node_modules` given by name (one ESM-only package whose `exports` offer only `import`), and one
 * package written with `defineSigner` from `@certsmith/signer-api` (linked into the scratch
 * `node_modules`, as `npm install` would place it). Plugins that need no import build the
 * `defineSigner` brand themselves (`kind: 'certsmith-signer'`).
 *
 * The file signer reads a CA certificate and EC key named by its options (paths relative to the
 * config folder, through the host's `context.resolvePath`) and signs with node:crypto.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The signer-api package of this checkout (built `dist/`). */
const SIGNER_API_DIR = fileURLToPath(new URL('../packages/signer-api', import.meta.url));

/** Body of a `create(options, context)` that returns a node:crypto file signer. */
const FILE_SIGNER_CREATE = `
    const certificatePem = readFileSync(context.resolvePath(options.cert), 'utf8');
    const key = createPrivateKey(readFileSync(context.resolvePath(options.key)));
    const body = /-----BEGIN CERTIFICATE-----([\\s\\S]*?)-----END CERTIFICATE-----/.exec(certificatePem)[1];
    const der = new Uint8Array(Buffer.from(body.replace(/\\s+/g, ''), 'base64'));
    let closed = false;
    context.logger.info('file signer ready', { cert: options.cert });
    return {
      algorithms: ['ECDSA-SHA256'],
      async getCertificate() { return { der, pem: certificatePem }; },
      async sign(tbs, algorithm) {
        if (closed) throw new Error('closed');
        return new Uint8Array(sign('sha256', tbs, { key, dsaEncoding: 'der' }));
      },
      async health() { return closed ? { ok: false, message: 'closed' } : { ok: true, message: NAME + ' ok' }; },
      async close() { closed = true; },
    };`;

const OPTIONS_SCHEMA = `{ type: 'object', properties: { cert: { type: 'string' }, key: { type: 'string' }, fail: { type: 'boolean' } }, required: ['cert', 'key'], additionalProperties: false }`;

/** The plugin object literal; `NAME` is a constant of the generated module. */
function pluginObject(apiVersion = '^1.0.0'): string {
  return `{
  kind: 'certsmith-signer',
  meta: { name: NAME, apiVersion: ${JSON.stringify(apiVersion)}, version: '1.0.0' },
  optionsSchema: ${OPTIONS_SCHEMA},
  async create(options, context) {
    if (options.fail) throw new Error('the HSM slot is busy');${FILE_SIGNER_CREATE}
  },
}`;
}

function esmModule(name: string, apiVersion?: string): string {
  return `import { readFileSync } from 'node:fs';
import { createPrivateKey, sign } from 'node:crypto';
const NAME = ${JSON.stringify(name)};
export default ${pluginObject(apiVersion)};
`;
}

function cjsModule(name: string): string {
  return `'use strict';
const { readFileSync } = require('node:fs');
const { createPrivateKey, sign } = require('node:crypto');
const NAME = ${JSON.stringify(name)};
module.exports = ${pluginObject()};
`;
}

/** A plugin written with the real `defineSigner` and `signWithKeyObject` of `@certsmith/signer-api`. */
const DEFINED_MODULE = `import { readFileSync } from 'node:fs';
import { createPrivateKey } from 'node:crypto';
import { defineSigner, signWithKeyObject, algorithmsForKeyObject } from '@certsmith/signer-api';

export default defineSigner({
  meta: { name: 'acme-defined-signer', apiVersion: '^1.0.0', version: '2.0.0' },
  optionsSchema: ${OPTIONS_SCHEMA},
  async create(options, context) {
    const pem = readFileSync(context.resolvePath(options.cert), 'utf8');
    const key = createPrivateKey(readFileSync(context.resolvePath(options.key)));
    const body = /-----BEGIN CERTIFICATE-----([\\s\\S]*?)-----END CERTIFICATE-----/.exec(pem)[1];
    const der = new Uint8Array(Buffer.from(body.replace(/\\s+/g, ''), 'base64'));
    return {
      algorithms: algorithmsForKeyObject(key),
      async getCertificate() { return { der, pem }; },
      sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
      async close() {},
    };
  },
});
`;

async function put(root: string, path: string, content: string): Promise<void> {
  const file = join(root, path);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, content);
}

/** Paths and names of the plugins written by {@link writeTestPlugins}, for a config in `root`. */
export const TEST_PLUGINS = {
  esmPath: './plugins/esm-signer.mjs',
  cjsPath: './plugins/cjs-signer.cjs',
  esmOnlyPackage: 'acme-esm-only-signer',
  definedPackage: 'acme-defined-signer',
  notPlugin: './plugins/not-a-plugin.mjs',
  oldApi: './plugins/old-api-signer.mjs',
} as const;

/** Write every test plugin into `root` (the config folder). */
export async function writeTestPlugins(root: string): Promise<void> {
  await put(root, TEST_PLUGINS.esmPath, esmModule('acme-esm-signer'));
  await put(root, TEST_PLUGINS.cjsPath, cjsModule('acme-cjs-signer'));
  await put(root, TEST_PLUGINS.notPlugin, `export default { hello: 'not a signer' };\nexport const create = () => null;\n`);
  await put(root, TEST_PLUGINS.oldApi, esmModule('acme-old-signer', '^0.9.0'));
  await put(
    root,
    `node_modules/${TEST_PLUGINS.esmOnlyPackage}/package.json`,
    JSON.stringify({ name: TEST_PLUGINS.esmOnlyPackage, version: '1.0.0', type: 'module', exports: { '.': { import: './lib/main.js' } } }),
  );
  await put(root, `node_modules/${TEST_PLUGINS.esmOnlyPackage}/lib/main.js`, esmModule(TEST_PLUGINS.esmOnlyPackage));
  await put(
    root,
    `node_modules/${TEST_PLUGINS.definedPackage}/package.json`,
    JSON.stringify({ name: TEST_PLUGINS.definedPackage, version: '2.0.0', type: 'module', main: 'index.js' }),
  );
  await put(root, `node_modules/${TEST_PLUGINS.definedPackage}/index.js`, DEFINED_MODULE);
  await mkdir(join(root, 'node_modules/@certsmith'), { recursive: true });
  await symlink(SIGNER_API_DIR, join(root, 'node_modules/@certsmith/signer-api'), 'dir');
}
