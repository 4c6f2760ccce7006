/**
 * Options of the multiroot signer as written in config, and their validated form. Defaults are
 * chosen for a CA on the same network: CFSSL's client has no timeouts at all (behaviour doc 5,
 * "HTTP server has no timeouts"), which turns a hung CA into hung certsmith requests.
 */
import type { OptionsSchema } from '@certsmith/signer-api';

import type { RemoteAddress } from './remote-address.js';
import { parseRemoteList } from './remote-address.js';

/** Options as written in config (`["@certsmith/signer-multiroot", { ... }]`). */
export interface MultirootSignerOptions {
  /** Remotes in failover order: an array, or CFSSL's comma-separated `host:port,host:port` string. */
  remotes: string | readonly string[];
  /** Label sent to the remote on every request; without it the request's own `label` is forwarded. */
  label?: string;
  /**
   * Auth key as cfssl `auth_keys` writes it: `env:NAME`, `file:PATH` or hex. With it, signing
   * uses `/authsign` with CFSSL's HMAC token; without it, `/sign`.
   */
  authKey?: string;
  /** Profile used when a request names none. */
  profile?: string;
  /** Budget of one call across all remotes, in ms (default 30000). */
  timeoutMs?: number;
  /** Connect timeout per remote, in ms (default 5000, at most `timeoutMs`). */
  connectTimeoutMs?: number;
  /** First down period of a failed remote, in ms (default 1000). */
  backoffInitialMs?: number;
  /** Longest down period, in ms (default 60000). */
  backoffMaxMs?: number;
  /** Keep-alive connections per remote (default 16). */
  connections?: number;
  /** PEM file of the CA(s) trusted for https remotes (replaces the system store, like `-tls-remote-ca`). */
  caFile?: string;
  /** Client certificate PEM for mutual TLS (`-mutual-tls-client-cert`); needs `keyFile`. */
  certFile?: string;
  /** Client private key PEM for mutual TLS (`-mutual-tls-client-key`); needs `certFile`. */
  keyFile?: string;
}

/** Validated options with defaults applied; paths are still unresolved. */
export interface MultirootSignerSettings {
  remotes: readonly RemoteAddress[];
  label: string | null;
  authKey: string | null;
  profile: string;
  timeoutMs: number;
  connectTimeoutMs: number;
  backoffInitialMs: number;
  backoffMaxMs: number;
  connections: number;
  caFile: string | null;
  certFile: string | null;
  keyFile: string | null;
}

/** Default budget of one call. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Default connect timeout per remote. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** Default first down period. */
export const DEFAULT_BACKOFF_INITIAL_MS = 1_000;
/** Default longest down period. */
export const DEFAULT_BACKOFF_MAX_MS = 60_000;
/** Default keep-alive connections per remote. */
export const DEFAULT_CONNECTIONS = 16;

/** Schema checked by the host before {@link validateMultirootOptions}: catches misspelt options. */
export const multirootOptionsSchema: OptionsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['remotes'],
  properties: {
    // string or array: checked by validateMultirootOptions (the schema subset has no oneOf)
    remotes: { description: 'remote base URLs in failover order' },
    label: { type: 'string' },
    authKey: { type: 'string' },
    profile: { type: 'string' },
    timeoutMs: { type: 'integer' },
    connectTimeoutMs: { type: 'integer' },
    backoffInitialMs: { type: 'integer' },
    backoffMaxMs: { type: 'integer' },
    connections: { type: 'integer' },
    caFile: { type: 'string' },
    certFile: { type: 'string' },
    keyFile: { type: 'string' },
  },
};

function positiveInteger(record: Record<string, unknown>, key: string, fallback: number): number {
  const value = record[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new Error(`${key} must be a positive integer, got ${JSON.stringify(value)}`);
  return value;
}

function optionalString(record: Record<string, unknown>, key: string): string | null {
  const value = record[key];
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.trim() === '') throw new Error(`${key} must be a non-empty string`);
  return value;
}

/**
 * Validate raw options and apply defaults. Throws a plain `Error` naming the option (the host
 * prefixes the plugin name and turns it into a 2000); the auth key's value is never echoed.
 */
export function validateMultirootOptions(options: unknown): MultirootSignerSettings {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new Error('options must be an object');
  const record = options as Record<string, unknown>;
  const rawRemotes = record.remotes;
  if (typeof rawRemotes !== 'string' && !(Array.isArray(rawRemotes) && rawRemotes.every((item) => typeof item === 'string'))) {
    throw new Error('remotes must be a string or an array of strings');
  }
  const remotes = parseRemoteList(rawRemotes as string | string[]);
  const authKeyValue = record.authKey;
  if (authKeyValue !== undefined && (typeof authKeyValue !== 'string' || authKeyValue.trim() === '')) {
    throw new Error('authKey must be a non-empty string (env:NAME, file:PATH or hex)');
  }
  const profile = record.profile;
  if (profile !== undefined && typeof profile !== 'string') throw new Error('profile must be a string');
  const timeoutMs = positiveInteger(record, 'timeoutMs', DEFAULT_TIMEOUT_MS);
  const connectTimeoutMs = Math.min(positiveInteger(record, 'connectTimeoutMs', DEFAULT_CONNECT_TIMEOUT_MS), timeoutMs);
  const backoffInitialMs = positiveInteger(record, 'backoffInitialMs', DEFAULT_BACKOFF_INITIAL_MS);
  const backoffMaxMs = positiveInteger(record, 'backoffMaxMs', Math.max(DEFAULT_BACKOFF_MAX_MS, backoffInitialMs));
  if (backoffMaxMs < backoffInitialMs) throw new Error(`backoffMaxMs (${backoffMaxMs}) must be at least backoffInitialMs (${backoffInitialMs})`);
  const certFile = optionalString(record, 'certFile');
  const keyFile = optionalString(record, 'keyFile');
  if ((certFile === null) !== (keyFile === null)) throw new Error('certFile and keyFile must be given together (mutual TLS)');
  return {
    remotes,
    label: optionalString(record, 'label'),
    authKey: (authKeyValue as string | undefined)?.trim() ?? null,
    profile: profile ?? '',
    timeoutMs,
    connectTimeoutMs,
    backoffInitialMs,
    backoffMaxMs,
    connections: positiveInteger(record, 'connections', DEFAULT_CONNECTIONS),
    caFile: optionalString(record, 'caFile'),
    certFile,
    keyFile,
  };
}
