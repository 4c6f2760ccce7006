/**
 * Which certificate store `certsmith serve` opens, and how: from the flags (`--db-config`,
 * `--no-store`, `--db-migrations`, `--tidy-interval`, `--tidy-buffer`), else the config file
 * (`"db_config"` and `"store"`), else the defaults — a SQLite file `certs.db` in the data directory,
 * migrations applied on start, expired certificates tidied hourly once they are 72 h past expiry.
 *
 * Config file keys:
 *
 * ```json
 * { "db_config": "db.json",
 *   "store": { "enabled": true, "migrations": "apply", "tidyInterval": "1h", "tidyBuffer": "72h" } }
 * ```
 *
 * `db_config` is the path of a CFSSL db-config file (relative to the config file's folder), or the
 * same object inline (`{"driver": "postgres", "data_source": "env:CERTSMITH_DB"}`), where
 * `data_source` may be an `env:NAME` or `file:PATH` reference so that a password stays out of the
 * config file.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { parseDbConfig } from '@certsmith/cert-store';
import type { DbConfig, MigrationMode } from '@certsmith/cert-store';
import { parseGoDuration } from '@certsmith/issuer';
import { ErrorCode } from '@certsmith/x509-core';
import type { ConfigReport } from '@certsmith/issuer';
import { ServerOptionError } from './errors.js';
import { defaultDbConfig } from './data-dir.js';

/** The store flags of `serve` (all optional: unset ones fall back to the config file, then the defaults). */
export interface StoreFlags {
  /** `false` with `--no-store`: nothing is recorded and the store endpoints are not served. */
  enabled?: boolean;
  /** `--db-config FILE`: CFSSL's db-config file. */
  dbConfigFile?: string;
  /** `--db-migrations`: `apply` pending migrations on start, `check` (refuse a stale schema) or `off`. */
  migrations?: MigrationMode;
  /** `--tidy-interval`: time between scheduled tidy runs in ms; 0 turns scheduled tidy off. */
  tidyIntervalMs?: number;
  /** `--tidy-buffer`: how long past its expiry a certificate is kept, in ms. */
  tidyBufferMs?: number;
}

/** The config file's store keys, checked. */
export interface StoreConfigSection {
  /** `db_config`: a db-config file (absolute path) or an inline db-config. */
  dbConfig?: { file: string } | { inline: DbConfig };
  enabled?: boolean;
  migrations?: MigrationMode;
  tidyIntervalMs?: number;
  tidyBufferMs?: number;
}

/** What the server does about its store. */
export type StoreSettings =
  | { enabled: false; why: string }
  | {
      enabled: true;
      /** The db-config: a CFSSL db-config file to read when the store opens, or the config itself. */
      dbConfig: { file: string } | { inline: DbConfig };
      /** Where the db-config came from, for messages: `--db-config /etc/db.json`, `config file db_config`, `default`. */
      source: string;
      migrations: MigrationMode;
      tidyIntervalMs: number;
      tidyBufferMs: number;
    };

export { DEFAULT_STORE_FILE, defaultDbConfig } from './data-dir.js';
/** Default `--tidy-interval`: one hour. */
export const DEFAULT_TIDY_INTERVAL_MS = 60 * 60 * 1000;
/** Default `--tidy-buffer`: 72 hours (the store's default). */
export const DEFAULT_TIDY_BUFFER_MS = 72 * 60 * 60 * 1000;
/** Shortest scheduled tidy interval. */
export const MIN_TIDY_INTERVAL_MS = 1000;

const MIGRATION_MODES: readonly MigrationMode[] = ['apply', 'check', 'off'];

/** Parse `--db-migrations`; `null` for anything else. */
export function parseMigrationMode(value: string): MigrationMode | null {
  return (MIGRATION_MODES as readonly string[]).includes(value) ? (value as MigrationMode) : null;
}

/**
 * A Go duration (`1h`, `90m`, `72h`) in milliseconds; `0` is accepted. `null` when it is not one,
 * or is negative or sub-millisecond.
 */
export function parseDurationMs(value: string): number | null {
  let ms: number;
  try {
    ms = parseGoDuration(value);
  } catch {
    return null;
  }
  if (!Number.isFinite(ms) || ms < 0 || (ms > 0 && ms < 1)) return null;
  return Math.round(ms);
}

/** Check the store flags (exit 1 on a contradiction or a value out of range). */
export function resolveStoreFlags(flags: StoreFlags = {}): StoreFlags {
  const resolved: StoreFlags = { ...flags };
  if (flags.enabled === false && flags.dbConfigFile !== undefined) {
    throw new ServerOptionError(ErrorCode.BadRequest, '--no-store', 'contradicts --db-config: give one of them');
  }
  if (flags.dbConfigFile !== undefined) {
    if (flags.dbConfigFile === '') throw new ServerOptionError(ErrorCode.PolicyInvalid, '--db-config', 'invalid path');
    resolved.dbConfigFile = resolve(flags.dbConfigFile);
  }
  if (flags.migrations !== undefined && parseMigrationMode(flags.migrations) === null) {
    throw new ServerOptionError(ErrorCode.BadRequest, '--db-migrations', `must be apply, check or off, got ${JSON.stringify(flags.migrations)}`);
  }
  checkTidyInterval(flags.tidyIntervalMs, (message) => new ServerOptionError(ErrorCode.BadRequest, '--tidy-interval', message));
  checkTidyBuffer(flags.tidyBufferMs, (message) => new ServerOptionError(ErrorCode.BadRequest, '--tidy-buffer', message));
  return resolved;
}

function checkTidyInterval(value: number | undefined, fail: (message: string) => Error): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || value < 0 || (value > 0 && value < MIN_TIDY_INTERVAL_MS) || value > 2_147_483_647) {
    throw fail(`must be 0 (off) or a duration from 1s to 596h, got ${value} ms`);
  }
}

function checkTidyBuffer(value: number | undefined, fail: (message: string) => Error): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || value < 0) throw fail(`must be a duration of 0 or more (e.g. 72h), got ${value} ms`);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const STORE_KEYS = new Set(['enabled', 'migrations', 'tidyInterval', 'tidyBuffer']);

/**
 * Read `db_config` and `store` of a config file (`dir` is its folder), reporting problems into
 * `report` at their JSON paths (`config-file.ts` stops start-up at the first, exit 2). Inline
 * `env:`/`file:` data sources are resolved here.
 */
export async function readStoreConfigSection(
  dir: string,
  raw: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  report: ConfigReport,
): Promise<StoreConfigSection> {
  const section: StoreConfigSection = {};
  const dbConfig = raw['db_config'];
  if (dbConfig !== undefined && dbConfig !== null) {
    if (typeof dbConfig === 'string') {
      if (dbConfig === '') report.problem(['db_config'], 'invalid path');
      else section.dbConfig = { file: isAbsolute(dbConfig) ? dbConfig : resolve(dir, dbConfig) };
    } else if (isRecord(dbConfig)) {
      const inline = await readInlineDbConfig(dir, dbConfig, env, report.at('db_config'));
      if (inline !== null) section.dbConfig = { inline };
    } else {
      report.problem(['db_config'], `must be the path of a CFSSL db-config file or a {"driver", "data_source"} object, got ${typeName(dbConfig)}`);
    }
  }
  const store = raw['store'];
  if (store === undefined || store === null) return section;
  if (!isRecord(store)) {
    report.problem(['store'], `must be an object, got ${typeName(store)}`);
    return section;
  }
  for (const key of Object.keys(store)) {
    if (!STORE_KEYS.has(key)) report.problem(['store', key], 'unknown key (allowed: enabled, migrations, tidyInterval, tidyBuffer)');
  }
  if (store['enabled'] !== undefined) {
    if (typeof store['enabled'] !== 'boolean') report.problem(['store', 'enabled'], `must be a boolean, got ${typeName(store['enabled'])}`);
    else section.enabled = store['enabled'];
  }
  if (store['migrations'] !== undefined) {
    const mode = typeof store['migrations'] === 'string' ? parseMigrationMode(store['migrations']) : null;
    if (mode === null) report.problem(['store', 'migrations'], `must be "apply", "check" or "off", got ${JSON.stringify(store['migrations'])}`);
    else section.migrations = mode;
  }
  for (const [key, target] of [['tidyInterval', 'tidyIntervalMs'], ['tidyBuffer', 'tidyBufferMs']] as const) {
    const value = store[key];
    if (value === undefined) continue;
    const ms = typeof value === 'string' ? parseDurationMs(value) : null;
    if (ms === null) {
      report.problem(['store', key], `must be a Go duration such as "1h" or "72h", got ${JSON.stringify(value)}`);
      continue;
    }
    try {
      if (key === 'tidyInterval') checkTidyInterval(ms, (message) => new Error(message));
      else checkTidyBuffer(ms, (message) => new Error(message));
      section[target] = ms;
    } catch (error) {
      report.problem(['store', key], (error as Error).message);
    }
  }
  return section;
}

/** An inline db-config: CFSSL's decoding, with `env:`/`file:` references allowed for `data_source`; `null` after a problem. */
async function readInlineDbConfig(dir: string, value: Record<string, unknown>, env: Readonly<Record<string, string | undefined>>, report: ConfigReport): Promise<DbConfig | null> {
  const resolved: Record<string, unknown> = { ...value };
  for (const [key, field] of Object.entries(value)) {
    if (key.toLowerCase() !== 'data_source' || typeof field !== 'string') continue;
    if (field.startsWith('env:')) {
      const name = field.slice(4);
      const text = env[name];
      if (text === undefined || text === '') {
        report.problem([key], `environment variable ${name} is not set`);
        return null;
      }
      resolved[key] = text;
    } else if (field.startsWith('file:')) {
      const file = field.slice(5);
      try {
        resolved[key] = (await readFile(isAbsolute(file) ? file : resolve(dir, file), 'utf8')).trim();
      } catch (cause) {
        report.problem([key], `cannot read ${file} (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`);
        return null;
      }
    }
  }
  try {
    return parseDbConfig(JSON.stringify(resolved));
  } catch (cause) {
    report.problem([], (cause as Error).message);
    return null;
  }
}

/**
 * Decide the store: flags over the config file over the defaults. The db-config file itself is
 * read when the store is opened (its problems are start-up errors with CFSSL's 5200 messages).
 */
export function storeSettings(flags: StoreFlags, section: StoreConfigSection, dataDir: string): StoreSettings {
  const enabled = flags.enabled ?? (flags.dbConfigFile !== undefined ? true : (section.enabled ?? true));
  if (!enabled) return { enabled: false, why: flags.enabled === false ? '--no-store' : 'store.enabled is false in the config file' };
  const common = {
    enabled: true as const,
    migrations: flags.migrations ?? section.migrations ?? 'apply',
    tidyIntervalMs: flags.tidyIntervalMs ?? section.tidyIntervalMs ?? DEFAULT_TIDY_INTERVAL_MS,
    tidyBufferMs: flags.tidyBufferMs ?? section.tidyBufferMs ?? DEFAULT_TIDY_BUFFER_MS,
  };
  if (flags.dbConfigFile !== undefined) return { ...common, dbConfig: { file: flags.dbConfigFile }, source: `--db-config ${flags.dbConfigFile}` };
  if (section.dbConfig !== undefined) {
    const source = 'file' in section.dbConfig ? `config file db_config ${section.dbConfig.file}` : 'config file db_config';
    return { ...common, dbConfig: section.dbConfig, source };
  }
  return { ...common, dbConfig: { inline: defaultDbConfig(dataDir) }, source: 'default' };
}

/**
 * A data source fit for logs and messages: SQLite's as it is (a path); PostgreSQL's with any
 * password replaced by `***` (URL user-info, `password=` pairs, `?password=` parameters).
 */
export function describeDataSource(config: DbConfig): string {
  if (config.driver === 'sqlite3') return config.dataSource;
  const source = config.dataSource;
  if (/^postgres(?:ql)?:\/\//i.test(source)) {
    try {
      const url = new URL(source);
      if (url.password !== '') url.password = '***';
      for (const key of [...url.searchParams.keys()]) if (key.toLowerCase() === 'password') url.searchParams.set(key, '***');
      return url.toString();
    } catch {
      return 'postgres://…';
    }
  }
  // libpq key=value pairs: the value is a word or a single-quoted string with backslash escapes.
  return source.replace(/(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|\S*)/gi, '$1***');
}
