/**
 * Which signer `gencert` and `sign` use, as CFSSL's `sign.SignerFromConfig` picks it, plus
 * certsmith's `signers` section:
 *
 * 1. `-remote URL[,URL…]`: the whole request goes to a running CFSSL/certsmith (`/sign`, or
 *    `/authsign` when the profile in `-config` has an `auth_key`), through the multi-root remote
 *    signer (failover, never signing twice).
 * 2. `-ca` + `-ca-key`: the local signer, under the `-config` file's `signing` policy (or CFSSL's
 *    default policy). A profile with `remote` in the config goes to that remote, as CFSSL's universal
 *    signer does.
 * 3. A `-config` with a `signers` section: the signer of `-label` (or `default`), with that label's
 *    policy — exactly as `certsmith serve -config` would sign.
 * 4. A profile with `remote` in `-config` (a CFSSL client config).
 * Otherwise it is a usage error (CFSSL: `need a CA certificate (provide one with -ca)`).
 *
 * The chosen signer is served through the issuer's use case (`createIssuer`), the one the server
 * runs: a directory of one entry, labelled `-label` (or `default`), that forwards labels when the
 * signer is a remote CA.
 */
import { resolve } from 'node:path';
import { Writable } from 'node:stream';
import { loadDbConfigFile, openStore } from '@certsmith/cert-store';
import { DEFAULT_LABEL, createIssuer, createSignerDirectory, defaultSigningPolicy, describeProblem } from '@certsmith/issuer';
import type { Issuer, RecordIssued, SigningPolicy, SigningProfile } from '@certsmith/issuer';
import type { Signer, SignerLogger } from '@certsmith/signer-api';
import { createSignerContext } from '@certsmith/signer-api';
import { loadLocalSigner } from '@certsmith/signer-local';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';
import { pino } from 'pino';
import { loadServerConfig } from '../config-file.js';
import { createIssuedRecorder } from '../issued-recording.js';
import { checkReadableFile } from '../readable-file.js';
import { loadSigner } from '../signer-loader.js';
import type { CommandIo, Reporter } from './common.js';
import { UsageError } from './common.js';

/** The flags that choose the signer. */
export interface SigningFlags {
  ca?: string;
  caKey?: string;
  config?: string;
  profile?: string;
  label?: string;
  remote?: string;
}

/** A signer chosen by the flags, with the policy it signs under. */
interface ChosenSigner {
  signer: Signer;
  policy: SigningPolicy;
  /** True when the request is sent whole to a remote CA (its policy applies, not `policy`). */
  remote: boolean;
  close(): Promise<void>;
}

/** The issuing use case over the signer the flags chose, ready for one request. */
export interface SigningSetup {
  /** The issuer: call it with `label: flags.label` and `authenticated: true` (the caller holds the config). */
  issuer: Issuer;
  /** The chosen signer itself, for what is not issuing (revocation signing: CRLs, OCSP responses). */
  signer: Signer;
  /** True when the request is sent whole to a remote CA (its policy applies). */
  remote: boolean;
  close(): Promise<void>;
}

/** The profile `name` selects, without failing on unknown names (for remote auth keys). */
function profileFor(policy: SigningPolicy, name: string | undefined): SigningProfile {
  return (name ? policy.profiles.get(name) : undefined) ?? policy.default;
}

async function remoteSetup(remotes: string, profile: SigningProfile, policy: SigningPolicy, flag: string): Promise<ChosenSigner> {
  // Loaded on use: `certsmith serve` and the local commands never need the HTTP client.
  const { createMultirootSigner, validateMultirootOptions } = await import('@certsmith/signer-multiroot');
  let settings;
  try {
    settings = validateMultirootOptions({ remotes });
  } catch (error) {
    throw new UsageError(`${flag}: ${error instanceof Error ? error.message : String(error)}`);
  }
  // CFSSL's remote signer authenticates with the profile's auth_remote key, else its auth_key.
  const authKey = profile.authRemoteKey ?? profile.authKey ?? null;
  const signer = createMultirootSigner(settings, { authKey });
  return { signer, policy, remote: true, close: () => signer.close() };
}

/** Plugin warnings as `certsmith <cmd>: warning: …` lines. */
function warningLogger(reporter: Reporter): SignerLogger {
  const ignore = (): void => {};
  return { debug: ignore, info: ignore, warn: (message) => reporter.warn(message), error: (message) => reporter.warn(message) };
}

/** A pino logger whose warnings become reporter warnings (for `loadSigner`). */
function pinoWarnings(reporter: Reporter) {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue;
        try {
          const record = JSON.parse(line) as { msg?: unknown };
          reporter.warn(String(record.msg ?? line));
        } catch {
          reporter.warn(line);
        }
      }
      callback();
    },
  });
  return pino({ level: 'warn', base: null }, destination);
}

/**
 * Open the signer the flags name (see the module comment) and the issuer over it; `recordIssued`
 * is the issuer's record port (a certificate store). Errors: usage errors (exit 1) for incomplete
 * flags; the config file's errors (5200), the CA files' (1001, 2001, 2300…), the signer plugin's
 * (2000…) otherwise.
 */
export async function openSigning(flags: SigningFlags, io: CommandIo, reporter: Reporter, recordIssued?: RecordIssued): Promise<SigningSetup> {
  const chosen = await chooseSigner(flags, io, reporter);
  const entry = { label: flags.label || DEFAULT_LABEL, signer: chosen.signer, policy: chosen.policy, forwardsLabels: chosen.remote };
  const issuer = createIssuer({ signers: createSignerDirectory([entry]), ...(recordIssued === undefined ? {} : { recordIssued }) });
  return { issuer, signer: chosen.signer, remote: chosen.remote, close: chosen.close };
}

async function chooseSigner(flags: SigningFlags, io: CommandIo, reporter: Reporter): Promise<ChosenSigner> {
  const config = flags.config === undefined ? null : await loadServerConfig(resolve(io.cwd(), flags.config), { env: io.env, cwd: io.cwd() });
  // Keys accepted that change nothing (CFSSL keys certsmith does not implement…), as serve logs them.
  for (const warning of config?.warnings ?? []) reporter.warn(`config: ${describeProblem(warning)}`);
  const filePolicy = config?.policy ?? defaultSigningPolicy();

  if (flags.remote !== undefined) return remoteSetup(flags.remote, profileFor(filePolicy, flags.profile), filePolicy, '-remote');

  if (flags.ca !== undefined || flags.caKey !== undefined) {
    if (flags.ca === undefined) throw new UsageError('need a CA certificate (provide one with -ca)');
    if (flags.caKey === undefined) throw new UsageError('need a CA key (provide one with -ca-key)');
    const profile = profileFor(filePolicy, flags.profile);
    if (profile.remoteServer !== '') return remoteSetup(profile.remoteServer, profile, filePolicy, `profile ${JSON.stringify(profile.name)} remote`);
    const context = createSignerContext({ configDir: io.cwd(), env: io.env, logger: warningLogger(reporter) });
    // The files are checked as `serve` checks them, so the error reads the same:
    // `--ca: cannot read file "ca.pem" (ENOENT)` (1001; 2001 for --ca-key).
    await checkReadableFile('--ca', flags.ca, io.cwd());
    await checkReadableFile('--ca-key', flags.caKey, io.cwd());
    const signer = await loadLocalSigner({ certFile: flags.ca, keyFile: flags.caKey }, context);
    return { signer, policy: filePolicy, remote: false, close: () => signer.close() };
  }

  if (config !== null && config.signers.length > 0) {
    const label = flags.label || 'default';
    const entry = config.signers.find((candidate) => candidate.label === label);
    if (entry === undefined) {
      throw new CertsmithError(ErrorCode.PolicyInvalid, `unknown label ${JSON.stringify(label)}: no signer is configured for it in ${config.file}`);
    }
    const loaded = await loadSigner({
      label,
      plugin: entry.plugin,
      options: entry.options,
      configDir: config.dir,
      logger: pinoWarnings(reporter),
      where: `signers.${label}`,
      configFile: config.file,
      env: io.env,
    });
    return { signer: loaded.signer, policy: entry.policy ?? filePolicy, remote: typeof loaded.signer.sign !== 'function', close: () => loaded.signer.close() };
  }

  const profile = profileFor(filePolicy, flags.profile);
  if (profile.remoteServer !== '') return remoteSetup(profile.remoteServer, profile, filePolicy, `profile ${JSON.stringify(profile.name)} remote`);
  throw new UsageError('need a CA certificate (provide one with -ca and -ca-key), a remote CA (-remote) or a signer in -config');
}

/**
 * {@link openSigning} for `gencert` / `sign`, recording into CFSSL's `-db-config FILE` when given,
 * as `cfssl gencert|sign -db-config` do: the certificate's row, with the label, is committed before
 * the issuer returns it (so before it is printed). The store is opened (and migrated, as
 * `certsmith revoke` does) before the signer, so a database that cannot be reached fails the
 * command (503, exit 2) before anything is signed — CFSSL signs first and then fails on the insert;
 * either way nothing is printed. No OCSP response is signed here (as CFSSL): a running `serve` on
 * the same store signs it at its next refresh. The setup's `close` closes the store too.
 */
export async function openRecordedSigning(flags: SigningFlags & { dbConfig?: string }, io: CommandIo, reporter: Reporter): Promise<SigningSetup> {
  if (flags.dbConfig === undefined) return openSigning(flags, io, reporter);
  const config = await loadDbConfigFile(flags.dbConfig === '' ? '' : resolve(io.cwd(), flags.dbConfig));
  const store = await openStore(config, { migrations: 'apply', sqlite: { thread: false } });
  let setup: SigningSetup;
  try {
    setup = await openSigning(flags, io, reporter, createIssuedRecorder({ store }));
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    ...setup,
    async close() {
      try {
        await setup.close();
      } finally {
        await store.close();
      }
    },
  };
}

/** Close a setup without letting a close failure hide the operation's own error. */
export async function closeQuietly(setup: SigningSetup): Promise<void> {
  try {
    await setup.close();
  } catch {
    // Closing a signer only releases resources; the result (or the error) is already known.
  }
}
