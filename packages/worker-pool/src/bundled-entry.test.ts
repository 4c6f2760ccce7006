import { describe, expect, it } from 'vitest';
import { BUNDLED_MODULE, bundledTask } from '../test-fixtures/bundled-tasks.mjs';
import { prestartWorkers } from './prestarted-workers.js';
import { createWorkerPool } from './worker-pool.js';

const workerEntry = new URL('../test-fixtures/bundled-worker-entry.mjs', import.meta.url);

describe('createWorkerPool with a workerEntry', () => {
  it('starts its threads on the entry, which finds tasks and init hooks among its registered modules', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [bundledTask], init: [{ module: BUNDLED_MODULE, data: { label: 'primary' } }], workerEntry });
    try {
      // The task's module is not importable: it ran from the registry, in the instance the hook set up.
      await expect(pool.run(bundledTask, 7)).resolves.toEqual({ input: 7, initData: { label: 'primary' }, entry: true });
    } finally {
      await pool.close();
    }
  });

  it('accepts the entry as a file path', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [bundledTask], workerEntry: workerEntry.pathname });
    try {
      await expect(pool.run(bundledTask, 1)).resolves.toMatchObject({ input: 1, entry: true });
    } finally {
      await pool.close();
    }
  });

  it('fails fast when the entry does not exist', () => {
    expect(() => createWorkerPool({ size: 1, tasks: [bundledTask], workerEntry: new URL('./no-such-entry.mjs', workerEntry) })).toThrow(/no-such-entry\.mjs does not exist/);
  });
});

describe('prestartWorkers with a workerEntry', () => {
  it('starts threads on the entry that run their task and preload from the registry, and a pool on the same entry takes them', async () => {
    const prestarted = prestartWorkers({ count: 1, workerEntry, preload: [BUNDLED_MODULE], task: { module: BUNDLED_MODULE, name: 'test.bundled', input: 'early' } });
    await expect(prestarted.taskResult).resolves.toMatchObject({ input: 'early', entry: true });
    const pool = createWorkerPool({ size: 1, tasks: [bundledTask], workerEntry, prestarted });
    try {
      expect(prestarted.count).toBe(0);
      await expect(pool.run(bundledTask, 2)).resolves.toMatchObject({ input: 2, entry: true });
    } finally {
      await pool.close();
    }
  });

  it('are not taken by a pool that starts its threads on another entry', async () => {
    const prestarted = prestartWorkers({ count: 1, workerEntry, preload: [] });
    const pool = createWorkerPool({ size: 1, tasks: [bundledTask], prestarted });
    try {
      expect(prestarted.count).toBe(0);
      // The pool's own entry registers nothing: the task's module cannot be imported.
      await expect(pool.run(bundledTask, 3)).rejects.toThrow(/protocol 'certsmith-test:'/);
    } finally {
      await pool.close();
    }
  });
});
