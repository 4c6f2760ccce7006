/**
 * Reading a CFSSL configuration into a {@link SigningPolicy}: Go decoding (`cfssl-config-schema.ts`),
 * then CFSSL's `SigningProfile.populate` and `validProfile` rules (`config/config.go`, behaviour doc
 * 3.6), then the keys certsmith does not implement (`unsupported-config-keys.ts`). Every rule reports
 * into a {@link ConfigReport} at the JSON path of the key it is about, so one reading finds every
 * problem; {@link parseSigningPolicy} is the fail-fast form (the first problem, as a 5200 error).
 *
 * Where CFSSL only says `Invalid or unknown policy`, the report says which key and why.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

import type { AuthKeyOptions } from './auth-keys.js';
import { AuthKeyError, resolveAuthKey } from './auth-keys.js';
import type { AuthKey, RawCfsslConfig, RawProfile } from './cfssl-config-schema.js';
import { decodeCfsslConfig, emptyRawConfig } from './cfssl-config-schema.js';
import { ConfigProblemsError, ConfigReport, formatPath } from './config-problems.js';
import type { CertificatePolicy } from './extensions.js';
import { GoDurationError, parseGoDuration } from './go-duration.js';
import type { GoRegexp } from './go-regexp.js';
import { compileGoRegexp } from './go-regexp.js';
import type { ProfileWithoutExtensions } from './profile-extensions.js';
import { encodeProfileExtensions } from './profile-extensions.js';
import type { SigningPolicy } from './signing-policy.js';
import { resolveUsages } from './signing-policy.js';
import { checkUnsupportedConfigKeys, checkUnsupportedProfileKeys } from './unsupported-config-keys.js';

/** Options for reading a policy. */
export interface SigningPolicyOptions extends AuthKeyOptions {
  /**
   * A missing `signing` section gives CFSSL's DefaultConfig instead of the problem `No "signing"
   * field present` (a certsmith file that only names signers).
   */
  signingOptional?: boolean;
  /** Top-level keys that belong to the caller's format (no unknown-key warning). */
  ownKeys?: readonly string[];
  /**
   * The `auth_keys` and `remotes` of an enclosing file, already read: the value is then only a
   * `{ "signing": … }` holder (a certsmith signer's own section), and the auth keys' own problems
   * are left to the file's reading.
   */
  shared?: { authKeys: Readonly<Record<string, AuthKey>>; remotes: Readonly<Record<string, string>> };
}

function rawDefaultProfile(): RawProfile {
  return {
    usages: ['signing', 'key encipherment', 'server auth', 'client auth'],
    issuerUrls: null,
    ocspUrl: '',
    crlUrl: '',
    caConstraint: { isCa: false, maxPathLen: 0, maxPathLenZero: false },
    ocspNoCheck: false,
    expiryString: '8760h',
    backdateString: '',
    authKeyName: '',
    copyExtensions: false,
    prevAuthKeyName: '',
    remoteName: '',
    notBefore: null,
    notAfter: null,
    nameWhitelistString: '',
    authRemote: { remote: '', authKey: '' },
    allowedExtensions: null,
    policies: null,
    csrWhitelist: null,
    clientProvidesSerialNumbers: false,
    ctLogServers: null,
    certStore: null,
    lintErrorLevel: null,
    ignoredLints: null,
    ignoredLintSources: null,
    goExpiry: null,
    goBackdate: null,
    provider: null,
    prevProvider: null,
    remoteProvider: null,
    remoteServer: null,
    remoteCas: null,
    clientCert: null,
    goNameWhitelist: null,
    extensionWhitelist: null,
    lintRegistry: null,
  };
}

/** The file's auth keys, resolved once: the key bytes, or why the reference gives none. */
type ResolvedAuthKeys = Map<string, { key: Uint8Array } | { reason: string; field: 'type' | 'key' }>;

function resolveAuthKeys(authKeys: Record<string, AuthKey>, options: AuthKeyOptions): ResolvedAuthKeys {
  const resolved: ResolvedAuthKeys = new Map();
  for (const [name, entry] of Object.entries(authKeys)) {
    if (entry.type !== 'standard') {
      resolved.set(name, { reason: `unknown authentication type ${JSON.stringify(entry.type)} (expected "standard")`, field: 'type' });
      continue;
    }
    try {
      resolved.set(name, { key: resolveAuthKey(entry.key, options) });
    } catch (error) {
      if (!(error instanceof AuthKeyError)) throw error;
      resolved.set(name, { reason: error.message, field: 'key' });
    }
  }
  return resolved;
}

/** Everything one profile's rules need from the rest of the file. */
interface ProfileContext {
  remotes: Record<string, string>;
  authKeys: ResolvedAuthKeys;
  /** Auth keys some profile references (unreferenced broken keys are only warnings, as CFSSL never reads them). */
  referencedKeys: Set<string>;
}

/**
 * cfssl `populate` + `validProfile` for one profile, reporting at the profile's view. Returns the
 * profile when it has no problem.
 */
function readProfile(name: string, raw: RawProfile | null, isDefault: boolean, context: ProfileContext, report: ConfigReport): ProfileWithoutExtensions | null {
  if (raw === null) {
    report.problem([], "can't parse nil profile: a profile must be an object");
    return null;
  }
  const before = report.problemCount;
  const isRemote = raw.remoteName !== '' || raw.authRemote.remote !== '';
  let expiry = 0;
  let backdate = 0;
  let remoteServer = '';

  if (!isRemote) {
    if (raw.expiryString === '') {
      // A wrong-typed expiry was reported as such; "empty" would only repeat it.
      if (!report.hasProblemAt('expiry')) report.problem(['expiry'], 'empty expiry string');
    } else {
      expiry = duration(raw.expiryString, ['expiry'], report);
      if (isDefault && expiry === 0 && report.problemCount === before) report.problem(['expiry'], 'the default profile needs a non-zero expiry');
    }
    if (raw.backdateString !== '') backdate = duration(raw.backdateString, ['backdate'], report);
    if (raw.notBefore !== null && raw.notAfter !== null && raw.notAfter.getTime() < raw.notBefore.getTime()) {
      report.problem(['not_after'], 'not_after is before not_before');
    }
    (raw.policies ?? []).forEach((policy, index) => {
      (policy.qualifiers ?? []).forEach((qualifier, at) => {
        if (qualifier.type !== '' && qualifier.type !== 'id-qt-unotice' && qualifier.type !== 'id-qt-cps') {
          report.problem(['Policies', index, 'Qualifiers', at, 'Type'], `invalid policy qualifier type ${JSON.stringify(qualifier.type)} (expected "id-qt-cps" or "id-qt-unotice")`);
        }
      });
    });
    const usages = raw.usages ?? [];
    if (report.hasProblemAt('usages')) {
      // Wrong-typed: already reported.
    } else if (!isDefault && usages.length === 0) {
      report.problem(['usages'], 'no usages given (e.g. ["signing", "key encipherment", "server auth"])');
    } else {
      const { unknown } = resolveUsages(usages);
      if (!isDefault && unknown.length === usages.length) {
        report.problem(['usages'], `none of the usages is known: ${unknown.map((usage) => JSON.stringify(usage)).join(', ')}`);
      } else {
        for (const usage of unknown) report.warning(['usages'], `unknown usage ${JSON.stringify(usage)} is ignored`);
      }
    }
  } else if (raw.remoteName !== '') {
    if (raw.authRemote.remote !== '') report.problem(['auth_remote'], 'give either "remote" or "auth_remote", not both');
    remoteServer = context.remotes[raw.remoteName] ?? '';
    if (remoteServer === '') report.problem(['remote'], `failed to find remote in remotes section: no remote named ${JSON.stringify(raw.remoteName)}`);
  } else {
    remoteServer = context.remotes[raw.authRemote.remote] ?? '';
    if (remoteServer === '') report.problem(['auth_remote', 'remote'], `failed to find remote in remotes section: no remote named ${JSON.stringify(raw.authRemote.remote)}`);
    if (raw.authRemote.authKey === '') report.problem(['auth_remote', 'auth_key'], 'an auth_remote needs an auth_key to authenticate to the remote');
  }
  if (raw.authRemote.remote === '' && raw.authRemote.authKey !== '') {
    report.problem(['auth_remote', 'remote'], 'auth_remote.auth_key needs auth_remote.remote');
  }
  if (isRemote && hasLocalSettings(raw)) {
    // cfssl `warnSkippedSettings`.
    report.warning([], 'points to a remote signer: its usages, issuer_urls, ocsp_url, crl_url, ca_constraint, expiry, backdate, not_before, not_after and name_whitelist are not used here');
  }

  const authKey = authKeyOf(raw.authKeyName, ['auth_key'], 'failed to find auth_key in auth_keys section', context, report);
  const prevAuthKey = authKeyOf(raw.prevAuthKeyName, ['prev_auth_key'], 'failed to find prev_auth_key in auth_keys section', context, report);
  const authRemoteKey = authKeyOf(raw.authRemote.authKey, ['auth_remote', 'auth_key'], "failed to find auth_remote's auth_key in auth_keys section", context, report);

  let nameWhitelist: GoRegexp | null = null;
  if (raw.nameWhitelistString !== '') {
    try {
      nameWhitelist = compileGoRegexp(raw.nameWhitelistString);
    } catch (error) {
      report.problem(['name_whitelist'], `failed to compile name whitelist section: ${(error as Error).message}`);
    }
  }
  checkUnsupportedProfileKeys(raw, isRemote, report);
  if (report.problemCount > before) return null;

  const usages = raw.usages ?? [];
  const resolved = resolveUsages(usages);
  return {
    name,
    usages,
    keyUsage: resolved.keyUsage,
    extKeyUsages: resolved.extKeyUsages,
    unknownUsages: resolved.unknown,
    issuerUrls: raw.issuerUrls,
    ocspUrl: raw.ocspUrl,
    crlUrl: raw.crlUrl,
    caConstraint: { ...raw.caConstraint },
    ocspNoCheck: raw.ocspNoCheck,
    expiry,
    expiryString: raw.expiryString,
    backdate,
    backdateString: raw.backdateString,
    authKeyName: raw.authKeyName,
    prevAuthKeyName: raw.prevAuthKeyName,
    authKey,
    prevAuthKey,
    remoteName: raw.remoteName,
    remoteServer,
    authRemote: { ...raw.authRemote },
    authRemoteKey,
    notBefore: raw.notBefore,
    notAfter: raw.notAfter,
    nameWhitelistString: raw.nameWhitelistString,
    nameWhitelist,
    copyExtensions: raw.copyExtensions,
    allowedExtensions: raw.allowedExtensions ?? [],
    policies: (raw.policies ?? []).map((policy) => ({ id: policy.id, qualifiers: (policy.qualifiers ?? []) as CertificatePolicy['qualifiers'] })),
    csrWhitelist: raw.csrWhitelist,
    clientProvidesSerialNumbers: raw.clientProvidesSerialNumbers,
  };
}

/** cfssl `hasLocalConfig`: settings only a local signer uses. */
function hasLocalSettings(raw: RawProfile): boolean {
  return (
    raw.usages !== null ||
    raw.issuerUrls !== null ||
    raw.ocspUrl !== '' ||
    raw.expiryString !== '' ||
    raw.backdateString !== '' ||
    raw.caConstraint.isCa ||
    raw.notBefore !== null ||
    raw.notAfter !== null ||
    raw.nameWhitelistString !== ''
  );
}

function duration(text: string, at: string[], report: ConfigReport): number {
  try {
    return parseGoDuration(text);
  } catch (error) {
    if (!(error instanceof GoDurationError)) throw error;
    report.problem(at, error.message);
    return 0;
  }
}

function authKeyOf(name: string, at: (string | number)[], missing: string, context: ProfileContext, report: ConfigReport): Uint8Array | null {
  if (name === '') return null;
  context.referencedKeys.add(name);
  const resolved = context.authKeys.get(name);
  if (resolved === undefined) {
    report.problem(at, `${missing}: no auth key named ${JSON.stringify(name)}`);
    return null;
  }
  if ('reason' in resolved) {
    report.problem(at, `auth key ${JSON.stringify(name)} is not usable (see ${formatPath(['auth_keys', name])}): ${resolved.reason}`);
    return null;
  }
  return resolved.key;
}

/**
 * Read a parsed CFSSL configuration as cfssl `config.LoadConfig` does, reporting every problem into
 * `report` (paths relative to it). Returns the policy, or `null` when there is a problem.
 */
export function readSigningPolicy(value: unknown, options: SigningPolicyOptions, report: ConfigReport): SigningPolicy | null {
  const before = report.problemCount;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    if (value !== null) report.problem([], `failed to unmarshal configuration: the configuration must be a JSON object, got ${Array.isArray(value) ? 'array' : typeof value}`);
  }
  const config: RawCfsslConfig = value === null ? emptyRawConfig() : decodeCfsslConfig(value, report, options.ownKeys ? { ownKeys: options.ownKeys } : {});
  if (options.shared) {
    config.authKeys = { ...options.shared.authKeys };
    config.remotes = { ...options.shared.remotes };
  }
  checkUnsupportedConfigKeys(config, report);
  if (config.signing === null && !options.signingOptional) report.problem(['signing'], 'No "signing" field present');

  const authKeys = resolveAuthKeys(config.authKeys ?? {}, options);
  const context: ProfileContext = { remotes: config.remotes ?? {}, authKeys, referencedKeys: new Set() };
  const signing = config.signing ?? { default: null, profiles: null };
  const defaultDraft = signing.default === null ? readProfile('default', rawDefaultProfile(), true, context, report) : readProfile('default', signing.default, true, context, report.at('signing', 'default'));
  const drafts = new Map<string, ProfileWithoutExtensions | null>();
  for (const [name, raw] of Object.entries(signing.profiles ?? {})) {
    drafts.set(name, readProfile(name, raw, false, context, report.at('signing', 'profiles', name)));
  }
  for (const [name, resolved] of authKeys) {
    if (!('reason' in resolved) || options.shared) continue;
    const at = ['auth_keys', name, resolved.field];
    if (context.referencedKeys.has(name)) report.problem(at, resolved.reason);
    else report.warning(at, `${resolved.reason} (no profile of this signing section uses the key)`);
  }
  if (report.problemCount > before || defaultDraft === null) return null;

  const profiles = new Map<string, ReturnType<typeof encodeProfileExtensions>>();
  for (const [name, draft] of drafts) profiles.set(name, encodeProfileExtensions(draft!, defaultDraft));
  return Object.freeze({
    default: encodeProfileExtensions(defaultDraft, defaultDraft),
    profiles,
    authKeys: Object.freeze({ ...(config.authKeys ?? {}) }),
    remotes: Object.freeze({ ...(config.remotes ?? {}) }),
    raw: value,
  });
}

/**
 * Parse and validate a CFSSL configuration (JSON text or an already-parsed value), failing at the
 * first problem with a 5200 {@link ConfigProblemsError} (message `time: unknown unit "d" in
 * duration "1d"`, path `signing.profiles.www.expiry`), every problem in its `problems`.
 */
export function parseSigningPolicy(json: string | unknown, options: SigningPolicyOptions = {}): SigningPolicy {
  const report = new ConfigReport();
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (cause) {
      report.problem([], `failed to unmarshal configuration: ${(cause as Error).message}`);
      throw new ConfigProblemsError(report.problems, { cause });
    }
  }
  const policy = readSigningPolicy(value, options, report);
  if (policy === null) throw new ConfigProblemsError(report.problems);
  return policy;
}

/**
 * Read and parse a CFSSL configuration file, failing at the first problem (5200). Relative `file:`
 * auth-key paths resolve against the file's directory unless `options.baseDir` says otherwise.
 */
export async function loadSigningPolicyFile(path: string, options: SigningPolicyOptions = {}): Promise<SigningPolicy> {
  const report = new ConfigReport();
  const policy = await readSigningPolicyFile(path, options, report);
  if (policy === null) throw new ConfigProblemsError(report.problems);
  return policy;
}

/** {@link loadSigningPolicyFile} in collecting mode: problems go to `report`. */
export async function readSigningPolicyFile(path: string, options: SigningPolicyOptions, report: ConfigReport): Promise<SigningPolicy | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    report.problem([], `could not read configuration file ${path} (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`);
    return null;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    report.problem([], `failed to unmarshal configuration: ${(cause as Error).message}`);
    return null;
  }
  return readSigningPolicy(value, { baseDir: dirname(resolve(path)), ...options }, report);
}

/**
 * cfssl `DefaultConfig()` (behaviour doc 3.6): usages signing, key encipherment, server auth,
 * client auth; expiry 8760h; no CA, no URLs. Used when the server has no `-config`.
 */
export function defaultSigningPolicy(): SigningPolicy {
  const policy = readSigningPolicy({ signing: {} }, {}, new ConfigReport());
  if (policy === null) throw new Error('the default signing policy does not load');
  return Object.freeze({ ...policy, raw: null });
}
