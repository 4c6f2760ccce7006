/**
 * How the store commands (`certsmith certs …`, `certsmith db …`) find the certificate store: the one
 * `certsmith serve` would open with the same flags — `--db-config FILE` (CFSSL's file), else the
 * `db_config` of `--config FILE`, else the SQLite file in `--data-dir` (default
 * `$XDG_DATA_HOME/certsmith` or `~/.certsmith`). SQLite runs on the command's own thread (a short
 * command gains nothing from a second one).
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadDbConfigFile, openStore } from '@certsmith/cert-store';
import type { DbConfig, MigrationMode, Store } from '@certsmith/cert-store';
import { CertsmithError } from '@certsmith/x509-core';
import { loadServerConfig } from '../config-file.js';
import { defaultDataDir } from '../data-dir.js';
import { defaultDbConfig, describeDataSource } from '../store-settings.js';
import type { CommandIo } from './common.js';

/** The flags that name the store. */
export interface StoreLocationFlags {
  dbConfig?: string;
  config?: string;
  dataDir?: string;
}

/** Add `--db-config`, `--config` and `--data-dir` to `command`. */
export function withStoreLocation(command: Command): Command {
  return command
    .option('--db-config <file>', 'CFSSL db-config file of the store ({"driver": "sqlite3"|"postgres", "data_source": …})')
    .option('--config <file>', 'certsmith config file whose "db_config" names the store')
    .option('--data-dir <dir>', 'data directory of the default store, <dir>/certs.db (default: $XDG_DATA_HOME/certsmith or ~/.certsmith)');
}

/** The store's db-config, and how to name it in messages (never with a password). */
export interface StoreLocation {
  config: DbConfig;
  /** `sqlite3 /var/lib/certsmith/certs.db`, `postgres postgres://certsmith:***@db/certdb`. */
  description: string;
  /** True for the data directory's SQLite file (which the commands do not create, except `db migrate`). */
  isDefault: boolean;
}

/** Resolve the flags to a db-config (see the module comment). */
export async function locateStore(flags: StoreLocationFlags, io: CommandIo): Promise<StoreLocation> {
  const describe = (config: DbConfig): string => `${config.driver} ${describeDataSource(config)}`;
  if (flags.dbConfig !== undefined) {
    const config = await loadDbConfigFile(flags.dbConfig === '' ? '' : resolve(io.cwd(), flags.dbConfig));
    return { config, description: describe(config), isDefault: false };
  }
  if (flags.config !== undefined) {
    const file = resolve(io.cwd(), flags.config);
    const serverConfig = await loadServerConfig(file, { env: io.env, cwd: io.cwd() });
    const section = serverConfig.store.dbConfig;
    if (section !== undefined) {
      const config = 'file' in section ? await loadDbConfigFile(isAbsolute(section.file) ? section.file : resolve(dirname(file), section.file)) : section.inline;
      return { config, description: describe(config), isDefault: false };
    }
  }
  const dataDir = resolve(io.cwd(), flags.dataDir ?? defaultDataDir(io.env as NodeJS.ProcessEnv));
  const config = defaultDbConfig(dataDir);
  return { config, description: describe(config), isDefault: true };
}

/**
 * Open the store the flags name. A default SQLite file that does not exist is an error (11000):
 * listing an empty new file would hide a wrong `--data-dir` (`db migrate` creates it).
 */
export async function openCommandStore(location: StoreLocation, options: { migrations: MigrationMode }): Promise<Store> {
  requireExistingStore(location);
  return await openStore(location.config, { migrations: options.migrations, sqlite: { thread: false } });
}

/** Refuse a default SQLite file that does not exist (11000) instead of creating an empty one. */
export function requireExistingStore(location: StoreLocation): void {
  if (location.isDefault && !existsSync(location.config.dataSource)) {
    throw new CertsmithError(11000, `no certificate store at ${location.config.dataSource}: give --db-config, --config or --data-dir, or start certsmith serve once to create it`);
  }
}
