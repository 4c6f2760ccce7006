/**
 * The `certsmith` command line. Every command takes CFSSL's flag names; CFSSL (Go's `flag` package)
 * spells them with one dash (`-ca-key file`, `-port=0`), so both `-name` and `--name` are accepted
 * for every long flag of every command (`go-flags.ts`). Unknown flags and stray arguments are usage
 * errors (exit code 1), as in CFSSL.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseMinTlsVersion } from '@certsmith/http-api';
import { parseKeyPoolSizes } from '@certsmith/issuer';
import type { LogLevel, MinTlsVersion } from '@certsmith/http-api';
import { acceptGoFlagsEverywhere } from './go-flags.js';
import { LOG_LEVELS, logLevelOf } from './log-level.js';
import { DEFAULT_PROCESSES, MAX_DEFAULT_PROCESSES, MAX_PROCESSES } from './cluster/process-count.js';
import { MAX_CONNECTIONS, MAX_TIMEOUT_MS, parseEndpointList } from './server-options.js';
import { parseDurationMs, parseMigrationMode } from './store-settings.js';
import type { MigrationMode } from '@certsmith/cert-store';
import type { ServerOptionsInput } from './server-options.js';
import { addRevocationServeOptions, revocationFlagsOf } from './revocation/revocation-settings.js';
import { registerHsmCommand } from './hsm-command.js';
import { registerBundleCommand } from './commands/bundle.js';
import { registerCertinfoCommand } from './commands/certinfo.js';
import { registerConfigCommand } from './commands/config-check.js';
import { registerCertsCommand } from './commands/certs.js';
import { registerDbCommand } from './commands/db.js';
import { registerGencertCommand } from './commands/gencert.js';
import { registerGenkeyCommand } from './commands/genkey.js';
import { registerSignCommand } from './commands/sign.js';
import { registerSplitCommand } from './commands/split.js';
import { registerRevocationCommands } from './commands/revocation-commands.js';

/** What the program does for each command; injected so tests can parse without starting a server. */
export interface CliHandlers {
  serve(options: ServerOptionsInput): Promise<void>;
}

/** Package version, shown by `--version`. */
export const VERSION = '0.1.0';

/** Parse `--loglevel`: CFSSL's 0–5 or a pino level name. */
export function parseLogLevel(value: string): LogLevel {
  const level = logLevelOf(value);
  if (level === null) throw new InvalidArgumentError(`expected 0-5 or one of ${LOG_LEVELS.join(', ')}`);
  return level;
}

/** Parse `--min-tls-version`: `1.2` or `1.3` (CFSSL's `1.0`/`1.1` are refused: not offered by certsmith). */
function parseMinTlsVersionFlag(value: string): MinTlsVersion {
  const version = parseMinTlsVersion(value);
  if (version === null) throw new InvalidArgumentError('expected 1.2 or 1.3 (TLS 1.0 and 1.1 are not supported)');
  return version;
}

function integerParser(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    const number = Number(value);
    if (number < min || number > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`);
    return number;
  };
}

/** Build the `certsmith` program. */
export function createProgram(handlers: CliHandlers): Command {
  const program = new Command('certsmith')
    .description('CFSSL-compatible certificate bundling and issuing server')
    .version(VERSION, '--version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .allowExcessArguments(false);

  const serve = program
    .command('serve')
    .description('serve the CFSSL HTTP API (/api/v1/cfssl/<op>)')
    .helpOption('-h, --help', 'show help')
    .option('--address <address>', 'address to listen on (default: 127.0.0.1)')
    .option('--port <port>', 'port to listen on, 0 for any free port (default: 8888)', integerParser(0, 65_535))
    .option('--config <file>', 'CFSSL signing configuration file')
    .option('--ca <file>', 'CA certificate (PEM)')
    .option('--ca-key <file>', 'CA private key (PEM)')
    .option('--ca-bundle <file>', 'trusted root certificates for bundling')
    .option('--int-bundle <file>', 'intermediate certificates for bundling')
    .option('--metadata <file>', 'root store (platform) metadata for bundling')
    .option(
      '--workers <n>',
      'worker threads (default: number of CPUs less one, at least 1); 0: no worker threads, every task on the event loop (what each --processes worker process uses)',
      integerParser(0, 1024),
    )
    .option('--data-dir <dir>', 'state directory (default: $XDG_DATA_HOME/certsmith or ~/.certsmith)')
    .option(
      '--processes <n>',
      `processes serving the one port, each a whole server; the certificate store stays in this process (default: one per CPU, at most ${MAX_DEFAULT_PROCESSES}; here ${DEFAULT_PROCESSES})`,
      integerParser(1, MAX_PROCESSES),
    )
    .addOption(
      new Option('--loglevel <level>', 'log level: CFSSL 0-5 (0 debug … 5 fatal) or trace|debug|info|warn|error|fatal|silent (default: info)').argParser(
        parseLogLevel,
      ),
    )
    .option('--max-body <bytes>', 'largest request body in bytes (default: 1048576)', integerParser(1, Number.MAX_SAFE_INTEGER))
    .option('--max-queue <n>', 'tasks that may wait for a worker before 503 (default: max(workers, 1) * 64)', integerParser(0, Number.MAX_SAFE_INTEGER))
    .option('--headers-timeout <ms>', 'time a client has to send the request line and headers, else 408 and close (default: 10000)', integerParser(1, MAX_TIMEOUT_MS))
    .option('--body-timeout <ms>', 'time a client has to send the request body once its headers are in, else 408 and close (default: 20000)', integerParser(1, MAX_TIMEOUT_MS))
    .option('--max-connections <n>', 'most connections open at once; more are closed as soon as they are accepted (default: 1024)', integerParser(1, MAX_CONNECTIONS))
    .option('--tls-cert <file>', 'server certificate (PEM, intermediates may follow) for HTTPS; needs --tls-key')
    .option('--tls-key <file>', 'private key of --tls-cert (PEM); needs --tls-cert')
    .option('--min-tls-version <version>', 'lowest TLS version accepted: 1.2 or 1.3 (default: 1.2)', parseMinTlsVersionFlag)
    .option('--mutual-tls-ca <file>', 'require client certificates that verify against these CA certificates (PEM); needs TLS')
    .option('--mutual-tls-cn <regex>', 'client certificate CN must match this regular expression, else 403 Invalid CN; needs --mutual-tls-ca')
    .option('--disable <endpoints>', 'comma-separated endpoints not to serve (404), e.g. newcert,sign; health cannot be disabled')
    .option('--require-auth <endpoints>', 'newcert and/or sign answer every request 400 "authentication required" (use authsign)')
    .option('--signer-timeout <ms>', 'longest a signer call may take before the request fails with 2500 (default: 30000)', integerParser(1, 2_147_483_647))
    .option('--metrics-address <host:port>', 'serve Prometheus /metrics on this address instead of the API port (e.g. 127.0.0.1:9100)')
    .option('--allow-private-networks', 'let AIA and domain bundling fetch from private, loopback and link-local addresses (refused by default)')
    .option(
      '--key-pool <specs>',
      'keep pre-generated keys ready, filled while workers are idle, each used once, never stored, e.g. rsa-2048=64,ecdsa-256=32 (default: none)',
      keyPoolParser,
    )
    .option('--db-config <file>', 'CFSSL db-config file ({"driver": "sqlite3"|"postgres", "data_source": …}) of the certificate store (default: <data-dir>/certs.db, SQLite)')
    .option('--no-store', 'record nothing: no certificate store, no certadd, certificate inventory or certinfo by serial')
    .option('--db-migrations <mode>', 'what start-up does with pending store migrations: apply, check (refuse to start) or off (default: apply)', migrationModeParser)
    .option('--tidy-interval <duration>', 'how often expired certificates are removed from the store, e.g. 1h; 0 turns it off (default: 1h)', durationParser)
    .option('--tidy-buffer <duration>', 'how long past expiry a certificate stays in the store; revoked ones stay at least until expiry (default: 72h)', durationParser)
    .allowExcessArguments(false);
  addRevocationServeOptions(serve).action(async (flags: ServeFlags) => {
    await handlers.serve(toServerOptionsInput(flags));
  });

  registerHsmCommand(program);
  registerGencertCommand(program);
  registerGenkeyCommand(program);
  registerSignCommand(program);
  registerBundleCommand(program);
  registerCertinfoCommand(program);
  registerSplitCommand(program);
  registerConfigCommand(program);
  registerCertsCommand(program);
  registerDbCommand(program);
  registerRevocationCommands(program);
  // One Go-style flag shim for every command, applied here so that none is left out.
  return acceptGoFlagsEverywhere(program);
}

/** Commander's camel-cased view of the serve flags. */
interface ServeFlags {
  address?: string;
  port?: number;
  config?: string;
  ca?: string;
  caKey?: string;
  caBundle?: string;
  intBundle?: string;
  metadata?: string;
  workers?: number;
  /** Read by the executable before the program runs (`cluster/process-count.ts`): one process parses it as any flag. */
  processes?: number;
  dataDir?: string;
  loglevel?: LogLevel;
  maxBody?: number;
  maxQueue?: number;
  headersTimeout?: number;
  bodyTimeout?: number;
  maxConnections?: number;
  tlsCert?: string;
  tlsKey?: string;
  minTlsVersion?: MinTlsVersion;
  mutualTlsCa?: string;
  mutualTlsCn?: string;
  disable?: string;
  requireAuth?: string;
  signerTimeout?: number;
  metricsAddress?: string;
  allowPrivateNetworks?: boolean;
  keyPool?: Record<string, number>;
  dbConfig?: string;
  /** false with `--no-store` (commander's negated option, true otherwise). */
  store?: boolean;
  dbMigrations?: MigrationMode;
  tidyInterval?: number;
  tidyBuffer?: number;
}

/** `--db-migrations` value. */
function migrationModeParser(value: string): MigrationMode {
  const mode = parseMigrationMode(value);
  if (mode === null) throw new InvalidArgumentError('expected apply, check or off');
  return mode;
}

/** A Go duration (`90m`, `1h`, `72h`) → milliseconds. */
function durationParser(value: string): number {
  const ms = parseDurationMs(value);
  if (ms === null) throw new InvalidArgumentError('expected a duration such as 30m, 1h or 72h');
  return ms;
}

/** `--key-pool` value → sizes; a usage error (exit 1) naming the bad entry otherwise. */
function keyPoolParser(value: string): Record<string, number> {
  try {
    return parseKeyPoolSizes(value);
  } catch (error) {
    throw new InvalidArgumentError(error instanceof Error ? error.message : String(error));
  }
}

function toServerOptionsInput(flags: ServeFlags): ServerOptionsInput {
  const input: ServerOptionsInput = {};
  if (flags.address !== undefined) input.address = flags.address;
  if (flags.port !== undefined) input.port = flags.port;
  if (flags.config !== undefined) input.configFile = flags.config;
  if (flags.ca !== undefined) input.caFile = flags.ca;
  if (flags.caKey !== undefined) input.caKeyFile = flags.caKey;
  if (flags.caBundle !== undefined) input.caBundleFile = flags.caBundle;
  if (flags.intBundle !== undefined) input.intBundleFile = flags.intBundle;
  if (flags.metadata !== undefined) input.metadataFile = flags.metadata;
  if (flags.workers !== undefined) input.workers = flags.workers;
  if (flags.dataDir !== undefined) input.dataDir = flags.dataDir;
  if (flags.loglevel !== undefined) input.logLevel = flags.loglevel;
  if (flags.maxBody !== undefined) input.maxBodyBytes = flags.maxBody;
  if (flags.maxQueue !== undefined) input.maxQueue = flags.maxQueue;
  if (flags.headersTimeout !== undefined) input.headersTimeoutMs = flags.headersTimeout;
  if (flags.bodyTimeout !== undefined) input.bodyTimeoutMs = flags.bodyTimeout;
  if (flags.maxConnections !== undefined) input.maxConnections = flags.maxConnections;
  if (flags.tlsCert !== undefined) input.tlsCertFile = flags.tlsCert;
  if (flags.tlsKey !== undefined) input.tlsKeyFile = flags.tlsKey;
  if (flags.minTlsVersion !== undefined) input.minTlsVersion = flags.minTlsVersion;
  if (flags.mutualTlsCa !== undefined) input.mutualTlsCaFile = flags.mutualTlsCa;
  if (flags.mutualTlsCn !== undefined) input.mutualTlsCn = flags.mutualTlsCn;
  if (flags.disable !== undefined) input.disable = parseEndpointList(flags.disable);
  if (flags.requireAuth !== undefined) input.requireAuth = parseEndpointList(flags.requireAuth);
  if (flags.signerTimeout !== undefined) input.signerTimeoutMs = flags.signerTimeout;
  if (flags.metricsAddress !== undefined) input.metricsAddress = flags.metricsAddress;
  if (flags.allowPrivateNetworks === true) input.allowPrivateNetworks = true;
  if (flags.keyPool !== undefined) input.keyPool = flags.keyPool;
  const store: NonNullable<ServerOptionsInput['store']> = {};
  if (flags.store === false) store.enabled = false;
  if (flags.dbConfig !== undefined) store.dbConfigFile = flags.dbConfig;
  if (flags.dbMigrations !== undefined) store.migrations = flags.dbMigrations;
  if (flags.tidyInterval !== undefined) store.tidyIntervalMs = flags.tidyInterval;
  if (flags.tidyBuffer !== undefined) store.tidyBufferMs = flags.tidyBuffer;
  if (Object.keys(store).length > 0) input.store = store;
  const revocation = revocationFlagsOf(flags);
  if (revocation !== undefined) input.revocation = revocation;
  return input;
}
