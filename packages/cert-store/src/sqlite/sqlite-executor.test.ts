import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-sqlite-executor-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('openStore (SQLite in its own thread)', () => {
  it('starts its thread in a process run with per-process V8 flags (the certsmith executable’s own)', () => {
    const entry = new URL('../index.ts', import.meta.url).href.replace('/src/index.ts', '/dist/index.js');
    const script = `
      const { openStore } = await import(${JSON.stringify(entry)});
      const store = await openStore({ driver: 'sqlite3', dataSource: ${JSON.stringify(join(dir, 'flags.db'))} });
      await store.close();
      console.log('opened');
    `;
    // Without vitest's NODE_OPTIONS (its resolve conditions would point workspace packages at sources).
    const { NODE_OPTIONS: _ignored, ...env } = process.env;
    const child = spawnSync(process.execPath, ['--max-semi-space-size=4', '--single-threaded-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
      env,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('opened');
    expect(child.status).toBe(0);
  });
});
