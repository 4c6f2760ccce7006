import { describe, expect, it } from 'vitest';
import { WorkerInitError } from './errors.js';
import { resolveWorkerInits, runWorkerInits } from './worker-init.js';
import { temporaryModules } from './test-support/temporary-modules.js';

const modules = temporaryModules('worker-init-');

describe('resolveWorkerInits', () => {
  it('maps source modules to their built files and keeps the data', () => {
    expect(resolveWorkerInits([{ module: new URL('file:///repo/packages/issuer/src/key-pool-init.ts'), data: { n: 1 } }, { module: '@certsmith/issuer/init' }])).toEqual([
      { module: 'file:///repo/packages/issuer/dist/key-pool-init.js', data: { n: 1 } },
      { module: '@certsmith/issuer/init', data: undefined },
    ]);
    expect(resolveWorkerInits(undefined)).toEqual([]);
  });
});

describe('runWorkerInits', () => {
  it('calls each initWorker with its data, in order, awaiting each', async () => {
    const calls: unknown[] = [];
    (globalThis as Record<string, unknown>)['__workerInitCalls'] = calls;
    const slow = modules.write('slow.mjs', 'export async function initWorker(d) { await new Promise((r) => setTimeout(r, 20)); globalThis.__workerInitCalls.push(["slow", d]); }');
    const quick = modules.write('quick.mjs', 'export function initWorker(d) { globalThis.__workerInitCalls.push(["quick", d]); }');
    await runWorkerInits([
      { module: slow, data: 1 },
      { module: quick, data: { two: 2 } },
    ]);
    expect(calls).toEqual([
      ['slow', 1],
      ['quick', { two: 2 }],
    ]);
  });

  it('rejects with WorkerInitError naming a module without initWorker', async () => {
    const module = modules.write('none.mjs', 'export const other = 1;');
    const error = await runWorkerInits([{ module, data: undefined }]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WorkerInitError);
    expect(error).toMatchObject({ module, message: expect.stringContaining('does not export a function named initWorker') });
  });

  it('rejects with WorkerInitError when a hook throws or its module cannot be imported', async () => {
    const failing = modules.write('failing.mjs', 'export function initWorker() { throw new Error("no key store"); }');
    await expect(runWorkerInits([{ module: failing, data: undefined }])).rejects.toMatchObject({ name: 'WorkerInitError', message: expect.stringContaining('no key store') });
    await expect(runWorkerInits([{ module: modules.url('missing.mjs'), data: undefined }])).rejects.toMatchObject({
      name: 'WorkerInitError',
      message: expect.stringContaining('cannot be imported'),
    });
  });
});
