import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from './config-file.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const usages = ['signing', 'server auth'];

async function write(name: string, content: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

describe('loadServerConfig', () => {
  it('gives CFSSL DefaultConfig and no signers without a file', async () => {
    const config = await loadServerConfig(undefined, { cwd: dir });
    expect(config).toMatchObject({ file: null, dir, signers: [] });
    expect(config.policy.default.expiryString).toBe('8760h');
  });

  it('reads a CFSSL config with unknown keys and both entry forms, in file order', async () => {
    const path = await write('both.json', {
      signing: { default: { expiry: '1h', usages } },
      ocsp: { whatever: true },
      signers: {
        default: { plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'env:KEY' } },
        hsm: ['./plugins/hsm.mjs', { slot: 1 }],
        bare: ['some-plugin'],
      },
    });
    const config = await loadServerConfig(path);
    expect(config.file).toBe(path);
    expect(config.dir).toBe(dir);
    expect(config.policy.default.expiryString).toBe('1h');
    expect(config.signers).toEqual([
      { label: 'default', plugin: '@certsmith/signer-local', options: { certFile: 'ca.pem', keyFile: 'env:KEY' }, policy: null, policyFile: null },
      { label: 'hsm', plugin: './plugins/hsm.mjs', options: { slot: 1 }, policy: null, policyFile: null },
      { label: 'bare', plugin: 'some-plugin', options: {}, policy: null, policyFile: null },
    ]);
  });

  it('gives a label its own policy from "signing" (sharing auth_keys) or from a CFSSL "config" file', async () => {
    await write('b-config.json', {
      signing: { default: { expiry: '2h', usages, auth_key: 'k' } },
      auth_keys: { k: { type: 'standard', key: 'file:b.key' } },
    });
    await write('b.key', 'aabbccdd\n');
    const path = await write('labels.json', {
      signing: { default: { expiry: '1h', usages } },
      auth_keys: { ka: { type: 'standard', key: 'env:KA' } },
      signers: {
        a: { plugin: 'p', signing: { default: { expiry: '3h', usages, auth_key: 'ka' } } },
        b: { plugin: 'p', config: 'b-config.json' },
      },
    });
    const config = await loadServerConfig(path, { env: { KA: '0011' } });
    const [a, b] = config.signers;
    expect(a?.policy?.default.expiryString).toBe('3h');
    expect(Buffer.from(a!.policy!.default.authKey!).toString('hex')).toBe('0011');
    expect(b?.policy?.default.expiryString).toBe('2h');
    expect(Buffer.from(b!.policy!.default.authKey!).toString('hex')).toBe('aabbccdd');
  });

  it('uses DefaultConfig when a file names signers but has no signing section', async () => {
    const config = await loadServerConfig(await write('signers-only.json', { signers: { default: ['x', {}] } }));
    expect(config.policy.default.expiryString).toBe('8760h');
  });

  it.each([
    ['not JSON', '{', '', /^failed to unmarshal configuration/],
    ['an array', '[]', '', /^the configuration must be a JSON object, got array/],
    ['no signing and no signers', { auth_keys: {} }, 'signing', /^signing: No "signing" field present/],
    ['a bad profile', { signing: { default: { usages } } }, 'signing.default.expiry', /^signing\.default\.expiry: empty expiry string/],
    ['signers not an object', { signers: [] }, 'signers', /^signers: must be an object of label → signer, got array/],
    ['an entry without plugin', { signers: { a: { options: {} } } }, 'signers.a.plugin', /^signers\.a\.plugin: must be a non-empty string/],
    ['an entry with a misspelt key', { signers: { a: { plugin: 'p', option: {} } } }, 'signers.a.option', /^signers\.a\.option: unknown key \(allowed: plugin, options, signing, config\)/],
    ['options that are not an object', { signers: { a: ['p', 'x'] } }, 'signers.a[1]', /^signers\.a\[1\]: must be an object, got string/],
    ['a label with a space', { signers: { 'a b': ['p'] } }, 'signers["a b"]', /signer label "a b" must be/],
    ['both signing and config', { signers: { a: { plugin: 'p', signing: {}, config: 'x' } } }, 'signers.a', /has both "signing" and "config"/],
    [
      'a label policy with an unknown auth key',
      { signers: { a: { plugin: 'p', signing: { default: { expiry: '1h', usages, auth_key: 'nope' } } } } },
      'signers.a.signing.default.auth_key',
      /^signers\.a\.signing\.default\.auth_key: failed to find auth_key/,
    ],
    ['a missing label config file', { signers: { a: { plugin: 'p', config: 'missing.json' } } }, 'signers.a.config', /^signers\.a\.config: .*missing\.json/],
    ['a bad CIDR', { signing: { default: { expiry: '1h' } }, allowCidrs: ['10.0.0.0/8', 'x'] }, 'allowCidrs[1]', /^allowCidrs\[1\]: /],
    ['a CT log', { signing: { default: { expiry: '1h', ct_log_servers: ['https://ct.example'] } } }, 'signing.default.ct_log_servers', /does not submit to Certificate Transparency logs/],
  ])('fails with exit code 2 naming the file and the JSON path for %s', async (_name, content, path, message) => {
    const file = await write('bad.json', content);
    const error = await loadServerConfig(file).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 5200, exitCode: 2, file, path });
    expect((error as Error).message.slice(`config file ${file}: `.length)).toMatch(message);
  });

  it('refuses a remote profile only when read for serve (gencert and sign honour it)', async () => {
    const file = await write('remote.json', { signing: { default: { expiry: '1h' }, profiles: { far: { remote: 'ca1' } } }, remotes: { ca1: '127.0.0.1:8888' } });
    await expect(loadServerConfig(file)).resolves.toMatchObject({ file });
    await expect(loadServerConfig(file, { purpose: 'serve' })).rejects.toMatchObject({ exitCode: 2, path: 'signing.profiles.far.remote' });
  });

  it('returns warnings for keys that change nothing', async () => {
    const file = await write('warn.json', { signing: { default: { expiry: '1h', cert_store: 'db' } }, ocsp: {} });
    expect((await loadServerConfig(file)).warnings.map((warning) => warning.path)).toEqual(['ocsp', 'signing.default.cert_store']);
  });
});
