/**
 * The `--config` file: the JSON a CFSSL user already has (`signing`, `auth_keys`, `remotes`,
 * `ocsp`; behaviour doc 3.6) plus certsmith's `signers` section, which names signer instances by
 * label the way multirootca names its roots (behaviour doc 4.6):
 *
 * ```json
 * { "signing": { "default": { "expiry": "8760h", "usages": ["signing", "server auth"] } },
 *   "signers": {
 *     "default": { "plugin": "@certsmith/signer-local", "options": { "certFile": "ca.pem", "keyFile": "ca-key.pem" } },
 *     "hsm": ["@certsmith/signer-pkcs11", { "module": "/usr/lib/softhsm/libsofthsm2.so", "tokenLabel": "ca", "keyLabel": "ca", "pin": "env:HSM_PIN" }]
 *   } }
 * ```
 *
 * Each entry is `{ "plugin", "options", "signing"?, "config"? }` or the style guide's tuple
 * `[plugin, options]`. `signing` (a CFSSL signing section, using the file's `auth_keys` and
 * `remotes`) or `config` (a separate CFSSL config file, as multirootca's per-root `config =`) gives
 * that label its own profiles and auth keys; otherwise the label uses the file's `signing` section.
 * Relative paths (plugin paths, `config`, `file:` secrets) resolve against the config file's folder.
 *
 * This module holds the file's rules once. {@link readServerConfig} reports every problem into a
 * {@link ConfigReport} at its JSON path (what `certsmith config check` prints);
 * {@link loadServerConfig} stops at the first ({@link ConfigFileError}, exit 2, naming the path).
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseCidr } from '@certsmith/chain-builder';
import { ConfigReport, defaultSigningPolicy, describeProblem, formatPath, readSigningPolicy, readSigningPolicyFile } from '@certsmith/issuer';
import type { AuthKey, ConfigProblem, ConfigWarning, SigningPolicy, SigningPolicyOptions, SigningProfile } from '@certsmith/issuer';
import { ConfigFileError } from './errors.js';
import { readStoreConfigSection } from './store-settings.js';
import type { StoreConfigSection } from './store-settings.js';
import { emptyRevocationSection, readRevocationSection } from './revocation/revocation-config.js';
import type { RevocationConfigSection } from './revocation/revocation-config.js';

/** One `signers` entry, checked. */
export interface SignerConfig {
  /** The key under `signers` (`default` serves requests without a label). */
  label: string;
  /** Package name or path (relative paths resolve against the config folder). */
  plugin: string;
  /** Passed to the plugin as they are (secrets stay `env:`/`file:` references for the plugin). */
  options: unknown;
  /** The label's own policy (`signing` or `config` in the entry), or `null` to use the file's. */
  policy: SigningPolicy | null;
  /** The CFSSL file the label's policy comes from (`config`), `null` otherwise. */
  policyFile: string | null;
}

/** A loaded config file (or the defaults when there is none). */
export interface ServerConfig {
  /** Absolute path of the file, `null` without `--config`. */
  file: string | null;
  /** Folder relative paths resolve against: the file's folder, or the working directory. */
  dir: string;
  /** The CFSSL signing policy of the file, or CFSSL's DefaultConfig. */
  policy: SigningPolicy;
  /** `signers` entries in file order. */
  signers: SignerConfig[];
  /** Top-level `"allowPrivateNetworks"`: request-driven fetches may reach non-public addresses. */
  allowPrivateNetworks: boolean;
  /** Top-level `"allowCidrs"`: non-public ranges request-driven fetches may reach anyway. */
  allowCidrs: string[];
  /** Keys accepted that do nothing the author may expect; `certsmith serve` logs them at start-up. */
  warnings: ConfigWarning[];
  /** Top-level `"db_config"` and `"store"`: the certificate store (see `store-settings.ts`). */
  store: StoreConfigSection;
  /** Top-level `"revocation"`: OCSP responders, CRL validity, revoke protection (`revocation/revocation-config.ts`). */
  revocation: RevocationConfigSection;
}

/** What the file is read for: `serve` adds the rules of a running server (see {@link checkServeRules}). */
export type ConfigPurpose = 'serve' | 'cli';

/** Options of {@link loadServerConfig} and {@link readServerConfig}. */
export interface LoadServerConfigOptions {
  /** Environment for `env:` auth keys (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory used without a file (default `process.cwd()`). */
  cwd?: string;
  /** Default `cli`: the rules every reader of the file shares. */
  purpose?: ConfigPurpose;
}

/** Labels: a word, dots and dashes (multirootca allows `\w+`); no spaces or slashes. */
const LABEL = /^[\w.-]{1,64}$/;
const ENTRY_KEYS = new Set(['plugin', 'options', 'signing', 'config']);
/** Top-level keys certsmith adds to CFSSL's format. */
const OWN_KEYS = ['signers', 'allowPrivateNetworks', 'allowCidrs', 'db_config', 'store', 'revocation'];

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member matched as Go's decoder matches CFSSL's keys: exact name first, then case-insensitively. */
function goMember(record: Record<string, unknown>, name: string): unknown {
  if (name in record) return record[name];
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : record[key];
}

/** The defaults without a file. */
function noFile(options: LoadServerConfigOptions): ServerConfig {
  return { file: null, dir: resolve(options.cwd ?? process.cwd()), policy: defaultSigningPolicy(), signers: [], allowPrivateNetworks: false, allowCidrs: [], warnings: [], store: {}, revocation: emptyRevocationSection() };
}

/**
 * Load `file` (or the defaults when `file` is undefined), stopping at the first problem: throws
 * {@link ConfigFileError} (exit code 2) whose message is `config file <file>: <json path>: <what>`
 * and whose code is the problem's (5200 for the policy). Warnings are returned in `warnings`.
 */
export async function loadServerConfig(file: string | undefined, options: LoadServerConfigOptions = {}): Promise<ServerConfig> {
  if (file === undefined) return noFile(options);
  const report = new ConfigReport();
  const config = await readServerConfig(file, options, report);
  const first = report.problems[0];
  if (config === null || first !== undefined) throw configFileError(resolve(options.cwd ?? process.cwd(), file), first);
  return config;
}

/** The {@link ConfigFileError} for `problem` of `file`. */
export function configFileError(file: string | null, problem: ConfigProblem | undefined): ConfigFileError {
  const found = problem ?? { path: '', message: 'invalid configuration', code: 5200 };
  return new ConfigFileError(file, describeProblem(found), { code: found.code, path: found.path });
}

/**
 * Read `file` and report every problem and warning into `report` (paths from the document root).
 * Returns what could be read — every signer entry that is well-formed, the policy or CFSSL's
 * default in its place — so a check can go on to load the signers; `null` only when the file is
 * not a readable JSON object. The file is usable only when `report` holds no problem.
 */
export async function readServerConfig(file: string, options: LoadServerConfigOptions, report: ConfigReport): Promise<ServerConfig | null> {
  const path = resolve(options.cwd ?? process.cwd(), file);
  const dir = dirname(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    report.problem([], `cannot read the file (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`);
    return null;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    report.problem([], `failed to unmarshal configuration: ${(cause as Error).message}`);
    return null;
  }
  if (!isRecord(raw)) {
    report.problem([], `the configuration must be a JSON object, got ${typeName(raw)}`);
    return null;
  }

  const policyOptions: SigningPolicyOptions = { baseDir: dir, ...(options.env ? { env: options.env } : {}) };
  const hasSigners = raw['signers'] !== undefined && raw['signers'] !== null;
  // CFSSL requires `signing`; a certsmith file that only names signers may leave it out and gets
  // CFSSL's DefaultConfig, as `cfssl serve` without `-config`.
  const policy = readSigningPolicy(raw, { ...policyOptions, signingOptional: hasSigners, ownKeys: OWN_KEYS }, report);
  const network = readNetworkAllowance(raw, report);
  const store = await readStoreConfigSection(dir, raw, options.env ?? process.env, report);
  const shared = sharedSections(raw);

  const signers: SignerConfig[] = [];
  if (hasSigners) {
    const section = raw['signers'];
    if (!isRecord(section)) {
      report.problem(['signers'], `must be an object of label → signer, got ${typeName(section)}`);
    } else {
      for (const [label, value] of Object.entries(section)) {
        const entry = await readSignerEntry(dir, label, value, policyOptions, shared, report.at('signers', label));
        if (entry !== null) signers.push(entry);
      }
    }
  }
  const config: ServerConfig = { file: path, dir, policy: policy ?? defaultSigningPolicy(), signers, ...network, warnings: report.warnings, store, revocation: readRevocationSection(raw['revocation'], dir, report.at('revocation')) };
  if (options.purpose === 'serve') checkServeRules(config, report);
  return config;
}

/** The file's `auth_keys` and `remotes` as Go decodes them (wrong-typed parts were reported by the policy). */
function sharedSections(raw: Record<string, unknown>): { authKeys: Record<string, AuthKey>; remotes: Record<string, string> } {
  const authKeys: Record<string, AuthKey> = {};
  const remotes: Record<string, string> = {};
  const keys = goMember(raw, 'auth_keys');
  if (isRecord(keys)) {
    for (const [name, entry] of Object.entries(keys)) {
      if (!isRecord(entry)) continue;
      const type = goMember(entry, 'type');
      const key = goMember(entry, 'key');
      authKeys[name] = { type: typeof type === 'string' ? type : '', key: typeof key === 'string' ? key : '' };
    }
  }
  const remoteSection = goMember(raw, 'remotes');
  if (isRecord(remoteSection)) for (const [name, address] of Object.entries(remoteSection)) if (typeof address === 'string') remotes[name] = address;
  return { authKeys, remotes };
}

/**
 * `"allowPrivateNetworks"` and `"allowCidrs"` (certsmith extensions). Every CIDR is checked here, at
 * start-up: a bad one reaching a worker would fail every bundle request instead.
 */
function readNetworkAllowance(raw: Record<string, unknown>, report: ConfigReport): { allowPrivateNetworks: boolean; allowCidrs: string[] } {
  let allow = raw['allowPrivateNetworks'] ?? false;
  if (typeof allow !== 'boolean') {
    report.problem(['allowPrivateNetworks'], `must be a boolean, got ${typeName(allow)}`);
    allow = false;
  }
  const value = raw['allowCidrs'] ?? [];
  const cidrs: string[] = [];
  if (!Array.isArray(value)) {
    report.problem(['allowCidrs'], `must be an array of CIDR strings, got ${typeName(value)}`);
  } else {
    value.forEach((cidr: unknown, index) => {
      if (typeof cidr !== 'string') {
        report.problem(['allowCidrs', index], `must be a string, got ${typeName(cidr)}`);
        return;
      }
      try {
        parseCidr(cidr);
        cidrs.push(cidr);
      } catch (cause) {
        report.problem(['allowCidrs', index], (cause as Error).message);
      }
    });
  }
  return { allowPrivateNetworks: allow as boolean, allowCidrs: cidrs };
}

/** One `signers` entry; `report` is the entry's view (`signers.<label>`). */
async function readSignerEntry(
  dir: string,
  label: string,
  value: unknown,
  policyOptions: SigningPolicyOptions,
  shared: { authKeys: Record<string, AuthKey>; remotes: Record<string, string> },
  report: ConfigReport,
): Promise<SignerConfig | null> {
  if (!LABEL.test(label)) {
    report.problem([], `signer label ${JSON.stringify(label)} must be 1-64 letters, digits, "_", "." or "-"`);
    return null;
  }
  const before = report.problemCount;
  let plugin: unknown;
  let options: unknown;
  let entry: Record<string, unknown> = {};
  if (Array.isArray(value)) {
    // The style guide's `[specifier, options]` form.
    if (value.length < 1 || value.length > 2) {
      report.problem([], `must be [plugin, options] or {"plugin", "options"}, got an array of ${value.length}`);
      return null;
    }
    [plugin, options] = value;
  } else if (isRecord(value)) {
    entry = value;
    // A misspelt `option` would otherwise be silently ignored.
    for (const key of Object.keys(value)) if (!ENTRY_KEYS.has(key)) report.problem([key], 'unknown key (allowed: plugin, options, signing, config)');
    plugin = value['plugin'];
    options = value['options'];
  } else {
    report.problem([], `must be {"plugin", "options"} or [plugin, options], got ${typeName(value)}`);
    return null;
  }
  const pluginAt = Array.isArray(value) ? [0] : ['plugin'];
  const optionsAt = Array.isArray(value) ? [1] : ['options'];
  if (typeof plugin !== 'string' || plugin.trim() === '') {
    report.problem(pluginAt, `must be a non-empty string (a package name or a path), got ${typeName(plugin)}`);
  }
  if (options !== undefined && options !== null && !isRecord(options)) {
    report.problem(optionsAt, `must be an object, got ${typeName(options)}`);
  }

  let policy: SigningPolicy | null = null;
  let policyFile: string | null = null;
  if (entry['signing'] !== undefined && entry['config'] !== undefined) {
    report.problem([], 'has both "signing" and "config"; give one');
  } else if (entry['signing'] !== undefined) {
    policy = readSigningPolicy({ signing: entry['signing'] }, { ...policyOptions, shared }, report);
  } else if (entry['config'] !== undefined) {
    const configFile = entry['config'];
    if (typeof configFile !== 'string' || configFile === '') {
      report.problem(['config'], `must be the path of a CFSSL config file, got ${typeName(configFile)}`);
    } else {
      const configPath = isAbsolute(configFile) ? configFile : resolve(dir, configFile);
      policyFile = configPath;
      // Its problems are at paths of that other file: report them at `config`, naming the file.
      const own = new ConfigReport();
      policy = await readSigningPolicyFile(configPath, policyOptions.env ? { env: policyOptions.env } : {}, own);
      const inFile = (finding: ConfigWarning): string => (finding.path === '' ? finding.message : `${configPath}: ${describeProblem(finding)}`);
      for (const problem of own.problems) report.problem(['config'], inFile(problem), problem.code);
      for (const warning of own.warnings) report.warning(['config'], inFile(warning));
    }
  }
  if (report.problemCount > before) return null;
  return { label, plugin: plugin as string, options: options ?? {}, policy, policyFile };
}

/**
 * Rules of `certsmith serve` on top of the file's own: a profile with `remote` or `auth_remote`
 * (CFSSL's universal signer sends its requests to another CFSSL, behaviour doc 4.3) is refused,
 * because the server reaches remote CAs only through signers — whatever the signer, the profile's
 * remote would be silently ignored. (`certsmith gencert`/`sign` honour remote profiles.)
 */
export function checkServeRules(config: ServerConfig, report: ConfigReport): void {
  const hint =
    'certsmith serve reaches remote CAs through a signer, not through a profile: configure a @certsmith/signer-multiroot signer with the remote\'s address, or remove "remote"/"auth_remote" from the profile';
  const check = (policy: SigningPolicy, at: ConfigReport, inOtherFile: string | null): void => {
    const profiles: Array<[SigningProfile, (string | number)[]]> = [
      [policy.default, ['signing', 'default']],
      ...[...policy.profiles].map(([name, profile]): [SigningProfile, (string | number)[]] => [profile, ['signing', 'profiles', name]]),
    ];
    for (const [profile, path] of profiles) {
      const remote = profile.remoteName || profile.authRemote.remote;
      if (remote === '') continue;
      const key = profile.remoteName ? 'remote' : 'auth_remote';
      const message = `profile ${JSON.stringify(profile.name)} sends requests to remote ${JSON.stringify(remote)}; ${hint}`;
      if (inOtherFile === null) at.problem([...path, key], message);
      else at.problem(['config'], `${inOtherFile}: ${formatPath([...path, key])}: ${message}`);
    }
  };
  if (config.file !== null) check(config.policy, report, null);
  for (const signer of config.signers) {
    if (signer.policy !== null) check(signer.policy, report.at('signers', signer.label), signer.policyFile);
  }
}
