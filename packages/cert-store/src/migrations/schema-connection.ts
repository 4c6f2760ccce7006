/**
 * The one connection migrations and schema checks run on. SQLite runs them in the calling thread
 * (start-up and `certsmith db migrate`, before the store's own thread opens the file); PostgreSQL on
 * one client, inside one transaction that holds an advisory lock, so instances starting together
 * migrate once.
 */
import type { StoreDriver } from '../db-config.js';

/** SQL access for migrations; placeholders are `?` for SQLite and `$1…` for PostgreSQL. */
export interface SchemaConnection {
  readonly driver: StoreDriver;
  /** Run one or more statements without parameters. */
  exec(sql: string): Promise<void>;
  /** Run one statement and return its rows. */
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
  /**
   * Run `work` in one transaction that no other migrating process runs at the same time (SQLite:
   * `BEGIN IMMEDIATE`; PostgreSQL: a transaction holding an advisory lock). DDL is transactional in
   * both, so a failed migration leaves the schema as it was.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Declared column types of a table, lower-cased, by column name; empty when the table does not exist. */
export async function tableColumns(connection: SchemaConnection, table: string): Promise<Map<string, string>> {
  const columns = new Map<string, string>();
  if (connection.driver === 'sqlite3') {
    const rows = await connection.query<{ name: string; type: string }>(`SELECT name, type FROM pragma_table_info(?)`, [table]);
    for (const row of rows) columns.set(row.name, row.type.toLowerCase());
  } else {
    const rows = await connection.query<{ column_name: string; data_type: string }>(
      `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
      [table],
    );
    for (const row of rows) columns.set(row.column_name, row.data_type.toLowerCase());
  }
  return columns;
}

/** True when the table exists in the store's schema. */
export async function tableExists(connection: SchemaConnection, table: string): Promise<boolean> {
  if (connection.driver === 'sqlite3') {
    const rows = await connection.query(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, [table]);
    return rows.length > 0;
  }
  const rows = await connection.query(`SELECT to_regclass(quote_ident(current_schema()) || '.' || $1) IS NOT NULL AS present`, [table]);
  return (rows[0] as { present: boolean } | undefined)?.present === true;
}
