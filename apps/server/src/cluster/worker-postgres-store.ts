/**
 * The certificate store of a worker process of `serve --processes N` when it is PostgreSQL: the
 * process opens its own pool (`openStore`, as one process does) instead of reaching the leader's
 * store over IPC. Every message round trip over the channel costs both processes CPU and the
 * leader commits every row; PostgreSQL takes connections from many processes and commits them in
 * parallel anyway (docs/performance.md, "PostgreSQL pool per process"). The change feed is this
 * process's own `LISTEN` connection, so revocations reach it as they reach any other instance.
 *
 * Not here, the leader's only: migrations, the scheduled tidy, the OCSP refresh and the store's
 * gauges (`backgroundWork: false` in serve-worker.ts).
 */
import { openStore } from '@certsmith/cert-store';
import type { DbConfig, Store } from '@certsmith/cert-store';

/**
 * Connections in a worker process's pool: the three record batches a PostgreSQL store commits at
 * once, plus two for the reads of requests (certinfo, OCSP lookups, revoke). The leader keeps the
 * default pool of 10, since it also runs the background work; `serve --processes N` opens at most
 * 10 + 5·(N−1) pooled connections and N `LISTEN` connections (docs/deploy.md).
 */
export const WORKER_PROCESS_POSTGRES_CONNECTIONS = 5;

/**
 * Open this worker process's own pool on the PostgreSQL database `config` names.
 *
 * Migrations `off`, and no connection while opening: the leader applied or checked the schema
 * (`--db-migrations`) and reached the database before it listened, and it forks its workers only
 * after that, so a check here would read what the leader just read. Connecting now would also
 * make a worker that is (re)started while the database is down fail its start-up — and the leader
 * restarts a failed worker only so many times — where the leader itself keeps serving and answers
 * 503 until the database is back: the worker does the same, its first query connects.
 */
export async function openWorkerPostgresStore(config: DbConfig): Promise<Store> {
  return await openStore(config, { migrations: 'off', connectAtOpen: false, postgres: { maxConnections: WORKER_PROCESS_POSTGRES_CONNECTIONS } });
}
