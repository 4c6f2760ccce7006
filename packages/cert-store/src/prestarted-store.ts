/**
 * A store opened before its server has worked out which store it needs. Opening the default SQLite
 * store starts the store's thread, which imports its modules and opens the file (≈150 ms on a
 * 2-core machine); a server that opens it only once its own code is loaded waits for that with one
 * core idle. Opened first thing instead, from a guess at the store the server will want
 * ({@link prestartStore}), the thread starts while the server imports its code, and the server
 * takes it ({@link PrestartedStore.take}) only when the store it resolved is the same one — else it
 * is closed and the server opens its own. Numbers: docs/performance.md, start-up.
 *
 * The guess never changes a database: it opens with `check` (a current schema is used as it is, a
 * schema with pending migrations fails the guess and is left to the server, which applies them only
 * once its configuration has been validated).
 */
import type { DbConfig } from './db-config.js';
import type { MigrationMode } from './migrations/migrator.js';
import { openStore } from './open-store.js';
import type { Store } from './store.js';

/** A store being opened ahead of its server by {@link prestartStore}. */
export class PrestartedStore {
  readonly #config: DbConfig;
  readonly #migrations: MigrationMode;
  #opening: Promise<Store> | null;

  /** @internal use {@link prestartStore} */
  constructor(config: DbConfig, migrations: MigrationMode) {
    this.#config = { driver: config.driver, dataSource: config.dataSource };
    this.#migrations = migrations;
    this.#opening = openStore(this.#config, { migrations });
    // Awaited by take() or close(); until then a failure is not an unhandled rejection.
    this.#opening.catch(() => undefined);
  }

  /**
   * The opened store when it is the one `config` names and was opened in a way `migrations`
   * accepts (`apply` and `check` both accept a current schema; `off` only a store opened with
   * `off`); `null` otherwise — or when it could not be opened, so the caller opens the store itself
   * and reports its own error. A store not handed out is closed. Only the first call can get it.
   */
  async take(config: DbConfig, migrations: MigrationMode): Promise<Store | null> {
    const same = config.driver === this.#config.driver && config.dataSource === this.#config.dataSource && accepts(migrations, this.#migrations);
    if (!same) {
      await this.close();
      return null;
    }
    const opening = this.#opening;
    this.#opening = null;
    if (opening === null) return null;
    try {
      return await opening;
    } catch {
      return null;
    }
  }

  /** Close the store unless it was taken (waits for its opening to finish first). */
  async close(): Promise<void> {
    const opening = this.#opening;
    this.#opening = null;
    if (opening === null) return;
    try {
      await (await opening).close();
    } catch {
      // Not opened, or already gone: nothing to close.
    }
  }
}

/** True when a store opened with `opened` may serve a server that asked for `wanted`. */
function accepts(wanted: MigrationMode, opened: MigrationMode): boolean {
  return wanted === 'off' ? opened === 'off' : opened === 'check';
}

/**
 * Start opening the store `config` names for a server that has not resolved its store yet (see the
 * module comment): with `off` when the server is expected to run with `--db-migrations off`,
 * otherwise with `check`, so that nothing in the database changes before the server has validated
 * its configuration.
 */
export function prestartStore(config: DbConfig, options: { migrations: MigrationMode }): PrestartedStore {
  return new PrestartedStore(config, options.migrations === 'off' ? 'off' : 'check');
}
