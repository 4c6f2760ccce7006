import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { workerProcessEnv, workerProcessExecArgv } from './worker-process-settings.js';

describe('worker process settings', () => {
  it('sets the malloc settings the operator did not set, and keeps the rest of the environment', () => {
    expect(workerProcessEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' });
    expect(workerProcessEnv({ MALLOC_ARENA_MAX: '4' })).toMatchObject({ MALLOC_ARENA_MAX: '4', MALLOC_TRIM_THRESHOLD_: '131072' });
  });

  it('caps the old generation unless execArgv or NODE_OPTIONS already does', () => {
    expect(workerProcessExecArgv(['--single-threaded-gc'], {})).toEqual(['--single-threaded-gc', '--max-old-space-size=192']);
    expect(workerProcessExecArgv(['--max-old-space-size=512'], {})).toEqual(['--max-old-space-size=512']);
    expect(workerProcessExecArgv([], { NODE_OPTIONS: '--max_old_space_size=300' })).toEqual([]);
  });
});

describe('the executable', () => {
  it('sets for itself the malloc settings its forked processes get (its shebang; glibc reads them only at start)', async () => {
    const { readExecutableShebang } = await import('../../scripts/executable-shebang.mjs');
    const shebang = readExecutableShebang(fileURLToPath(new URL('../../bin/certsmith.js', import.meta.url)));
    expect(shebang?.env).toEqual({ MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' });
    expect(workerProcessEnv({})).toEqual(shebang?.env);
  });
});
