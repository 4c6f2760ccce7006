/**
 * Runs the store's migrations with umzug (a maintained, driver-agnostic migration runner) and
 * keeps the state where each tool expects it: CFSSL's migrations in goose's `goose_db_version`
 * (one row per applied version, as `goose up` writes; goose's version 0 row first), certsmith's own
 * in `certsmith_migrations`. A later `goose up` with CFSSL's files therefore finds nothing to do,
 * and a future CFSSL migration 003 would still be applied by goose.
 */
import type { Umzug, UmzugStorage } from 'umzug';
import { SchemaError } from '../errors.js';
import type { SchemaConnection } from './schema-connection.js';
import { tableColumns, tableExists } from './schema-connection.js';
import { REQUIRED_COLUMNS, SQLITE_TEXT_COLUMNS, STORE_MIGRATIONS, SQLITE_REBUILD_MIGRATION, keepsText } from './migrations.js';
import type { StoreMigration } from './migrations.js';

/** What {@link checkSchema} found. */
export interface SchemaStatus {
  /** Migrations recorded as applied, in order. */
  applied: string[];
  /** Migrations this version of certsmith would apply. */
  pending: string[];
  /** goose's current version (`goose_db_version`), `null` when goose's table does not exist. */
  gooseVersion: number | null;
  /** certsmith migrations recorded by a newer certsmith (their tables are left alone). */
  unknownApplied: string[];
  /** What makes the schema unusable even after migrating (a wrong column type…), with the fix. */
  problems: string[];
  /** No pending migration and no problem: the store can open. */
  upToDate: boolean;
}

/** Options of {@link migrateSchema}. */
export interface MigrateOptions {
  /** Told about each migration applied. */
  onApplied?: (name: string) => void;
}

const GOOSE_TABLE_SQLITE = `CREATE TABLE goose_db_version (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		version_id INTEGER NOT NULL,
		is_applied INTEGER NOT NULL,
		tstamp TIMESTAMP DEFAULT (datetime('now'))
	);`;

const GOOSE_TABLE_POSTGRES = `CREATE TABLE goose_db_version (
            	id serial NOT NULL,
                version_id bigint NOT NULL,
                is_applied boolean NOT NULL,
                tstamp timestamp NULL default now(),
                PRIMARY KEY(id)
            );`;

function placeholders(connection: SchemaConnection, count: number): string[] {
  return Array.from({ length: count }, (_, i) => (connection.driver === 'sqlite3' ? '?' : `$${i + 1}`));
}

/** goose's table, created as goose's `createVersionTable` does (with the version 0 row) when missing. */
async function ensureStateTables(connection: SchemaConnection): Promise<void> {
  if (!(await tableExists(connection, 'goose_db_version'))) {
    await connection.exec(connection.driver === 'sqlite3' ? GOOSE_TABLE_SQLITE : GOOSE_TABLE_POSTGRES);
    const [a, b] = placeholders(connection, 2);
    await connection.query(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (${a}, ${b})`, [0, connection.driver === 'sqlite3' ? 1 : true]);
  }
  await connection.exec(
    connection.driver === 'sqlite3'
      ? `CREATE TABLE IF NOT EXISTS certsmith_migrations (name text PRIMARY KEY, applied_at timestamp NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f+00:00', 'now')))`
      : `CREATE TABLE IF NOT EXISTS certsmith_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
  );
}

/** goose's versions whose newest row says applied (goose reads its table newest first). */
async function gooseAppliedVersions(connection: SchemaConnection): Promise<{ applied: Set<number>; current: number | null }> {
  if (!(await tableExists(connection, 'goose_db_version'))) return { applied: new Set(), current: null };
  const rows = await connection.query<{ version_id: number | string; is_applied: number | boolean }>(
    `SELECT version_id, is_applied FROM goose_db_version ORDER BY id DESC`,
  );
  const seen = new Set<number>();
  const applied = new Set<number>();
  let current: number | null = null;
  for (const row of rows) {
    const version = Number(row.version_id);
    if (seen.has(version)) continue;
    seen.add(version);
    if (row.is_applied === true || row.is_applied === 1) {
      applied.add(version);
      current ??= version;
    }
  }
  return { applied, current: current ?? 0 };
}

async function certsmithApplied(connection: SchemaConnection): Promise<string[]> {
  if (!(await tableExists(connection, 'certsmith_migrations'))) return [];
  const rows = await connection.query<{ name: string }>(`SELECT name FROM certsmith_migrations ORDER BY name`);
  return rows.map((row) => row.name);
}

async function executedMigrations(connection: SchemaConnection): Promise<string[]> {
  const goose = await gooseAppliedVersions(connection);
  const own = new Set(await certsmithApplied(connection));
  return STORE_MIGRATIONS.filter((m) => (m.gooseVersion === undefined ? own.has(m.name) : goose.applied.has(m.gooseVersion))).map(
    (m) => m.name,
  );
}

function storageFor(connection: SchemaConnection): UmzugStorage {
  const byName = new Map(STORE_MIGRATIONS.map((m) => [m.name, m]));
  return {
    executed: async () => await executedMigrations(connection),
    async logMigration({ name }) {
      const migration = byName.get(name)!;
      if (migration.gooseVersion !== undefined) {
        const [a, b] = placeholders(connection, 2);
        await connection.query(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (${a}, ${b})`, [
          migration.gooseVersion,
          connection.driver === 'sqlite3' ? 1 : true,
        ]);
      } else {
        const [a] = placeholders(connection, 1);
        await connection.query(`INSERT INTO certsmith_migrations (name) VALUES (${a})`, [name]);
      }
    },
    async unlogMigration() {
      throw new SchemaError('certsmith does not roll migrations back');
    },
  };
}

/**
 * The migration runner, with `umzug` imported on first use: it loads ≈200 modules (its CLI's
 * dependencies), which every server start paid on its main thread although only the store's own
 * thread migrates (docs/performance.md, start-up).
 */
async function umzugFor(connection: SchemaConnection, migrations: readonly StoreMigration[]): Promise<Umzug<SchemaConnection>> {
  const { Umzug } = await import('umzug');
  return new Umzug<SchemaConnection>({
    migrations: migrations.map((m) => ({ name: m.name, up: async ({ context }) => await m.up(context) })),
    context: connection,
    storage: storageFor(connection),
    logger: undefined,
  });
}

/** Column problems that migrating does not fix (a table created by some other tool). */
async function columnProblems(connection: SchemaConnection, pending: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (const [table, required] of Object.entries(REQUIRED_COLUMNS)) {
    const columns = await tableColumns(connection, table);
    if (columns.size === 0) continue; // created by migration 001
    const missing = required.filter((name) => !columns.has(name));
    // Migration 002 adds these when it is pending.
    const fixedByPending = pending.includes('002_AddMetadataToCertificates') && table === 'certificates';
    if (missing.length > 0 && !fixedByPending) {
      problems.push(`table ${table} lacks column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} that CFSSL's migration 002 adds`);
    }
    if (connection.driver === 'sqlite3' && !pending.includes(SQLITE_REBUILD_MIGRATION)) {
      const numeric = SQLITE_TEXT_COLUMNS[table]!.filter((name) => columns.has(name) && !keepsText(columns.get(name)!));
      if (numeric.length > 0) {
        problems.push(
          `${table}.${numeric.join(', ')} declared ${columns.get(numeric[0]!)} (the SQL of CFSSL 1.2.0's era): SQLite stores ` +
            `serials and key identifiers in such columns as numbers and rounds them; rebuild ${table} with blob columns (docs/store.md)`,
        );
      }
    }
    if (connection.driver === 'postgres' && table === 'certificates') {
      for (const name of ['metadata', 'sans']) {
        const type = columns.get(name);
        if (type !== undefined && type !== 'jsonb') {
          problems.push(
            `certificates.${name} is ${type}; certsmith needs jsonb as in CFSSL's migration 002: ` +
              `ALTER TABLE certificates ALTER COLUMN ${name} TYPE jsonb USING ${name}::jsonb`,
          );
        }
      }
    }
  }
  return problems;
}

/** Read the schema's state without changing anything. */
export async function checkSchema(connection: SchemaConnection): Promise<SchemaStatus> {
  const applied = await executedMigrations(connection);
  const pending = STORE_MIGRATIONS.map((m) => m.name).filter((name) => !applied.includes(name));
  const known = new Set(STORE_MIGRATIONS.map((m) => m.name));
  const unknownApplied = (await certsmithApplied(connection)).filter((name) => !known.has(name));
  const { current } = await gooseAppliedVersions(connection);
  const problems = await columnProblems(connection, pending);
  return { applied, pending, gooseVersion: current, unknownApplied, problems, upToDate: pending.length === 0 && problems.length === 0 };
}

/**
 * Apply the pending migrations in one exclusive transaction; returns their names (empty when the
 * schema was up to date). Rows are never rewritten or removed.
 * @throws SchemaError when a migration fails (nothing is applied) or the schema has a problem
 *   migrating cannot fix.
 */
export async function migrateSchema(connection: SchemaConnection, options: MigrateOptions = {}): Promise<string[]> {
  const applied = await connection.exclusive(async () => {
    await ensureStateTables(connection);
    // Nothing pending (every start after the first): umzug would find the same and do nothing.
    const executed = new Set(await executedMigrations(connection));
    if (STORE_MIGRATIONS.every((m) => executed.has(m.name))) return [];
    try {
      const done = await (await umzugFor(connection, STORE_MIGRATIONS)).up();
      return done.map((m) => m.name);
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause ?? error;
      const failed = (error as { migration?: { name?: string } }).migration?.name;
      throw new SchemaError(
        `certificate store migration ${failed ?? ''} failed: ${cause instanceof Error ? cause.message : String(cause)}`.replace('  ', ' '),
        { cause },
      );
    }
  });
  for (const name of applied) options.onApplied?.(name);
  const status = await checkSchema(connection);
  if (status.problems.length > 0) throw new SchemaError(`certificate store schema: ${status.problems.join('; ')}`);
  return applied;
}

/**
 * What opening a store does with the schema: `apply` pending migrations (the default), only
 * `check` that none is pending (fail with a {@link SchemaError} naming them), or nothing (`off`).
 */
export type MigrationMode = 'apply' | 'check' | 'off';

/** Describe a schema that is not up to date, with the command that fixes it. */
export function describeSchemaStatus(status: SchemaStatus): string {
  const parts: string[] = [];
  if (status.pending.length > 0) {
    parts.push(`pending migrations ${status.pending.join(', ')} (run \`certsmith db migrate --db-config FILE\`)`);
  }
  parts.push(...status.problems);
  return `the certificate store's schema is not up to date: ${parts.join('; ')}`;
}

/** Apply or check the schema as `mode` says; returns the migrations applied. */
export async function prepareSchema(connection: SchemaConnection, mode: MigrationMode): Promise<string[]> {
  if (mode === 'off') return [];
  if (mode === 'apply') return await migrateSchema(connection);
  const status = await checkSchema(connection);
  if (!status.upToDate) throw new SchemaError(describeSchemaStatus(status));
  return [];
}
