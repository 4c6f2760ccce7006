import { describe, expect, it } from 'vitest';
import { preloadedTask } from '../test-fixtures/prestart-tasks.mjs';
import { prestartWorkers } from './prestarted-workers.js';
import { createWorkerPool } from './worker-pool.js';

const preload = [new URL('../test-fixtures/prestart-preload.mjs', import.meta.url).href];

describe('prestartWorkers', () => {
  it('starts threads that import their modules before the pool exists; the pool takes what it needs and stops the rest', async () => {
    const prestarted = prestartWorkers({ count: 2, preload });
    expect(prestarted.count).toBe(2);
    const pool = createWorkerPool({ size: 1, tasks: [preloadedTask], prestarted });
    try {
      expect(prestarted.count).toBe(0);
      await pool.ready();
      // The worker ran the preload: it is one of the prestarted threads, not a new one.
      await expect(pool.run(preloadedTask, undefined)).resolves.toBe(true);
    } finally {
      await pool.close();
    }
  });

  it('are not taken by a pool that starts its threads otherwise', async () => {
    const prestarted = prestartWorkers({ count: 1, preload, maxYoungGenerationSizeMb: 16 });
    const pool = createWorkerPool({ size: 1, tasks: [preloadedTask], prestarted });
    try {
      expect(prestarted.count).toBe(0);
      await expect(pool.run(preloadedTask, undefined)).resolves.toBe(false);
    } finally {
      await pool.close();
    }
  });

  it('run a task on the first thread before it imports its preload modules, and answer with its result', async () => {
    const module = new URL('../test-fixtures/prestart-tasks.mjs', import.meta.url).href;
    const prestarted = prestartWorkers({ count: 2, preload, task: { module, name: 'test.double', input: 21 } });
    try {
      await expect(prestarted.taskResult).resolves.toEqual({ doubled: 42, preloaded: false });
    } finally {
      await prestarted.stop();
    }
    const failing = prestartWorkers({ count: 1, preload, task: { module, name: 'test.prestart-failure', input: undefined } });
    try {
      await expect(failing.taskResult).rejects.toThrow('no trust here');
    } finally {
      await failing.stop();
    }
    expect(prestartWorkers({ count: 0, task: { module, name: 'test.double', input: 1 } }).taskResult).toBeUndefined();
  });

  it('give a task whose thread is stopped before it answers an error, not a hang', async () => {
    const module = new URL('../test-fixtures/prestart-tasks.mjs', import.meta.url).href;
    const prestarted = prestartWorkers({ count: 1, preload, task: { module, name: 'test.double', input: 1 } });
    await prestarted.stop();
    await expect(prestarted.taskResult).rejects.toThrow();
  });

  it('stop when asked while no pool took them', async () => {
    const prestarted = prestartWorkers({ count: 1, preload });
    await prestarted.stop();
    expect(prestarted.count).toBe(0);
  });
});
