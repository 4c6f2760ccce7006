/**
 * `ServerOptions`: everything `certsmith serve` is configured with, typed and validated once. Flags
 * other features consume (CA, bundles, metadata, config) are carried as checked file paths; the
 * features read and parse them.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { availableParallelism, homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_MAX_BODY_BYTES } from '@certsmith/http-api';
import type { LogLevel } from '@certsmith/http-api';
import { ErrorCode } from '@certsmith/x509-core';
import { FILE_FLAG_CODES, ServerOptionError } from './errors.js';

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
  /** Worker threads; default the number of CPUs. */
  workers: number;
  /** Where certsmith keeps state (e.g. fetched intermediates); default `$XDG_DATA_HOME/certsmith` or `~/.certsmith`. */
  dataDir: string;
  /** Log level; default `info`. */
  logLevel: LogLevel;
  /** Largest accepted request body in bytes; default 1 MiB. */
  maxBodyBytes: number;
  /** Tasks that may wait for a worker before requests get 503; default `workers * 64`. */
  maxQueue: number;
  /** How long shutdown waits for in-flight requests; default 10 000 ms. */
  shutdownTimeoutMs: number;
}

/** Input to {@link resolveServerOptions}: any subset; relative paths resolve against the cwd. */
export type ServerOptionsInput = Partial<ServerOptions>;

/** Default listen address, as CFSSL. */
export const DEFAULT_ADDRESS = '127.0.0.1';
/** Default port, as CFSSL. */
export const DEFAULT_PORT = 8888;

/** `--data-dir` default: `$XDG_DATA_HOME/certsmith` when set, else `~/.certsmith`. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env['XDG_DATA_HOME'];
  return xdg ? join(xdg, 'certsmith') : join(homedir(), '.certsmith');
}

const FILE_OPTIONS = [
  ['configFile', '--config'],
  ['caFile', '--ca'],
  ['caKeyFile', '--ca-key'],
  ['caBundleFile', '--ca-bundle'],
  ['intBundleFile', '--int-bundle'],
  ['metadataFile', '--metadata'],
] as const;

/**
 * Fill in defaults and validate: numbers in range, and every given file exists, is a regular file
 * and is readable. Throws {@link ServerOptionError} naming the flag.
 */
export async function resolveServerOptions(
  input: ServerOptionsInput = {},
  env: NodeJS.ProcessEnv = process.env,
): Promise<ServerOptions> {
  const workers = input.workers ?? availableParallelism();
  const options: ServerOptions = {
    address: input.address ?? DEFAULT_ADDRESS,
    port: input.port ?? DEFAULT_PORT,
    workers,
    dataDir: resolve(input.dataDir ?? defaultDataDir(env)),
    logLevel: input.logLevel ?? 'info',
    maxBodyBytes: input.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxQueue: input.maxQueue ?? workers * 64,
    shutdownTimeoutMs: input.shutdownTimeoutMs ?? 10_000,
  };
  checkInteger('--port', options.port, 0, 65_535);
  checkInteger('--workers', options.workers, 1, 1024);
  checkInteger('--max-body', options.maxBodyBytes, 1, Number.MAX_SAFE_INTEGER);
  checkInteger('--max-queue', options.maxQueue, 0, Number.MAX_SAFE_INTEGER);
  checkInteger('shutdownTimeoutMs', options.shutdownTimeoutMs, 0, Number.MAX_SAFE_INTEGER);
  if (options.address === '') throw new ServerOptionError(ErrorCode.BadRequest, '--address', 'must not be empty');

  for (const [key, flag] of FILE_OPTIONS) {
    const path = input[key];
    if (path === undefined) continue;
    options[key] = await checkReadableFile(flag, path);
  }
  return options;
}

function checkInteger(flag: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ServerOptionError(ErrorCode.BadRequest, flag, `must be an integer from ${min} to ${max}, got ${value}`);
  }
}

async function checkReadableFile(flag: string, path: string): Promise<string> {
  const code = FILE_FLAG_CODES[flag] ?? ErrorCode.BadRequest;
  if (path === '') throw new ServerOptionError(code, flag, 'file name must not be empty');
  const absolute = resolve(path);
  try {
    const info = await stat(absolute);
    if (!info.isFile()) throw new ServerOptionError(code, flag, `"${path}" is not a regular file`);
    await access(absolute, constants.R_OK);
  } catch (error) {
    if (error instanceof ServerOptionError) throw error;
    const reason = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ServerOptionError(code, flag, `cannot read file "${path}" (${reason})`, { cause: error });
  }
  return absolute;
}
