import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleJsonTask, bundlePrepareTask, bundleTask, bundleWarmUpTask, certinfoTask, readTrustTask } from '@certsmith/bundler';
import { csrFactsTask, keyAndCsrTask, newcertInWorkerTask, signInWorkerTask } from '@certsmith/issuer';
import { createWorkerPool, resolveBuiltModule } from '@certsmith/worker-pool';
import { describe, expect, it } from 'vitest';
import { bundledModulesProbeTask } from '../test-fixtures/bundled-modules-probe.mjs';
import { ISSUED_RECORDING_WORKER_MODULE } from './issued-recording-worker.js';

// Built by `npm run build` (scripts/bundle-worker.mjs), which the suite runs first.
const workerBundle = new URL('../dist/worker.bundle.js', import.meta.url);

describe('dist/worker.bundle.js', () => {
  it('registers every module serve\'s workers import by URL: the task modules, the init hooks and the issued hook', async () => {
    expect(existsSync(workerBundle), `${fileURLToPath(workerBundle)} is built by npm run build`).toBe(true);
    const pool = createWorkerPool({ size: 1, tasks: [bundledModulesProbeTask], workerEntry: workerBundle });
    try {
      const registered = new Set(await pool.run(bundledModulesProbeTask, undefined));
      const tasks = [bundleTask, bundleJsonTask, bundlePrepareTask, bundleWarmUpTask, certinfoTask, readTrustTask, csrFactsTask, keyAndCsrTask, newcertInWorkerTask, signInWorkerTask];
      const issuerDist = resolveBuiltModule(newcertInWorkerTask.module);
      const expected = [
        ...tasks.map((task) => resolveBuiltModule(task.module)),
        ...['./worker-signers.js', './worker-key-pool.js', './worker-issued-hook.js', './index.js'].map((file) => new URL(file, issuerDist).href),
        new URL('./index.js', resolveBuiltModule(bundleTask.module)).href,
        resolveBuiltModule(ISSUED_RECORDING_WORKER_MODULE),
      ];
      expect(expected.filter((module) => !registered.has(module))).toEqual([]);
      // Loaded by name, as third-party plugins and their contract are: never from the bundle.
      expect([...registered].filter((module) => /\/(x509-core|signer-api|signer-local)\//.test(module))).toEqual([]);
    } finally {
      await pool.close();
    }
  });
});
