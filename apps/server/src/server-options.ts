/**
 * `ServerOptions`: everything `certsmith serve` is configured with, typed and validated once. Flags
 * other features consume (CA, bundles, metadata, config) are carried as checked file paths; the
 * features read and parse them.
 */
import { resolve } from 'node:path';
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_HEADERS_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS, DEFAULT_MIN_TLS_VERSION, compileClientCnPattern, parseMinTlsVersion } from '@certsmith/http-api';
import { DEFAULT_SIGNER_TIMEOUT_MS } from '@certsmith/issuer';
import { defaultWorkerCount } from '@certsmith/worker-pool';
import type { LogLevel, MinTlsVersion } from '@certsmith/http-api';
import { ErrorCode } from '@certsmith/x509-core';
import { defaultDataDir } from './data-dir.js';
import { ServerOptionError } from './errors.js';
import { checkReadableFile } from './readable-file.js';
import { resolveStoreFlags } from './store-settings.js';
import type { StoreFlags } from './store-settings.js';
import { resolveRevocationFlags } from './revocation/revocation-settings.js';
import type { RevocationFlags } from './revocation/revocation-settings.js';

/** Resolved, validated server configuration. File paths are absolute. */
export interface ServerOptions {
  /** Address to listen on (CFSSL `-address`); default `127.0.0.1`. */
  address: string;
  /** Port (CFSSL `-port`); default 8888; 0 picks any free port. */
  port: number;
  /** CFSSL signing configuration file (`-config`). */
  configFile?: string;
  /** CA certificate (`-ca`), used by the local signer. */
  caFile?: string;
  /** CA private key (`-ca-key`). */
  caKeyFile?: string;
  /** Trusted roots for bundling (`-ca-bundle`). */
  caBundleFile?: string;
  /** Intermediates for bundling (`-int-bundle`). */
  intBundleFile?: string;
  /** Platform (root store) metadata for ubiquity ranking (`-metadata`). */
  metadataFile?: string;
  /**
   * Worker threads; default the number of CPUs less one, at least one (`defaultWorkerCount`). `0`:
   * none, every task runs on the event loop (what each worker process of `--processes` uses).
   */
  workers: number;
  /** Where certsmith keeps state (e.g. fetched intermediates); default `$XDG_DATA_HOME/certsmith` or `~/.certsmith`. */
  dataDir: string;
  /** Log level; default `info`. */
  logLevel: LogLevel;
  /** Largest accepted request body in bytes; default 1 MiB. */
  maxBodyBytes: number;
  /** Tasks that may wait for a worker before requests get 503; default `max(workers, 1) * 64`. */
  maxQueue: number;
  /** Time to receive a request's line and headers before 408 and close (`--headers-timeout`); default 10 000 ms. */
  headersTimeoutMs: number;
  /** Time to receive a request's body once its headers are in, before 408 and close (`--body-timeout`); default 20 000 ms. */
  bodyTimeoutMs: number;
  /** Most connections open at once; more are closed on accept (`--max-connections`); default 1024. */
  maxConnections: number;
  /** How long shutdown waits for in-flight requests; default 10 000 ms. */
  shutdownTimeoutMs: number;
  /** Server certificate (and intermediates) for HTTPS (`-tls-cert`); HTTPS when given with `tlsKeyFile`. */
  tlsCertFile?: string;
  /** Private key of `tlsCertFile` (`-tls-key`). */
  tlsKeyFile?: string;
  /** Lowest TLS version accepted (`-min-tls-version`): `1.2` (default) or `1.3`. Ignored without TLS. */
  minTlsVersion: MinTlsVersion;
  /** CA certificates client certificates must verify against (`-mutual-tls-ca`); needs TLS. */
  mutualTlsCaFile?: string;
  /** Expression the client certificate's CN must match, else 403 `Invalid CN` (`-mutual-tls-cn`); needs `mutualTlsCaFile`. */
  mutualTlsCn?: string;
  /** Endpoints not to serve (`-disable a,b`: bare names; they answer 404). `health` cannot be disabled. */
  disable: string[];
  /** Issuing endpoints (`newcert`, `sign`) that refuse every request with 400 `authentication required` (`--require-auth`). */
  requireAuth: string[];
  /** Longest a signer call may take before the request fails with 2500 (`--signer-timeout`); default 30 000 ms. */
  signerTimeoutMs: number;
  /**
   * Serve Prometheus `/metrics` on this separate `host:port` (`[v6]:port` for IPv6; port 0 picks one)
   * instead of the API port (`--metrics-address`). Absent: `/metrics` is on the API port.
   */
  metricsAddress?: string;
  /**
   * Let request-driven fetches (AIA URLs in submitted certificates, `domain` bundling) reach private,
   * loopback and link-local addresses (`--allow-private-networks`, or `"allowPrivateNetworks": true`
   * in the config file). Default false: such targets are refused (SSRF guard; CFSSL has none).
   */
  allowPrivateNetworks: boolean;
  /** Non-public ranges those fetches may reach anyway (config file `"allowCidrs"`). */
  allowCidrs: string[];
  /**
   * Pre-generated keys kept ready per key spec, for the whole server (`--key-pool rsa-2048=64`),
   * split evenly over the workers and filled while they are idle. Empty: no pool.
   */
  keyPool: Record<string, number>;
  /**
   * The certificate store flags (`--db-config`, `--no-store`, `--db-migrations`, `--tidy-interval`,
   * `--tidy-buffer`); unset ones come from the config file, then the defaults (`store-settings.ts`).
   */
  store: StoreFlags;
  /** The revocation flags (`--responder`, `--responder-key`, `--interval`); see `revocation/revocation-settings.ts`. */
  revocation: RevocationFlags;
}

/** Input to {@link resolveServerOptions}: any subset; relative paths resolve against the cwd. */
export type ServerOptionsInput = Partial<ServerOptions>;

/** Default listen address, as CFSSL. */
export const DEFAULT_ADDRESS = '127.0.0.1';
/** Default port, as CFSSL. */
export const DEFAULT_PORT = 8888;

/** Endpoints `--require-auth` accepts: the ones that issue without a token. */
export const REQUIRE_AUTH_ENDPOINTS: readonly string[] = ['newcert', 'sign'];

/** Endpoints `--disable` refuses to disable. */
export const UNDISABLEABLE_ENDPOINTS: readonly string[] = ['health'];

/** Largest `--signer-timeout` (what a Node timer can wait). */
export const MAX_SIGNER_TIMEOUT_MS = 2_147_483_647;

/** Largest `--headers-timeout` / `--body-timeout`: one hour (they exist to be short). */
export const MAX_TIMEOUT_MS = 3_600_000;

/** Largest `--max-connections`. */
export const MAX_CONNECTIONS = 1_000_000;

/** Split a CFSSL `-disable a,b` style list: trimmed, empty entries dropped (as Go's Split + lookup), unique. */
export function parseEndpointList(value: string | readonly string[]): string[] {
  const items = typeof value === 'string' ? value.split(',') : value.flatMap((item) => item.split(','));
  return [...new Set(items.map((item) => item.trim()).filter((item) => item !== ''))];
}

const FILE_OPTIONS = [
  ['configFile', '--config'],
  ['caFile', '--ca'],
  ['caKeyFile', '--ca-key'],
  ['caBundleFile', '--ca-bundle'],
  ['intBundleFile', '--int-bundle'],
  ['metadataFile', '--metadata'],
  ['tlsCertFile', '--tls-cert'],
  ['tlsKeyFile', '--tls-key'],
  ['mutualTlsCaFile', '--mutual-tls-ca'],
] as const;

/**
 * Fill in defaults and validate: numbers in range, and every given file exists, is a regular file
 * and is readable. Throws {@link ServerOptionError} naming the flag.
 */
export async function resolveServerOptions(
  input: ServerOptionsInput = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServerOptions> {
  const workers = input.workers ?? defaultWorkerCount();
  const options: ServerOptions = {
    address: input.address ?? DEFAULT_ADDRESS,
    port: input.port ?? DEFAULT_PORT,
    workers,
    dataDir: resolve(input.dataDir ?? defaultDataDir(env)),
    logLevel: input.logLevel ?? 'info',
    maxBodyBytes: input.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    // Without worker threads the event loop is the one lane tasks wait for.
    maxQueue: input.maxQueue ?? Math.max(workers, 1) * 64,
    headersTimeoutMs: input.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS,
    bodyTimeoutMs: input.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    maxConnections: input.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    shutdownTimeoutMs: input.shutdownTimeoutMs ?? 10_000,
    minTlsVersion: DEFAULT_MIN_TLS_VERSION,
    disable: parseEndpointList(input.disable ?? []),
    requireAuth: parseEndpointList(input.requireAuth ?? []),
    signerTimeoutMs: input.signerTimeoutMs ?? DEFAULT_SIGNER_TIMEOUT_MS,
    allowPrivateNetworks: input.allowPrivateNetworks === true,
    allowCidrs: [...(input.allowCidrs ?? [])],
    keyPool: { ...(input.keyPool ?? {}) },
    store: resolveStoreFlags(input.store),
    revocation: await resolveRevocationFlags(input.revocation),
  };
  checkInteger('--port', options.port, 0, 65_535);
  checkInteger('--workers', options.workers, 0, 1024);
  checkInteger('--max-body', options.maxBodyBytes, 1, Number.MAX_SAFE_INTEGER);
  checkInteger('--max-queue', options.maxQueue, 0, Number.MAX_SAFE_INTEGER);
  checkInteger('--headers-timeout', options.headersTimeoutMs, 1, MAX_TIMEOUT_MS);
  checkInteger('--body-timeout', options.bodyTimeoutMs, 1, MAX_TIMEOUT_MS);
  checkInteger('--max-connections', options.maxConnections, 1, MAX_CONNECTIONS);
  checkInteger('shutdownTimeoutMs', options.shutdownTimeoutMs, 0, Number.MAX_SAFE_INTEGER);
  if (options.address === '') throw new ServerOptionError(ErrorCode.BadRequest, '--address', 'must not be empty');
  checkInteger('--signer-timeout', options.signerTimeoutMs, 1, MAX_SIGNER_TIMEOUT_MS);
  resolveTlsOptions(input, options);
  if (input.metricsAddress !== undefined) {
    parseHostPort('--metrics-address', input.metricsAddress);
    options.metricsAddress = input.metricsAddress;
  }
  checkEndpointControls(options);

  for (const [key, flag] of FILE_OPTIONS) {
    const path = input[key];
    if (path === undefined) continue;
    options[key] = await checkReadableFile(flag, path);
  }
  return options;
}

/** TLS flags: both of cert/key or neither; mutual TLS only over TLS; CN pattern only with mutual TLS. */
function resolveTlsOptions(input: ServerOptionsInput, options: ServerOptions): void {
  if (input.minTlsVersion !== undefined) {
    const version = parseMinTlsVersion(String(input.minTlsVersion));
    if (version === null) {
      throw new ServerOptionError(ErrorCode.BadRequest, '--min-tls-version', `must be 1.2 or 1.3 (TLS 1.0 and 1.1 are not supported), got ${String(input.minTlsVersion)}`);
    }
    options.minTlsVersion = version;
  }
  const tls = input.tlsCertFile !== undefined || input.tlsKeyFile !== undefined;
  if (input.tlsCertFile === undefined && input.tlsKeyFile !== undefined) {
    throw new ServerOptionError(ErrorCode.BadRequest, '--tls-key', 'needs --tls-cert too (HTTPS needs both the certificate and its key)');
  }
  if (input.tlsCertFile !== undefined && input.tlsKeyFile === undefined) {
    throw new ServerOptionError(ErrorCode.BadRequest, '--tls-cert', 'needs --tls-key too (HTTPS needs both the certificate and its key)');
  }
  if (input.mutualTlsCaFile !== undefined && !tls) {
    throw new ServerOptionError(ErrorCode.BadRequest, '--mutual-tls-ca', 'needs --tls-cert and --tls-key (client certificates are only asked for over HTTPS)');
  }
  if (input.mutualTlsCn !== undefined) {
    if (input.mutualTlsCaFile === undefined) {
      throw new ServerOptionError(ErrorCode.BadRequest, '--mutual-tls-cn', 'needs --mutual-tls-ca (the CN is read from the verified client certificate)');
    }
    try {
      compileClientCnPattern(input.mutualTlsCn);
    } catch (error) {
      throw new ServerOptionError(ErrorCode.BadRequest, '--mutual-tls-cn', (error as Error).message, { cause: error });
    }
    options.mutualTlsCn = input.mutualTlsCn;
  }
}

/**
 * Parse `host:port` (`[::1]:9100` for IPv6) as `--metrics-address` takes it. Throws
 * {@link ServerOptionError} naming `flag` when the value is not of that form.
 */
export function parseHostPort(flag: string, value: string): { host: string; port: number } {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s\[\]]+)):(\d{1,5})$/.exec(value);
  const port = match === null ? NaN : Number(match[3]);
  if (match === null || port > 65_535) {
    throw new ServerOptionError(ErrorCode.BadRequest, flag, `must be host:port (e.g. 127.0.0.1:9100, [::1]:9100, 0.0.0.0:9100), got ${JSON.stringify(value)}`);
  }
  return { host: match[1] ?? match[2]!, port };
}

/** `--disable` may not name `health`; `--require-auth` only names issuing endpoints without a token. */
function checkEndpointControls(options: ServerOptions): void {
  for (const name of options.disable) {
    if (UNDISABLEABLE_ENDPOINTS.includes(name)) {
      throw new ServerOptionError(ErrorCode.BadRequest, '--disable', `${name} cannot be disabled (load balancers and orchestrators probe it; it reveals no key material)`);
    }
  }
  for (const name of options.requireAuth) {
    if (!REQUIRE_AUTH_ENDPOINTS.includes(name)) {
      throw new ServerOptionError(ErrorCode.BadRequest, '--require-auth', `must list endpoints among ${REQUIRE_AUTH_ENDPOINTS.join(', ')}, got ${JSON.stringify(name)}`);
    }
  }
}

function checkInteger(flag: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ServerOptionError(ErrorCode.BadRequest, flag, `must be an integer from ${min} to ${max}, got ${value}`);
  }
}
