import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigReport } from '@certsmith/issuer';
import { loadServerConfig } from './config-file.js';
import { describeDataSource, readStoreConfigSection, resolveStoreFlags, storeSettings } from './store-settings.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-store-settings-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('storeSettings', () => {
  it('defaults to SQLite in the data directory, migrations applied, hourly tidy, 72 h buffer', () => {
    expect(storeSettings({}, {}, '/var/lib/certsmith')).toEqual({
      enabled: true,
      dbConfig: { inline: { driver: 'sqlite3', dataSource: '/var/lib/certsmith/certs.db' } },
      source: 'default',
      migrations: 'apply',
      tidyIntervalMs: 3_600_000,
      tidyBufferMs: 259_200_000,
    });
  });

  it('takes the flags over the config file', () => {
    const section = { dbConfig: { file: '/etc/certsmith/db.json' }, migrations: 'off' as const, tidyIntervalMs: 5_000, enabled: false };
    expect(storeSettings({}, section, '/d')).toEqual({ enabled: false, why: 'store.enabled is false in the config file' });
    expect(storeSettings({ dbConfigFile: '/x/db.json', migrations: 'check' }, section, '/d')).toMatchObject({
      enabled: true,
      dbConfig: { file: '/x/db.json' },
      source: '--db-config /x/db.json',
      migrations: 'check',
      tidyIntervalMs: 5_000,
    });
    expect(storeSettings({ enabled: false }, {}, '/d')).toEqual({ enabled: false, why: '--no-store' });
    expect(storeSettings({}, { dbConfig: { file: '/etc/certsmith/db.json' } }, '/d')).toMatchObject({ dbConfig: { file: '/etc/certsmith/db.json' }, source: 'config file db_config /etc/certsmith/db.json' });
  });
});

describe('resolveStoreFlags', () => {
  it('refuses --no-store with --db-config and values out of range, naming the flag', () => {
    expect(() => resolveStoreFlags({ enabled: false, dbConfigFile: 'db.json' })).toThrow('--no-store: contradicts --db-config: give one of them');
    expect(() => resolveStoreFlags({ tidyIntervalMs: 10 })).toThrow(/^--tidy-interval: must be 0 \(off\) or a duration from 1s/);
    expect(() => resolveStoreFlags({ tidyBufferMs: -1 })).toThrow(/^--tidy-buffer: /);
    expect(() => resolveStoreFlags({ migrations: 'later' as never })).toThrow('--db-migrations: must be apply, check or off, got "later"');
    expect(resolveStoreFlags({ dbConfigFile: 'db.json', tidyIntervalMs: 0 })).toEqual({ dbConfigFile: join(process.cwd(), 'db.json'), tidyIntervalMs: 0 });
  });
});

describe('readStoreConfigSection', () => {
  const read = async (raw: Record<string, unknown>, env: Record<string, string> = {}) => {
    const report = new ConfigReport();
    const section = await readStoreConfigSection(dir, raw, env, report);
    return { section, problems: report.problems.map((problem) => `${problem.path}: ${problem.message}`) };
  };

  it('reads db_config as a path relative to the config file, or inline with an env: or file: data source', async () => {
    expect(await read({ db_config: 'db.json' })).toEqual({ section: { dbConfig: { file: join(dir, 'db.json') } }, problems: [] });
    expect((await read({ db_config: { Driver: 'postgres', data_source: 'env:DB' } }, { DB: 'postgres://u:p@h/db' })).section).toEqual({
      dbConfig: { inline: { driver: 'postgres', dataSource: 'postgres://u:p@h/db' } },
    });
    await writeFile(join(dir, 'dsn'), 'dbname=certs host=/run/postgresql\n');
    expect((await read({ db_config: { driver: 'postgres', data_source: 'file:dsn' } })).section).toEqual({ dbConfig: { inline: { driver: 'postgres', dataSource: 'dbname=certs host=/run/postgresql' } } });
  });

  it('reads the store section', async () => {
    expect(await read({ store: { enabled: true, migrations: 'check', tidyInterval: '30m', tidyBuffer: '0s' } })).toEqual({
      section: { enabled: true, migrations: 'check', tidyIntervalMs: 1_800_000, tidyBufferMs: 0 },
      problems: [],
    });
  });

  it('reports every problem at its JSON path', async () => {
    const { problems } = await read({ db_config: { driver: 'postgres', data_source: 'env:MISSING' }, store: { tidy: '1h', enabled: 'no', migrations: 'later', tidyInterval: 3600, tidyBuffer: '-1h' } });
    expect(problems).toEqual([
      'db_config.data_source: environment variable MISSING is not set',
      'store.tidy: unknown key (allowed: enabled, migrations, tidyInterval, tidyBuffer)',
      'store.enabled: must be a boolean, got string',
      'store.migrations: must be "apply", "check" or "off", got "later"',
      'store.tidyInterval: must be a Go duration such as "1h" or "72h", got 3600',
      'store.tidyBuffer: must be a Go duration such as "1h" or "72h", got "-1h"',
    ]);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ db_config: 5 }, 'db_config: must be the path of a CFSSL db-config file or a {"driver", "data_source"} object, got number'],
    [{ db_config: '' }, 'db_config: invalid path'],
    [{ db_config: { driver: 'mysql', data_source: 'x' } }, 'db_config: driver "mysql" is not supported by certsmith: use "sqlite3" or "postgres" (see docs/store.md for moving a CFSSL MySQL certdb)'],
    [{ db_config: { driver: 'sqlite3' } }, 'db_config: invalid db configuration'],
    [{ store: [] }, 'store: must be an object, got array'],
    [{ store: { tidyInterval: '10ms' } }, 'store.tidyInterval: must be 0 (off) or a duration from 1s to 596h, got 10 ms'],
  ])('refuses %j', async (raw, problem) => {
    expect((await read(raw)).problems).toEqual([problem]);
  });
});

describe('loadServerConfig with store keys', () => {
  it('stops at a store problem with exit code 2, naming the file and the path', async () => {
    await writeFile(join(dir, 'certsmith.json'), JSON.stringify({ signing: { default: { expiry: '1h' } }, store: { migrations: 'later' } }));
    await expect(loadServerConfig(join(dir, 'certsmith.json'))).rejects.toMatchObject({ exitCode: 2, message: `config file ${join(dir, 'certsmith.json')}: store.migrations: must be "apply", "check" or "off", got "later"` });
    await writeFile(join(dir, 'ok.json'), JSON.stringify({ signing: { default: { expiry: '1h' } }, db_config: 'db.json', store: { tidyInterval: '0s' } }));
    const config = await loadServerConfig(join(dir, 'ok.json'));
    expect(config.store).toEqual({ dbConfig: { file: join(dir, 'db.json') }, tidyIntervalMs: 0 });
    expect(config.warnings).toEqual([]);
  });
});

describe('describeDataSource', () => {
  it.each<[string, string]>([
    ['postgres://certsmith:s3cret@db.internal:5432/certdb?sslmode=verify-full', 'postgres://certsmith:***@db.internal:5432/certdb?sslmode=verify-full'],
    ['postgresql://db.internal/certdb?password=s3cret&sslmode=disable', 'postgresql://db.internal/certdb?password=***&sslmode=disable'],
    ["dbname=certdb password='s3 cret\\'x' host=/run/postgresql", 'dbname=certdb password=*** host=/run/postgresql'],
    ['dbname=certdb PASSWORD = s3cret sslmode=disable', 'dbname=certdb PASSWORD = *** sslmode=disable'],
  ])('hides the password of %s', (source, shown) => {
    expect(describeDataSource({ driver: 'postgres', dataSource: source })).toBe(shown);
    expect(describeDataSource({ driver: 'postgres', dataSource: source })).not.toContain('s3');
  });

  it('shows a SQLite path as it is', () => {
    expect(describeDataSource({ driver: 'sqlite3', dataSource: '/var/lib/certsmith/certs.db' })).toBe('/var/lib/certsmith/certs.db');
  });
});
