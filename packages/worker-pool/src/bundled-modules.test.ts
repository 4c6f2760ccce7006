import { describe, expect, it } from 'vitest';
import { importWorkerModule, registerBundledModules } from './bundled-modules.js';
import { temporaryModules } from './test-support/temporary-modules.js';

const modules = temporaryModules('bundled-modules-');

describe('importWorkerModule', () => {
  it('answers with the registered module instead of importing the URL', async () => {
    const url = modules.write('registered.mjs', 'export const from = "file";');
    const bundled = { from: 'bundle' };
    registerBundledModules({ [url]: () => bundled });
    await expect(importWorkerModule(url)).resolves.toBe(bundled);
  });

  it('awaits a loader that evaluates its module asynchronously', async () => {
    const bundled = { value: 42 };
    registerBundledModules({ 'certsmith-test:async-loader': async () => bundled });
    await expect(importWorkerModule('certsmith-test:async-loader')).resolves.toBe(bundled);
  });

  it('imports a module nobody registered', async () => {
    const url = modules.write('unregistered.mjs', 'export const from = "file";');
    await expect(importWorkerModule(url)).resolves.toMatchObject({ from: 'file' });
  });

  it('rejects as import() does when an unregistered module cannot be imported', async () => {
    await expect(importWorkerModule(modules.url('missing.mjs'))).rejects.toMatchObject({ code: 'ERR_MODULE_NOT_FOUND' });
  });

  it('matches the exact string: another spelling of a registered module is imported', async () => {
    const url = modules.write('spelling.mjs', 'export const from = "file";');
    registerBundledModules({ [`${url}?bundled`]: () => ({ from: 'bundle' }) });
    await expect(importWorkerModule(url)).resolves.toMatchObject({ from: 'file' });
  });
});

describe('registerBundledModules', () => {
  it('keeps the first loader of a module registered twice', async () => {
    const first = { copy: 1 };
    registerBundledModules({ 'certsmith-test:twice': () => first });
    registerBundledModules({ 'certsmith-test:twice': () => ({ copy: 2 }) });
    await expect(importWorkerModule('certsmith-test:twice')).resolves.toBe(first);
  });

  it('rejects a loader that is not a function', () => {
    expect(() => registerBundledModules({ 'certsmith-test:not-a-loader': {} as never })).toThrow(TypeError);
  });

  it('shares its entries with every copy of the package in the thread', async () => {
    const bundled = { shared: true };
    registerBundledModules({ 'certsmith-test:shared': () => bundled });
    const registry = (globalThis as Record<symbol, Map<string, () => unknown>>)[Symbol.for('certsmith.worker-pool.bundled-modules')];
    expect(registry?.get('certsmith-test:shared')?.()).toBe(bundled);
  });
});
