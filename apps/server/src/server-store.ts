/**
 * The certificate store of a running server: opened at start-up (a store that cannot be opened
 * stops start-up, exit 2), probed by `/health`, tidied on a schedule, closed at shutdown after the
 * last request. Requests reach it through the operations (see `operations.ts`); embedders and the
 * revocation wiring through `RunningServer.store`.
 */
import { loadDbConfigFile, openStore } from '@certsmith/cert-store';
import type { DbConfig, MigrationMode, PrestartedStore, Store } from '@certsmith/cert-store';
import type { CertificateStoreMetrics, HealthContributor, Logger } from '@certsmith/http-api';
import { CertsmithError, isCodedError } from '@certsmith/x509-core';
import { EXIT_CONFIGURATION } from './errors.js';
import { describeDataSource } from './store-settings.js';
import type { StoreSettings } from './store-settings.js';

/**
 * The store could not be opened at start-up: the db-config file is unreadable or invalid (5200,
 * CFSSL's messages), the database cannot be reached (503), or its schema is not usable (11000, e.g.
 * pending migrations with `--db-migrations check`). The message names where the db-config came from
 * and the data source without its password. Exit code 2.
 */
export class StoreStartError extends CertsmithError {
  readonly exitCode: number = EXIT_CONFIGURATION;

  constructor(code: number, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** The opened store with what it is, for logs. */
export interface OpenedStore {
  store: Store;
  config: DbConfig;
  /** The data source without secrets. */
  location: string;
}

/**
 * Opens the store a db-config names, preparing its schema as `migrations` says: `openStore` of
 * `@certsmith/cert-store`, or another process's store reached over IPC (`serve --processes`).
 */
export type StoreOpener = (config: DbConfig, options: { migrations: MigrationMode }) => Promise<Store>;

/**
 * Open the store `settings` name, preparing its schema as `settings.migrations` says. `prestarted`
 * (the `certsmith` executable's guess, opened while the server's code loaded) is used when it is
 * that store, opened in a way `settings.migrations` accepts; otherwise it is closed and the store
 * is opened here, with `open`.
 * @throws StoreStartError
 */
export async function openServerStore(settings: Extract<StoreSettings, { enabled: true }>, prestarted?: PrestartedStore, open: StoreOpener = openStore): Promise<OpenedStore> {
  let config: DbConfig;
  if ('file' in settings.dbConfig) {
    try {
      config = await loadDbConfigFile(settings.dbConfig.file);
    } catch (error) {
      await prestarted?.close();
      throw startError(`certificate store (${settings.source})`, error);
    }
  } else {
    config = settings.dbConfig.inline;
  }
  const location = describeDataSource(config);
  try {
    const store = (await prestarted?.take(config, settings.migrations)) ?? (await open(config, { migrations: settings.migrations }));
    return { store, config, location };
  } catch (error) {
    throw startError(`certificate store ${config.driver} ${location} (${settings.source})`, error);
  }
}

function startError(what: string, error: unknown): StoreStartError {
  const message = error instanceof Error ? error.message : String(error);
  return new StoreStartError(isCodedError(error) ? error.code : 11000, `${what}: ${message}`, { cause: error });
}

/** Longest `/health` waits for the store to answer. */
const HEALTH_TIMEOUT_MS = 2_000;

/**
 * `/health` contributor `store: {healthy, driver}`. An unreachable store is shown but leaves the
 * server's `healthy` alone: instances sharing one database would all fail their health checks at
 * once and leave the load balancer, turning the coded 503s clients can retry into the balancer's own
 * errors — and bundling still works. Alert on `certsmith_certificate_store_up` instead.
 */
export function storeHealthContributor(store: Store): HealthContributor {
  return {
    key: 'store',
    async check() {
      let timer: NodeJS.Timeout | undefined;
      try {
        const answered = await Promise.race([
          store.ping().then(() => true),
          new Promise<boolean>((resolve) => {
            timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
          }),
        ]);
        return answered ? { healthy: true, detail: { healthy: true, driver: store.driver } } : { healthy: true, detail: { healthy: false, driver: store.driver, message: `no answer within ${HEALTH_TIMEOUT_MS} ms` } };
      } catch {
        return { healthy: true, detail: { healthy: false, driver: store.driver, message: 'the certificate store is unavailable' } };
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Options of {@link scheduleTidy}. */
export interface TidyScheduleOptions {
  /** Time between runs (each run waits 90–110 % of it, so instances sharing a database drift apart). */
  intervalMs: number;
  /** How long past expiry certificates are kept. */
  bufferMs: number;
  logger: Logger;
  metrics?: CertificateStoreMetrics;
}

/** A running tidy schedule. */
export interface TidySchedule {
  /** Stop scheduling; resolves when a run in progress has finished. */
  stop(): Promise<void>;
}

/**
 * Tidy `store` every `intervalMs` (the first run one interval after start). Safe with several
 * instances on one database: a tidy deletes in short transactions and only what is already due, so
 * two runs at once delete each row once between them.
 */
export function scheduleTidy(store: Store, options: TidyScheduleOptions): TidySchedule {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  const schedule = (): void => {
    if (stopped) return;
    const delay = Math.round(options.intervalMs * (0.9 + Math.random() * 0.2));
    timer = setTimeout(() => {
      running = runOnce().finally(() => {
        running = null;
        schedule();
      });
    }, delay);
    timer.unref();
  };
  const runOnce = async (): Promise<void> => {
    const started = performance.now();
    try {
      const result = await store.tidy({ bufferMs: options.bufferMs });
      options.metrics?.observeTidy(result);
      const durationMs = Math.round(performance.now() - started);
      const removed = result.certificates + result.ocspResponses + result.changes;
      options.logger[removed > 0 ? 'info' : 'debug']({ tidy: result, durationMs }, 'certificate store tidied');
    } catch (error) {
      options.metrics?.observeTidyFailure();
      options.logger.warn({ err: error }, 'certificate store tidy failed; the next run will try again');
    }
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
}
