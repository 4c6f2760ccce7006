/**
 * The issuer's init hooks carry their own `initWorker` (`WorkerInit.initWorker` of
 * `@certsmith/worker-pool`): a pool's calling thread, which holds the issuer already (the
 * executable's bundle), then runs them and the issuer's tasks without importing their files a
 * second time (docs/performance.md, start-up pass 6b). One hook without it sends that thread back
 * to importing every module, which only costs start-up time, so these tests keep them all.
 */
import type { Signer } from '@certsmith/signer-api';
import { afterEach, describe, expect, it } from 'vitest';

import type { SignerEntry } from './signer-directory.js';
import { parseSigningPolicy } from './signing-policy-loader.js';
import { provideWorkerIssuedHook, runWorkerIssuedHook } from './worker-issued-hook.js';
import type { WorkerIssuedCertificate } from './worker-issued-hook.js';
import { issuingWorkerInits } from './worker-setup.js';

const policy = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['digital signature'] } } });
const recreatable: SignerEntry = {
  label: 'w',
  signer: {} as Signer,
  policy,
  workerRecipe: { module: new URL('./test-support/pem-signer-plugin.ts', import.meta.url).href, options: {}, configDir: '/' },
};
const nowhere = 'file:///nowhere/issued-hook.js';

afterEach(() => provideWorkerIssuedHook(null));

describe('issuingWorkerInits', () => {
  it('gives every hook its own initWorker when the issued hook comes with its createIssuedHook', () => {
    const inits = issuingWorkerInits({
      signers: [recreatable],
      keyPool: { 'ecdsa-256': 2 },
      threads: 0,
      issuedHook: { module: nowhere, createIssuedHook: () => () => ({ attachment: null, signSeconds: [] }) },
    });
    expect(inits.map((init) => typeof init.initWorker)).toEqual(['function', 'function', 'function']);
  });

  it('leaves the issued hook without one when its spec has no createIssuedHook (the thread imports its module)', () => {
    const inits = issuingWorkerInits({ signers: [recreatable], threads: 1, issuedHook: { module: nowhere } });
    expect(inits.map((init) => typeof init.initWorker)).toEqual(['function', 'undefined']);
  });

  it("installs the spec's own hook, with the spec's data, without importing its module", async () => {
    const seen: unknown[] = [];
    const [, hookInit] = issuingWorkerInits({
      signers: [recreatable],
      threads: 0,
      issuedHook: {
        module: nowhere,
        data: { ocspLabels: ['w'] },
        createIssuedHook: (data) => {
          seen.push(data);
          return () => ({ attachment: 'made here', signSeconds: [] });
        },
      },
    });
    await hookInit!.initWorker!(hookInit!.data);
    expect(seen).toEqual([{ ocspLabels: ['w'] }]);
    expect(runWorkerIssuedHook({} as WorkerIssuedCertificate)).toEqual({ attachment: 'made here', signSeconds: [] });
  });
});
