/**
 * CFSSL's db-config file (`certdb/dbconf/db_config.go`, lifecycle spec §1.1):
 * `{"driver":"sqlite3","data_source":"certs.db"}`, decoded as Go's `encoding/json` decodes it into
 * `dbconf.DBConfig` — keys matched case-insensitively, unknown keys ignored, the last of duplicate
 * keys wins — and refused with CFSSL's 5200 messages. The same file works for `cfssl` and certsmith.
 */
import { readFile } from 'node:fs/promises';
import { DbConfigError } from './errors.js';

/** Drivers certsmith opens. */
export type StoreDriver = 'sqlite3' | 'postgres';

/** A parsed db-config: CFSSL's `DBConfig{DriverName, DataSourceName}`. */
export interface DbConfig {
  /** `sqlite3` (a file path, `file:` URI or `:memory:`) or `postgres` (URL or `key=value` DSN). */
  driver: StoreDriver;
  /** The driver's data source exactly as written in the file. */
  dataSource: string;
}

/**
 * Go 1.19 `encoding/json` field matching: ASCII case folding, plus the two non-ASCII runes that fold
 * to letters of these keys (U+017F long s → `s`, U+212A Kelvin sign → `k`).
 */
function goFoldKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => c.toLowerCase()).replace(/\u017f/g, 's').replace(/\u212a/g, 'k');
}

/** The JSON kind name Go prints in `cannot unmarshal <kind>`. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'object';
  return typeof value === 'boolean' ? 'bool' : typeof value;
}

/**
 * Go's text for the JSON syntax errors a db-config file usually has. Go reports the first bad
 * character with what it was looking for; JavaScript's parser does not say the same, so the cases
 * that matter in practice are mapped and the rest keep JavaScript's description.
 */
function goSyntaxError(text: string, error: Error): string {
  const trimmed = text.trim();
  if (trimmed === '') return 'unexpected end of JSON input';
  const first = trimmed[0]!;
  if (!'{["-0123456789tfn'.includes(first)) return `invalid character ${goQuoteChar(first)} looking for beginning of value`;
  if (/Unexpected end of JSON input/i.test(error.message)) return 'unexpected end of JSON input';
  // V8 quotes the text around the problem (`Unexpected token 'p', ..."_source": postgres:/"... is
  // not valid JSON`), which can be part of a password: keep only what went wrong.
  return error.message.replace(/,\s*(?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
}

function goQuoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  return `'${JSON.stringify(c).slice(1, -1)}'`;
}

/**
 * Decode db-config JSON text as `dbconf.LoadFile` does after reading the file.
 * @throws DbConfigError (5200) `failed to unmarshal configuration: …`, `invalid db configuration`,
 *   or, for a driver certsmith does not have (`mysql`, anything else), a message naming the
 *   supported drivers.
 */
export function parseDbConfig(text: string): DbConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DbConfigError(`failed to unmarshal configuration: ${goSyntaxError(text, error as Error)}`);
  }
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) {
    throw new DbConfigError(
      `failed to unmarshal configuration: json: cannot unmarshal ${jsonKind(value)} into Go value of type dbconf.DBConfig`,
    );
  }
  let driver = '';
  let dataSource = '';
  let typeError: string | null = null;
  for (const [key, field] of Object.entries((value ?? {}) as Record<string, unknown>)) {
    const folded = goFoldKey(key);
    if (folded !== 'driver' && folded !== 'data_source') continue;
    if (field === null) continue; // Go leaves a string untouched on null
    if (typeof field !== 'string') {
      // Go keeps decoding after a type error and reports the first one.
      typeError ??= `json: cannot unmarshal ${jsonKind(field)} into Go struct field DBConfig.${folded} of type string`;
      continue;
    }
    if (folded === 'driver') driver = field;
    else dataSource = field;
  }
  if (typeError !== null) throw new DbConfigError(`failed to unmarshal configuration: ${typeError}`);
  if (driver === '' || dataSource === '') throw new DbConfigError('invalid db configuration');
  return { driver: checkDriver(driver), dataSource };
}

/** `sqlite3` and `postgres` are certsmith's drivers; CFSSL's `mysql` and unknown names are refused. */
function checkDriver(driver: string): StoreDriver {
  if (driver === 'sqlite3' || driver === 'postgres') return driver;
  if (driver === 'mysql') {
    throw new DbConfigError(
      'driver "mysql" is not supported by certsmith: use "sqlite3" or "postgres" (see docs/store.md for moving a CFSSL MySQL certdb)',
    );
  }
  // CFSSL's database/sql text for an unregistered driver, with the drivers certsmith has.
  throw new DbConfigError(`sql: unknown driver "${driver}" (forgotten import?); certsmith supports "sqlite3" and "postgres"`);
}

/**
 * Read and decode a db-config file (`-db-config FILE`) as CFSSL's `dbconf.LoadFile`.
 * @throws DbConfigError (5200) `invalid path`, `could not read configuration file`, or as {@link parseDbConfig}.
 */
export async function loadDbConfigFile(path: string): Promise<DbConfig> {
  if (path === '') throw new DbConfigError('invalid path');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new DbConfigError('could not read configuration file', { cause: error });
  }
  return parseDbConfig(text);
}
