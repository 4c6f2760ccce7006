import { describe, expect, it } from 'vitest';

import {
  SIGNER_API_VERSION,
  assertSignerApiCompatible,
  createSigner,
  defineSigner,
  isSignerPlugin,
  resolveSignerPlugin,
} from './define-signer.js';
import type { Signer } from './signer.js';
import { createSignerContext } from './signer-context.js';

const fakeSigner = (overrides: Partial<Signer> = {}): Signer => ({
  async getCertificate() {
    return { der: new Uint8Array(), pem: '' };
  },
  algorithms: ['ECDSA-SHA256'],
  async sign() {
    return new Uint8Array([1]);
  },
  async close() {},
  ...overrides,
});

const plugin = defineSigner<{ path: string }>({
  meta: { name: 'test-signer', apiVersion: '^1.0.0' },
  optionsSchema: {
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
    additionalProperties: false,
  },
  create: () => fakeSigner(),
});

describe('defineSigner', () => {
  it('brands the definition when it is well formed', () => {
    expect(plugin.kind).toBe('certsmith-signer');
    expect(isSignerPlugin(plugin)).toBe(true);
  });

  it('throws code 2000 when create is missing', () => {
    expect(() => defineSigner({ meta: { name: 'x', apiVersion: '^1.0.0' } } as never)).toThrow(
      expect.objectContaining({ code: 2000 }) as Error,
    );
  });
});

describe('resolveSignerPlugin', () => {
  it('returns the default export when given a module namespace', () => {
    expect(resolveSignerPlugin({ default: plugin })).toBe(plugin);
  });

  it('throws code 2000 when the module has no plugin', () => {
    expect(() => resolveSignerPlugin({}, 'some-module')).toThrow(expect.objectContaining({ code: 2000 }) as Error);
  });
});

describe('assertSignerApiCompatible', () => {
  it('accepts the plugin when its range includes the host version', () => {
    expect(() => assertSignerApiCompatible(plugin, SIGNER_API_VERSION)).not.toThrow();
  });

  it('throws code 2000 naming the plugin when the range excludes the host version', () => {
    expect(() => assertSignerApiCompatible(plugin, '2.0.0')).toThrow(/test-signer supports signer API \^1\.0\.0, host provides 2\.0\.0/);
  });
});

describe('createSigner', () => {
  const context = createSignerContext();

  it('returns the signer when options are valid', async () => {
    const signer = await createSigner({ default: plugin }, { path: 'x' }, context);
    expect(signer.algorithms).toEqual(['ECDSA-SHA256']);
  });

  it('rejects with code 2000 naming the option when options do not match the schema', async () => {
    await expect(createSigner(plugin, { path: 1, extra: true }, context)).rejects.toMatchObject({
      code: 2000,
      message: 'signer plugin test-signer: options.path must be a string, got integer; options.extra is not a known option',
    });
  });

  it('wraps validateOptions failures with the plugin name when they are plain errors', async () => {
    const strict = defineSigner({
      meta: { name: 'strict', apiVersion: '^1' },
      validateOptions() {
        throw new Error('keyFile is required');
      },
      create: () => fakeSigner(),
    });
    await expect(createSigner(strict, {}, context)).rejects.toMatchObject({ code: 2000, message: 'signer plugin strict: keyFile is required' });
  });

  it('rejects with code 2000 when the created signer can neither sign nor signRequest', async () => {
    const broken = defineSigner({
      meta: { name: 'broken', apiVersion: '^1.0.0' },
      create: () => fakeSigner({ sign: undefined }),
    });
    await expect(createSigner(broken, {}, context)).rejects.toMatchObject({ code: 2000 });
  });

  it('passes coded errors through unchanged when create throws them', async () => {
    const failing = defineSigner({
      meta: { name: 'failing', apiVersion: '^1.0.0' },
      create: () => {
        throw Object.assign(new Error('Private key does not match public key'), { code: 2300 });
      },
    });
    await expect(createSigner(failing, {}, context)).rejects.toMatchObject({ code: 2300 });
  });
});
