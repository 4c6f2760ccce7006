/**
 * What the host hands a signer plugin when creating it: where relative paths are anchored, how to
 * read secrets by reference, a logger, and a way to report lifecycle events. Secrets never sit
 * inline in configuration (style guide, "Plugin contract"); a plugin names them as `env:NAME` or
 * `file:PATH`, the forms CFSSL accepts for `-ca-key` and auth keys (behaviour doc 4.2, 4.4).
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

import { SecretReferenceError } from './errors.js';

/** Structured fields of a log line; never put secrets here. */
export type LogFields = Record<string, unknown>;

/** The logger a plugin gets: a sink for messages, with no access to configuration or secrets. */
export interface SignerLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/**
 * Lifecycle events a signer may report, a closed list so a host can count them under bounded metric
 * labels (certsmith: `certsmith_signer_events_total{label,plugin,event}`). An event carries its name
 * only — never a message, a key id or a secret.
 */
export const SIGNER_EVENTS = [
  /** A lost session or connection to the key (HSM session, remote CA) was re-established and the call went on; no outage. */
  'session_recovered',
  /** The backend (HSM token, remote CA) became unusable: calls now fail (2500) until it comes back. Report the transition, not every failed call. */
  'backend_down',
  /** The backend is usable again after `backend_down`. */
  'backend_recovered',
] as const;

/** One of {@link SIGNER_EVENTS}. */
export type SignerEvent = (typeof SIGNER_EVENTS)[number];

/** Whether `value` is one of {@link SIGNER_EVENTS}. */
export function isSignerEvent(value: unknown): value is SignerEvent {
  return typeof value === 'string' && (SIGNER_EVENTS as readonly string[]).includes(value);
}

/** A parsed secret reference. */
export type SecretReference = { kind: 'env'; name: string } | { kind: 'file'; path: string };

/** Context passed to `create(options, context)`. */
export interface SignerContext {
  /** Directory of the configuration file; relative paths in plugin options are resolved against it. */
  readonly configDir: string;
  /** Resolve `path` against {@link SignerContext.configDir} (absolute paths are returned as they are). */
  resolvePath(path: string): string;
  /**
   * Read a secret named by reference: `env:NAME` (environment variable) or `file:PATH` (file,
   * relative to the config dir). Text secrets have trailing whitespace removed, because a PIN or
   * key file written with `echo` ends in a newline (CFSSL trims `file:` auth keys too, doc 4.4).
   * Rejects with a 2001 {@link SecretReferenceError} that never repeats the secret.
   */
  resolveSecret(reference: string): Promise<string>;
  /** Like {@link SignerContext.resolveSecret} but returns the raw bytes, untrimmed (DER keys). */
  resolveSecretBytes(reference: string): Promise<Uint8Array>;
  /** Log sink. */
  readonly logger: SignerLogger;
  /**
   * Report a lifecycle event ({@link SIGNER_EVENTS}) for the host to count; cheap, synchronous,
   * never throws. Unknown names are ignored. Optional, because hosts (and hand-made contexts in
   * tests) from before it existed do not have it: call it as `context.reportEvent?.('backend_down')`.
   */
  reportEvent?(event: SignerEvent): void;
}

/** Options of {@link createSignerContext}. */
export interface SignerContextOptions {
  /** Directory relative paths are resolved against (default: the process working directory). */
  configDir?: string;
  /** Environment to read `env:` references from (default: `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Logger (default: discards everything). */
  logger?: SignerLogger;
  /** Receives the events the signer reports (known names only); a throw here is ignored. Default: dropped. */
  onEvent?: (event: SignerEvent) => void;
}

/** A logger that discards everything. */
export const silentLogger: SignerLogger = Object.freeze({
  debug() {},
  info() {},
  warn() {},
  error() {},
});

/**
 * Parse `env:NAME` / `file:PATH`; `null` when `value` has neither prefix (a plain value, e.g. a
 * path, which callers may accept as CFSSL does for `-ca`).
 */
export function parseSecretReference(value: string): SecretReference | null {
  if (value.startsWith('env:')) return { kind: 'env', name: value.slice(4) };
  if (value.startsWith('file:')) return { kind: 'file', path: value.slice(5) };
  return null;
}

/** Build the context the host passes to a plugin's `create`. */
export function createSignerContext(options: SignerContextOptions = {}): SignerContext {
  const configDir = resolve(options.configDir ?? process.cwd());
  const env = options.env ?? process.env;
  const logger = options.logger ?? silentLogger;
  const resolvePath = (path: string): string => (isAbsolute(path) ? path : resolve(configDir, path));

  const resolveSecretBytes = async (reference: string): Promise<Uint8Array> => {
    const parsed = parseSecretReference(reference);
    if (parsed === null) {
      // Do not echo the value: someone may have pasted the secret itself here.
      throw new SecretReferenceError('secret reference must be env:NAME or file:PATH');
    }
    if (parsed.kind === 'env') {
      if (parsed.name === '') throw new SecretReferenceError('secret reference env: names no variable');
      const value = env[parsed.name];
      if (value === undefined) throw new SecretReferenceError(`environment variable ${parsed.name} is not set`);
      return new TextEncoder().encode(value);
    }
    if (parsed.path === '') throw new SecretReferenceError('secret reference file: names no file');
    const path = resolvePath(parsed.path);
    try {
      const bytes = await readFile(path);
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (cause) {
      const code = (cause as NodeJS.ErrnoException).code ?? 'read error';
      throw new SecretReferenceError(`cannot read secret file ${path}: ${code}`, { cause });
    }
  };

  const onEvent = options.onEvent;
  // Plugins may be plain JavaScript: check the name here so a host never sees an unbounded label,
  // and keep a faulty host callback from breaking the signer that reported.
  const reportEvent = (event: SignerEvent): void => {
    if (onEvent === undefined || !isSignerEvent(event)) return;
    try {
      onEvent(event);
    } catch {
      // Counting an event must not fail a signature or a reconnection.
    }
  };

  return {
    configDir,
    resolvePath,
    resolveSecretBytes,
    reportEvent,
    async resolveSecret(reference: string): Promise<string> {
      const bytes = await resolveSecretBytes(reference);
      return new TextDecoder().decode(bytes).replace(/\s+$/, '');
    },
    logger,
  };
}
