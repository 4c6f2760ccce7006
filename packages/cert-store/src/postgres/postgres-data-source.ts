/**
 * A CFSSL `postgres` data source (lib/pq syntax) turned into node-postgres settings: a URL
 * (`postgres://user:password@host:port/db?sslmode=disable`) or libpq `key=value` pairs
 * (`dbname=certdb sslmode=disable host=/var/run/postgresql`), with lib/pq's TLS semantics — the
 * default `sslmode` is `require` (encrypt, do not verify), `verify-ca` checks the chain against
 * `sslrootcert`, `verify-full` also the host name — so a file that works with CFSSL connects the
 * same way. `PG*` environment variables fill what the data source leaves out, as in both drivers.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import type { ClientConfig } from 'pg';
import { DbConfigError } from '../errors.js';

/** Parse libpq `key=value` pairs (values may be single-quoted with `\'` and `\\` escapes). */
export function parseKeyValueDsn(dsn: string): Map<string, string> {
  const pairs = new Map<string, string>();
  let i = 0;
  const skipSpace = () => {
    while (i < dsn.length && /\s/.test(dsn[i]!)) i += 1;
  };
  // Bounded: every round consumes at least one character or throws.
  for (;;) {
    skipSpace();
    if (i >= dsn.length) return pairs;
    const keyStart = i;
    while (i < dsn.length && dsn[i] !== '=' && !/\s/.test(dsn[i]!)) i += 1;
    const key = dsn.slice(keyStart, i);
    skipSpace();
    if (dsn[i] !== '=' || key === '') throw new DbConfigError(`invalid data_source: missing "=" after "${key}"`);
    i += 1;
    skipSpace();
    let value = '';
    if (dsn[i] === "'") {
      i += 1;
      for (;;) {
        if (i >= dsn.length) throw new DbConfigError('invalid data_source: unterminated quoted string');
        const c = dsn[i]!;
        i += 1;
        if (c === "'") break;
        if (c === '\\' && i < dsn.length) {
          value += dsn[i]!;
          i += 1;
        } else value += c;
      }
    } else {
      while (i < dsn.length && !/\s/.test(dsn[i]!)) {
        if (dsn[i] === '\\' && i + 1 < dsn.length) i += 1;
        value += dsn[i]!;
        i += 1;
      }
    }
    pairs.set(key, value);
  }
}

function urlPairs(dataSource: string): Map<string, string> {
  let url: URL;
  try {
    url = new URL(dataSource);
  } catch {
    throw new DbConfigError('invalid data_source: not a postgres:// URL');
  }
  const pairs = new Map<string, string>();
  const host = decodeURIComponent(url.hostname);
  if (host !== '') pairs.set('host', host.startsWith('[') ? host.slice(1, -1) : host);
  if (url.port !== '') pairs.set('port', url.port);
  if (url.username !== '') pairs.set('user', decodeURIComponent(url.username));
  if (url.password !== '') pairs.set('password', decodeURIComponent(url.password));
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (database !== '') pairs.set('dbname', database);
  for (const [key, value] of url.searchParams) pairs.set(key, value);
  return pairs;
}

function readPemFile(key: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch {
    throw new DbConfigError(`could not read ${key} file ${path}`);
  }
}

/** lib/pq's sslmode handling as node-postgres TLS options. */
function tlsOptions(pairs: Map<string, string>): false | ConnectionOptions {
  const mode = pairs.get('sslmode') ?? process.env.PGSSLMODE ?? 'require';
  if (mode === 'disable') return false;
  if (mode !== 'require' && mode !== 'verify-ca' && mode !== 'verify-full') {
    throw new DbConfigError(`unsupported sslmode "${mode}"; only "require" (default), "verify-full", "verify-ca", and "disable" supported`);
  }
  const options: ConnectionOptions = {};
  const rootCert = pairs.get('sslrootcert');
  const cert = pairs.get('sslcert');
  const key = pairs.get('sslkey');
  if (cert !== undefined) options.cert = readPemFile('sslcert', cert);
  if (key !== undefined) options.key = readPemFile('sslkey', key);
  if (rootCert !== undefined) options.ca = readPemFile('sslrootcert', rootCert);
  // lib/pq: `require` with a root certificate behaves like verify-ca.
  const verify = mode !== 'require' || rootCert !== undefined;
  options.rejectUnauthorized = verify;
  if (verify && mode !== 'verify-full') options.checkServerIdentity = () => undefined;
  return options;
}

/** node-postgres settings for a CFSSL `postgres` data source. */
export function postgresClientConfig(dataSource: string): ClientConfig {
  const pairs = /^postgres(ql)?:\/\//.test(dataSource) ? urlPairs(dataSource) : parseKeyValueDsn(dataSource);
  const config: ClientConfig = { ssl: tlsOptions(pairs) };
  const host = pairs.get('host') ?? pairs.get('hostaddr');
  if (host !== undefined) config.host = host;
  const port = pairs.get('port');
  if (port !== undefined) {
    const n = Number(port);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new DbConfigError(`invalid port in data_source: ${port}`);
    config.port = n;
  }
  const user = pairs.get('user');
  if (user !== undefined) config.user = user;
  const password = pairs.get('password');
  if (password !== undefined) config.password = password;
  const database = pairs.get('dbname');
  if (database !== undefined) config.database = database;
  const timeout = pairs.get('connect_timeout');
  if (timeout !== undefined && Number(timeout) > 0) config.connectionTimeoutMillis = Number(timeout) * 1000;
  const application = pairs.get('application_name') ?? pairs.get('fallback_application_name');
  if (application !== undefined) config.application_name = application;
  return config;
}
