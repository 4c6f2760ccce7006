/**
 * How `certsmith serve` revokes: its flags (CFSSL's `--responder`, `--responder-key`, `--interval`;
 * certsmith's `--ocsp-path`, `--revoke-auth-key`, `--revoke-client-cn`) over the config file's
 * `revocation` section ({@link RevocationConfigSection}) over the defaults: the CA signs its own OCSP
 * responses, valid 96 h (CFSSL's `-interval`); CRLs valid 168 h (CFSSL's `/crl` default); the
 * responder not mounted; revoke open, as CFSSL's; other writers' revocations learnt as the store's
 * change feed delivers them (PostgreSQL: at once, with a 5 s poll; SQLite: a 1 s poll).
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option } from 'commander';
import type { Command } from 'commander';
import { DEFAULT_CRL_VALIDITY_MS, DEFAULT_OCSP_INTERVAL_MS } from '@certsmith/revocation';
import { ErrorCode } from '@certsmith/x509-core';
import { ServerOptionError } from '../errors.js';
import type { ResponderDefinition, RevocationConfigSection } from './revocation-config.js';
import { MAX_VALIDITY_MS, checkClientCnPattern, checkOcspPath } from './revocation-config.js';
import { durationFlag } from './flag-parsers.js';

/** The revocation flags of `serve` (unset ones fall back to the config file, then the defaults). */
export interface RevocationFlags {
  /** `--responder FILE`: the OCSP responder certificate of the `default` CA (CFSSL). */
  responderFile?: string;
  /** `--responder-key FILE`: its private key (CFSSL). */
  responderKeyFile?: string;
  /** `--interval DURATION`: validity of signed OCSP responses (CFSSL), in ms. */
  ocspIntervalMs?: number;
  /** `--ocsp-path PATH`: mount the OCSP responder in `serve` at this path. */
  ocspPath?: string;
  /** `--revoke-auth-key NAME`: `revoke` takes only requests authenticated with this `auth_keys` entry. */
  revokeAuthKey?: string;
  /** `--revoke-client-cn REGEX`: `revoke` needs a verified client certificate whose CN matches. */
  revokeClientCn?: string;
}


/** What the server does about revocation. */
export interface RevocationSettings {
  /** Validity of the OCSP responses the server signs (CFSSL `-interval`). */
  ocspIntervalMs: number;
  /** Where `serve` mounts the OCSP responder, `null` when it does not. */
  ocspPath: string | null;
  nonces: 'ignore' | 'sign';
  /** Delegated responders (or `ca`) by signer label. */
  responders: ReadonlyMap<string, ResponderDefinition>;
  /** nextUpdate − thisUpdate of the CRLs. */
  crlValidityMs: number;
  /** `auth_keys` entry revoke requests must be authenticated with, `null` for none. */
  revokeAuthKey: string | null;
  /** Client certificate CN pattern revoke requests need, `null` for none. */
  revokeClientCn: string | null;
  /**
   * How often to look for revocations made by other writers of the store; `undefined`: the store's
   * default (PostgreSQL: notified at once, polled every 5 s; SQLite: polled every second).
   */
  changePollIntervalMs: number | undefined;
}

async function readableFile(flag: string, path: string, code: number): Promise<string> {
  if (path === '') throw new ServerOptionError(code, flag, 'file name must not be empty');
  const absolute = resolve(path);
  try {
    if (!(await stat(absolute)).isFile()) throw new ServerOptionError(code, flag, `"${path}" is not a regular file`);
    await access(absolute, constants.R_OK);
  } catch (error) {
    if (error instanceof ServerOptionError) throw error;
    throw new ServerOptionError(code, flag, `cannot read file "${path}" (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, { cause: error });
  }
  return absolute;
}

/**
 * Check the revocation flags: both responder files or neither, each readable (1001 / 2001, as
 * `--ca` / `--ca-key`), values in range. A {@link ServerOptionError} (exit 1) names the flag.
 */
export async function resolveRevocationFlags(flags: RevocationFlags = {}): Promise<RevocationFlags> {
  const resolved: RevocationFlags = { ...flags };
  if ((flags.responderFile === undefined) !== (flags.responderKeyFile === undefined)) {
    const [flag, other] = flags.responderFile === undefined ? ['--responder-key', '--responder'] : ['--responder', '--responder-key'];
    throw new ServerOptionError(ErrorCode.BadRequest, flag, `needs ${other} too (the OCSP responder needs its certificate and its key)`);
  }
  if (flags.responderFile !== undefined) resolved.responderFile = await readableFile('--responder', flags.responderFile, ErrorCode.CertificateReadFailed);
  if (flags.responderKeyFile !== undefined) resolved.responderKeyFile = await readableFile('--responder-key', flags.responderKeyFile, ErrorCode.PrivateKeyReadFailed);
  if (flags.ocspIntervalMs !== undefined && (!Number.isSafeInteger(flags.ocspIntervalMs) || flags.ocspIntervalMs < 60_000 || flags.ocspIntervalMs > MAX_VALIDITY_MS)) {
    throw new ServerOptionError(ErrorCode.BadRequest, '--interval', `must be from 1m to 8784h, got ${flags.ocspIntervalMs} ms`);
  }
  if (flags.ocspPath !== undefined) {
    const problem = checkOcspPath(flags.ocspPath);
    if (problem !== null) throw new ServerOptionError(ErrorCode.BadRequest, '--ocsp-path', problem);
  }
  if (flags.revokeAuthKey === '') throw new ServerOptionError(ErrorCode.BadRequest, '--revoke-auth-key', 'must name an entry of the config file\'s auth_keys');
  if (flags.revokeClientCn !== undefined) {
    const problem = checkClientCnPattern(flags.revokeClientCn);
    if (problem !== null) throw new ServerOptionError(ErrorCode.BadRequest, '--revoke-client-cn', problem);
  }
  return resolved;
}

/** Decide: flags over the config file's `revocation` section over the defaults. */
export function revocationSettings(flags: RevocationFlags, section: RevocationConfigSection): RevocationSettings {
  const responders = new Map(section.responders);
  if (flags.responderFile !== undefined && flags.responderKeyFile !== undefined) {
    // CFSSL's flags sign for `-ca`, certsmith's `default` label; they replace the file's entry.
    responders.set('default', { kind: 'files', certFile: flags.responderFile, keyFile: flags.responderKeyFile, where: '--responder/--responder-key' });
  }
  return {
    ocspIntervalMs: flags.ocspIntervalMs ?? section.ocspIntervalMs ?? DEFAULT_OCSP_INTERVAL_MS,
    ocspPath: flags.ocspPath ?? section.ocspPath ?? null,
    nonces: section.nonces ?? 'ignore',
    responders,
    crlValidityMs: section.crlValidityMs ?? DEFAULT_CRL_VALIDITY_MS,
    revokeAuthKey: flags.revokeAuthKey ?? section.revokeAuthKey ?? null,
    revokeClientCn: flags.revokeClientCn ?? section.revokeClientCn ?? null,
    changePollIntervalMs: section.changePollIntervalMs,
  };
}

/** Commander's view of the revocation flags of `serve`. */
interface RevocationServeFlags {
  responder?: string;
  responderKey?: string;
  interval?: number;
  ocspPath?: string;
  revokeAuthKey?: string;
  revokeClientCn?: string;
}

/** Add the revocation flags to the `serve` command. */
export function addRevocationServeOptions(command: Command): Command {
  return command
    .option('--responder <file>', 'OCSP responder certificate (PEM) of the default CA, issued by it with id-kp-OCSPSigning (default: the CA signs its own OCSP responses)')
    .option('--responder-key <file>', 'private key of --responder (PEM)')
    .addOption(new Option('--interval <duration>', 'validity of the OCSP responses the server signs, a Go duration (default: 96h)').argParser(durationFlag(60_000, MAX_VALIDITY_MS)))
    .option('--ocsp-path <path>', 'serve the OCSP responder (RFC 6960, GET and POST) at this path, e.g. /ocsp (default: not served)')
    .option('--revoke-auth-key <name>', 'revoke (and ocspsign) take only requests authenticated with this auth_keys entry of --config, as authsign')
    .option('--revoke-client-cn <regex>', 'revoke (and ocspsign) need a client certificate (verified by --mutual-tls-ca) whose CN matches');
}

/** The {@link RevocationFlags} of parsed `serve` flags (`undefined` when none was given). */
export function revocationFlagsOf(parsed: object): RevocationFlags | undefined {
  const flags = parsed as RevocationServeFlags;
  const result: RevocationFlags = {};
  if (flags.responder !== undefined) result.responderFile = flags.responder;
  if (flags.responderKey !== undefined) result.responderKeyFile = flags.responderKey;
  if (flags.interval !== undefined) result.ocspIntervalMs = flags.interval;
  if (flags.ocspPath !== undefined) result.ocspPath = flags.ocspPath;
  if (flags.revokeAuthKey !== undefined) result.revokeAuthKey = flags.revokeAuthKey;
  if (flags.revokeClientCn !== undefined) result.revokeClientCn = flags.revokeClientCn;
  return Object.keys(result).length === 0 ? undefined : result;
}
