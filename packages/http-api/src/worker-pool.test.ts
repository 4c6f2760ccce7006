import { threadId } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNewCertificateRequest } from '@certsmith/issuer';
import { codedFailureTask, echoTask, gateTask, keyPoolStatsTask, plainFailureTask } from '../test-fixtures/test-tasks.mjs';
import { keyAndCsrTask } from './issue/key-and-csr-task.js';
import { ServiceUnavailableError, UnknownTaskError } from './errors.js';
import { defineTask } from './task.js';
import { createWorkerPool, perWorkerKeyPool, withoutResolveConditions, workerExecArgv } from './worker-pool.js';
import type { WorkerPool } from './worker-pool.js';

function openGate(gate: SharedArrayBuffer): void {
  Atomics.store(new Int32Array(gate), 0, 1);
  Atomics.notify(new Int32Array(gate), 0);
}

describe('createWorkerPool', () => {
  let pool: WorkerPool;
  beforeAll(() => {
    pool = createWorkerPool({ size: 1, maxQueue: 1, tasks: [echoTask, codedFailureTask, plainFailureTask, gateTask] });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('runs a task on a worker thread and returns its structured-cloned result', async () => {
    const result = await pool.run(echoTask, { nested: { list: [1, 'two'] } });
    expect(result.input).toEqual({ nested: { list: [1, 'two'] } });
    expect(result.threadId).not.toBe(threadId);
  });

  it('rebuilds a coded worker error with its code, name and message', async () => {
    await expect(pool.run(codedFailureTask, {})).rejects.toMatchObject({
      code: 1002,
      name: 'CertificateDecodeError',
      message: 'Failed to decode certificate',
    });
  });

  it('rebuilds an uncoded worker error without a code and with the worker stack', async () => {
    const error = (await pool.run(plainFailureTask, {}).catch((caught: unknown) => caught)) as Error & { code?: unknown };
    expect(error.message).toBe('database password is hunter2');
    expect(error.code).toBeUndefined();
    expect(error.stack).toContain('test-tasks.mjs');
  });

  it('rejects a task it was not created with', async () => {
    const stranger = defineTask({ name: 'test.stranger', module: import.meta.url, run: () => 1 });
    await expect(pool.run(stranger, undefined)).rejects.toBeInstanceOf(UnknownTaskError);
  });

  it('rejects with ServiceUnavailableError when size + maxQueue tasks are pending', async () => {
    const gate = new SharedArrayBuffer(4);
    const running = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    const queued = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    expect(pool.pending).toBe(2);
    const rejected = pool.run(gateTask, { gate, timeoutMs: 20_000 });
    await expect(rejected).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(rejected).rejects.toMatchObject({ code: 503, retryAfterSeconds: 1 });
    openGate(gate);
    await expect(Promise.all([running, queued])).resolves.toEqual([{ opened: true }, { opened: true }]);
    expect(pool.pending).toBe(0);
  });
});

describe('createWorkerPool taskTimeoutMs', () => {
  it('abandons a task that runs too long with a 503 and replaces its worker', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [gateTask, echoTask], taskTimeoutMs: 2000 });
    try {
      const gate = new SharedArrayBuffer(4);
      await expect(pool.run(gateTask, { gate, timeoutMs: 20_000 })).rejects.toMatchObject({ code: 503 });
      await expect(pool.run(echoTask, 'after')).resolves.toMatchObject({ input: 'after' });
    } finally {
      await pool.close();
    }
  });
});

describe('createWorkerPool close', () => {
  it('refuses new tasks with 503 once closing', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [echoTask] });
    const closed = pool.close();
    await expect(pool.run(echoTask, 1)).rejects.toMatchObject({ code: 503 });
    await closed;
  });

  it('rejects invalid sizes', () => {
    expect(() => createWorkerPool({ size: 0, tasks: [] })).toThrow(RangeError);
    expect(() => createWorkerPool({ size: 1, maxQueue: -1, tasks: [] })).toThrow(RangeError);
  });
});

describe('withoutResolveConditions', () => {
  it('drops --conditions and -C in every spelling and keeps other flags', () => {
    expect(
      withoutResolveConditions([
        '--require',
        'x.cjs',
        '--conditions',
        '@certsmith/source',
        '--conditions=development',
        '-C',
        'import',
        '-Cfoo',
        '--enable-source-maps',
      ]),
    ).toEqual(['--require', 'x.cjs', '--enable-source-maps']);
  });
});

describe('workerExecArgv', () => {
  it('drops per-process flags a Worker refuses (they already apply to the whole process) and keeps the rest', () => {
    expect(workerExecArgv(['--perf-basic-prof', '--no-warnings', '--max-semi-space-size=4', '--enable-source-maps', '--conditions', 'x'])).toEqual([
      '--no-warnings',
      '--enable-source-maps',
    ]);
  });

  it('keeps failing on flags that are wrong, not merely per-process', () => {
    expect(() => workerExecArgv(['--cpu-prof-dir=/tmp/never'])).toThrow(/must be used with --cpu-prof/);
  });

  it('tries nothing when there are no flags', () => {
    expect(workerExecArgv([])).toEqual([]);
  });

  it('drops a lone per-process flag', () => {
    expect(workerExecArgv(['--trace-gc'])).toEqual([]);
  });
});

describe('key pool (--key-pool)', () => {
  it('splits the server-wide sizes over the workers, rounding up, and drops empty specs', () => {
    expect(perWorkerKeyPool({ 'rsa-2048': 64, 'ecdsa-256': 5, ed25519: 0 }, 2)).toEqual({ 'rsa-2048': 32, 'ecdsa-256': 3 });
    expect(perWorkerKeyPool({ ed25519: 0 }, 2)).toBeNull();
    expect(perWorkerKeyPool(undefined, 2)).toBeNull();
  });

  it('fills each worker\'s pool while it is idle and hands the keys to issuing tasks, each once', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [keyAndCsrTask, keyPoolStatsTask], keyPool: { 'ecdsa-256': 3 } });
    try {
      type Stats = { spec: string; size: number; capacity: number; hits: number; generated: number }[] | null;
      let stats = (await pool.run(keyPoolStatsTask, {})) as Stats;
      // Bounded wait for the idle worker to fill its pool (3 P-256 keys take milliseconds).
      for (let i = 0; i < 100 && (stats?.[0]?.size ?? 0) < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        stats = (await pool.run(keyPoolStatsTask, {})) as Stats;
      }
      expect(stats).toMatchObject([{ spec: 'ecdsa-256', size: 3, capacity: 3 }]);
      const request = decodeNewCertificateRequest({ request: { CN: 'pooled.example', hosts: ['pooled.example'] } }).request;
      const first = await pool.run(keyAndCsrTask, { request, withFacts: false });
      const second = await pool.run(keyAndCsrTask, { request, withFacts: false });
      expect(first.privateKeyPem).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
      expect(second.privateKeyPem).not.toBe(first.privateKeyPem);
      stats = (await pool.run(keyPoolStatsTask, {})) as Stats;
      expect(stats?.[0]?.hits).toBe(2);
    } finally {
      await pool.close();
    }
  });

  it('has no pool without --key-pool', async () => {
    const pool = createWorkerPool({ size: 1, tasks: [keyPoolStatsTask] });
    try {
      expect(await pool.run(keyPoolStatsTask, {})).toBeNull();
    } finally {
      await pool.close();
    }
  });
});
