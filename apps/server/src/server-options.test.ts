import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDataDir } from './data-dir.js';
import { resolveServerOptions } from './server-options.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-options-'));
  await writeFile(join(dir, 'ca.pem'), 'x');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('resolveServerOptions', () => {
  it('applies CFSSL defaults', async () => {
    const options = await resolveServerOptions({ workers: 2 }, { HOME: '/home/u' });
    expect(options).toMatchObject({
      address: '127.0.0.1',
      port: 8888,
      workers: 2,
      maxQueue: 128,
      maxBodyBytes: 1024 * 1024,
      logLevel: 'info',
      headersTimeoutMs: 10_000,
      bodyTimeoutMs: 20_000,
      maxConnections: 1024,
    });
  });

  it('resolves given files to absolute paths', async () => {
    const options = await resolveServerOptions({ caFile: join(dir, 'ca.pem') });
    expect(options.caFile).toBe(join(dir, 'ca.pem'));
  });

  it.each([
    ['caFile', '--ca', 1001],
    ['caKeyFile', '--ca-key', 2001],
    ['caBundleFile', '--ca-bundle', 4001],
    ['intBundleFile', '--int-bundle', 3001],
    ['metadataFile', '--metadata', 4001],
    ['configFile', '--config', 5200],
  ])('fails with a coded error naming the flag when %s does not exist', async (key, flag, code) => {
    await expect(resolveServerOptions({ [key]: join(dir, 'missing.pem') })).rejects.toMatchObject({
      code,
      flag,
      message: expect.stringMatching(new RegExp(`^${flag}: cannot read file .*missing\\.pem.*ENOENT`)),
    });
  });

  it('fails when a file flag names a directory', async () => {
    await expect(resolveServerOptions({ caKeyFile: dir })).rejects.toMatchObject({ code: 2001, flag: '--ca-key' });
  });

  it.runIf(process.getuid?.() !== 0)('fails when a file is not readable', async () => {
    const path = join(dir, 'secret.pem');
    await writeFile(path, 'x');
    await chmod(path, 0o000);
    await expect(resolveServerOptions({ caKeyFile: path })).rejects.toMatchObject({ code: 2001 });
  });

  it('takes --workers 0 (no worker threads) with a queue of 64, the event loop counting as one lane', async () => {
    await expect(resolveServerOptions({ workers: 0 })).resolves.toMatchObject({ workers: 0, maxQueue: 64 });
    await expect(resolveServerOptions({ workers: 3 })).resolves.toMatchObject({ workers: 3, maxQueue: 192 });
  });

  it('rejects out-of-range numbers naming the flag', async () => {
    await expect(resolveServerOptions({ port: 70_000 })).rejects.toMatchObject({ code: 400, flag: '--port' });
    await expect(resolveServerOptions({ workers: -1 })).rejects.toMatchObject({ flag: '--workers' });
    await expect(resolveServerOptions({ workers: 1025 })).rejects.toMatchObject({ flag: '--workers' });
    await expect(resolveServerOptions({ headersTimeoutMs: 0 })).rejects.toMatchObject({ flag: '--headers-timeout' });
    await expect(resolveServerOptions({ bodyTimeoutMs: 3_600_001 })).rejects.toMatchObject({ flag: '--body-timeout' });
    await expect(resolveServerOptions({ maxConnections: 0 })).rejects.toMatchObject({ flag: '--max-connections' });
  });
});

describe('defaultDataDir', () => {
  it('prefers $XDG_DATA_HOME/certsmith, else ~/.certsmith', () => {
    expect(defaultDataDir({ XDG_DATA_HOME: '/xdg' })).toBe('/xdg/certsmith');
    expect(defaultDataDir({})).toMatch(/[\\/]\.certsmith$/);
  });
});
