/**
 * Where certsmith keeps its files when `--data-dir` is not given (the development CA, the default
 * SQLite certificate store). Shared by `serve` and the store commands.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { DbConfig } from '@certsmith/cert-store';

/** `--data-dir` default: `$XDG_DATA_HOME/certsmith` when set, else `~/.certsmith`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_DATA_HOME'];
  return xdg ? join(xdg, 'certsmith') : join(homedir(), '.certsmith');
}

/** The SQLite file of the default store, in the data directory. */
export const DEFAULT_STORE_FILE = 'certs.db';

/** The default store: SQLite in `<data-dir>/certs.db`. */
export function defaultDbConfig(dataDir: string): DbConfig {
  return { driver: 'sqlite3', dataSource: join(dataDir, DEFAULT_STORE_FILE) };
}
