/** Opening a store from a db-config, and the schema commands (`certsmith db migrate|check`). */
import type { DbConfig } from './db-config.js';
import { checkSchema, migrateSchema, prepareSchema } from './migrations/migrator.js';
import type { MigrationMode, SchemaStatus } from './migrations/migrator.js';
import type { SchemaConnection } from './migrations/schema-connection.js';
import { postgresClientConfig } from './postgres/postgres-data-source.js';
import { postgresError } from './postgres/postgres-errors.js';
import type { PostgresStoreOptions } from './postgres/postgres-store.js';
import { openSqliteDatabase, parseSqliteDataSource, sqliteSchemaConnection } from './sqlite/sqlite-database.js';
import { CallingThreadWriter, supportsCallingThreadWriter } from './sqlite/calling-thread-writer.js';
import { openInlineExecutor, openThreadExecutor } from './sqlite/sqlite-executor.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** SQLite settings. */
export interface SqliteStoreOptions {
  /** Run SQLite in the store's own thread (default true); `false` runs it in the calling thread (CLI commands). */
  thread?: boolean;
  /**
   * With the thread: commit issued rows (`recordCertificate`) on the calling thread when the
   * database is free, through a second connection, instead of posting each batch to the thread
   * (default true; WAL files only; see `sqlite/calling-thread-writer.ts`).
   */
  recordOnCallingThread?: boolean;
  /** How long a write waits for another process's lock before failing as unavailable; default 5000 ms. */
  busyTimeoutMs?: number;
}

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** Default `apply`: pending migrations run when the store opens; `check` refuses a stale schema; `off` trusts it. */
  migrations?: MigrationMode;
  /**
   * PostgreSQL with `migrations: 'off'` only (the other modes read the schema, so they connect):
   * `false` opens the pool without connecting, and the first query connects. Default `true`: the
   * store connects once while it opens, so an unreachable database or a wrong password stops
   * start-up. `false` is for a process whose database another process of the same server has
   * already checked (`serve --processes`): started while the database is down, it answers 503
   * until the database is back, as that other process does, instead of failing to start.
   */
  connectAtOpen?: boolean;
  sqlite?: SqliteStoreOptions;
  postgres?: Omit<PostgresStoreOptions, 'now' | 'maxBatch'>;
  /** Records per transaction at most (default 500). */
  maxBatch?: number;
  /** Clock (tests). */
  now?: () => Date;
}

/**
 * Open the store a db-config names, preparing its schema first as `options.migrations` says.
 * @throws DbConfigError for a bad data source, SchemaError for a schema that cannot be used,
 *   StoreUnavailableError when the database cannot be reached.
 */
export async function openStore(config: DbConfig, options: OpenStoreOptions = {}): Promise<Store> {
  const migrations = options.migrations ?? 'apply';
  const common = { ...(options.now === undefined ? {} : { now: options.now }), ...(options.maxBatch === undefined ? {} : { maxBatch: options.maxBatch }) };
  if (config.driver === 'sqlite3') {
    const source = parseSqliteDataSource(config.dataSource);
    const executorOptions = { source, migrations, ...(options.sqlite?.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.sqlite.busyTimeoutMs }) };
    if (options.sqlite?.thread === false) return new SqliteStore(await openInlineExecutor(executorOptions), common);
    const executor = await openThreadExecutor(executorOptions);
    const writer = options.sqlite?.recordOnCallingThread !== false && supportsCallingThreadWriter(source) ? new CallingThreadWriter(source) : null;
    return new SqliteStore(executor, { ...common, writer });
  }
  const clientConfig = postgresClientConfig(config.dataSource);
  if (migrations !== 'off' || options.connectAtOpen !== false) await withSchemaConnection(config, options, async (connection) => await prepareSchema(connection, migrations));
  const { PostgresStore } = await importPostgresDriver();
  return new PostgresStore(clientConfig, { ...options.postgres, ...common });
}

/**
 * The PostgreSQL driver, imported on first use: `pg` is ≈30 modules and a SQLite server (the
 * default) never needs it, and every module costs start-up time (docs/performance.md, start-up).
 */
async function importPostgresDriver() {
  const [{ default: pg }, driver] = await Promise.all([import('pg'), import('./postgres/postgres-store.js')]);
  return { pg, ...driver };
}

/** Run `work` on a schema connection to the database (closed afterwards). */
async function withSchemaConnection<T>(
  config: DbConfig,
  options: Pick<OpenStoreOptions, 'sqlite' | 'postgres'>,
  work: (connection: SchemaConnection) => Promise<T>,
): Promise<T> {
  let connection: SchemaConnection;
  if (config.driver === 'sqlite3') {
    const source = parseSqliteDataSource(config.dataSource);
    connection = sqliteSchemaConnection(openSqliteDatabase(source, options.sqlite?.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.sqlite.busyTimeoutMs }));
  } else {
    const { pg, postgresSchemaConnection, sessionConfig } = await importPostgresDriver();
    const client = new pg.Client(sessionConfig(postgresClientConfig(config.dataSource), options.postgres));
    client.on('error', () => undefined); // a broken connection fails the running query, which is reported
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw postgresError(error);
    }
    connection = postgresSchemaConnection(client);
  }
  try {
    return await work(connection);
  } catch (error) {
    throw config.driver === 'postgres' ? postgresError(error) : error;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** `certsmith db migrate`: apply pending migrations; returns their names (empty when up to date). */
export async function migrateStore(config: DbConfig, options: Pick<OpenStoreOptions, 'sqlite' | 'postgres'> = {}): Promise<string[]> {
  return await withSchemaConnection(config, options, async (connection) => await migrateSchema(connection));
}

/** `certsmith db check`: the schema's state, without changing anything. */
export async function checkStore(config: DbConfig, options: Pick<OpenStoreOptions, 'sqlite' | 'postgres'> = {}): Promise<SchemaStatus> {
  return await withSchemaConnection(config, options, async (connection) => await checkSchema(connection));
}
