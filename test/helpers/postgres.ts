/**
 * Throwaway PostgreSQL clusters for end-to-end tests (initdb + pg_ctl on a free loopback port, as
 * the `postgres` user when run as root). The implementation lives with the certificate store's own
 * tests; this is the e2e suite's entry to it.
 */
export { startPostgresCluster, postgresBinDir } from '../../packages/cert-store/src/test-support/postgres-cluster.js';
export type { PostgresCluster } from '../../packages/cert-store/src/test-support/postgres-cluster.js';
