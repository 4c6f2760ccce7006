import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { SignerLogger } from '@certsmith/signer-api';
import { createSigner, createSignerContext } from '@certsmith/signer-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import plugin from './index.js';
import type { MultirootSigner } from './multiroot-signer.js';
import { resolveAuthKey } from './plugin.js';

const KEY_HEX = '00112233445566778899aabbccddeeff';
let dir: string;

function recordingLogger(): SignerLogger & { lines: string[] } {
  const lines: string[] = [];
  const sink = (level: string) => (message: string, fields?: Record<string, unknown>) => {
    lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`);
  };
  return { lines, debug: sink('debug'), info: sink('info'), warn: sink('warn'), error: sink('error') };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signer-multiroot-'));
  await writeFile(join(dir, 'auth.key'), `${KEY_HEX}\n`);
  await writeFile(join(dir, 'bad.key'), 'not hex\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('createSigner with the plugin', () => {
  it('creates a signRequest-only signer when options are valid', async () => {
    const context = createSignerContext({ env: { CA_AUTH_KEY: KEY_HEX } });
    const signer = (await createSigner(plugin, { remotes: ['http://ca1:8888', 'ca2'], authKey: 'env:CA_AUTH_KEY' }, context)) as MultirootSigner;
    try {
      expect(signer.remotes).toEqual(['http://ca1:8888', 'http://ca2:8888']);
      expect(signer.algorithms).toEqual([]);
      expect(typeof signer.signRequest).toBe('function');
      expect(signer.sign).toBeUndefined();
    } finally {
      await signer.close();
    }
  });

  it('rejects with code 2000 naming the option when an option is unknown or malformed', async () => {
    const context = createSignerContext();
    await expect(createSigner(plugin, { remotes: ['ca1'], timeout: 5 }, context)).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-multiroot: options.timeout is not a known option',
    });
    await expect(createSigner(plugin, { remotes: ['ftp://ca1'] }, context)).rejects.toMatchObject({ code: 2000, message: expect.stringContaining('remotes[0] must be') as string });
    await expect(createSigner(plugin, { remotes: 'ca1', certFile: 'c.pem' }, context)).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-multiroot: certFile and keyFile must be given together (mutual TLS)',
    });
    await expect(createSigner(plugin, { remotes: 'ca1', timeoutMs: 0 }, context)).rejects.toMatchObject({ code: 2000, message: expect.stringContaining('timeoutMs must be a positive integer') as string });
  });

  it('rejects with code 2000 naming the path when a TLS file is missing', async () => {
    const context = createSignerContext({ configDir: dir });
    await expect(createSigner(plugin, { remotes: ['https://ca1'], caFile: 'missing.pem' }, context)).rejects.toMatchObject({
      code: 2000,
      message: `signer plugin @certsmith/signer-multiroot: cannot read caFile ${join(dir, 'missing.pem')}: ENOENT`,
    });
  });

  it('rejects with code 2001 when the auth key variable is unset', async () => {
    const context = createSignerContext({ env: {} });
    await expect(createSigner(plugin, { remotes: ['ca1'], authKey: 'env:CA_AUTH_KEY' }, context)).rejects.toMatchObject({ code: 2001 });
  });
});

describe('resolveAuthKey', () => {
  it('decodes hex from env and from a file relative to the config dir', async () => {
    const context = createSignerContext({ configDir: dir, env: { K: KEY_HEX } });
    expect(Buffer.from(await resolveAuthKey('env:K', context)).toString('hex')).toBe(KEY_HEX);
    expect(Buffer.from(await resolveAuthKey('file:auth.key', context)).toString('hex')).toBe(KEY_HEX);
  });

  it('accepts inline hex as CFSSL does and warns without logging the key', async () => {
    const logger = recordingLogger();
    const context = createSignerContext({ logger });
    expect(Buffer.from(await resolveAuthKey(KEY_HEX, context)).toString('hex')).toBe(KEY_HEX);
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines.join('\n')).not.toContain(KEY_HEX);
  });

  it('rejects with code 2000 without echoing the value when it is neither a reference nor hex', async () => {
    const context = createSignerContext({ configDir: dir });
    const error = (await resolveAuthKey('s3cr3t-passw0rd', context).catch((caught: unknown) => caught)) as Error & { code: number };
    expect(error.code).toBe(2000);
    expect(error.message).not.toContain('s3cr3t');
    await expect(resolveAuthKey('file:bad.key', context)).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin @certsmith/signer-multiroot: authKey from file:bad.key is not a non-empty even-length hex string',
    });
  });
});
