/**
 * The `--config` file: the JSON a CFSSL user already has (`signing`, `auth_keys`, `remotes`, any
 * other key tolerated, behaviour doc 3.6) plus certsmith's `signers` section, which names signer
 * instances by label the way multirootca names its roots (behaviour doc 4.6):
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
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseCidr } from '@certsmith/chain-builder';
import { defaultSigningPolicy, loadSigningPolicyFile, parseSigningPolicy } from '@certsmith/issuer';
import type { SigningPolicy } from '@certsmith/issuer';
import { isCodedError } from '@certsmith/x509-core';
import { ConfigFileError } from './errors.js';

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
}

/** Options of {@link loadServerConfig}. */
export interface LoadServerConfigOptions {
  /** Environment for `env:` auth keys (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory used without a file (default `process.cwd()`). */
  cwd?: string;
}

/** Labels: a word, dots and dashes (multirootca allows `\w+`); no spaces or slashes. */
const LABEL = /^[\w.-]{1,64}$/;
const ENTRY_KEYS = new Set(['plugin', 'options', 'signing', 'config']);

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Load `file` (or the defaults when `file` is undefined). Throws {@link ConfigFileError} (5200,
 * exit code 2) naming the file and the key: unreadable or non-JSON file, a malformed `signers`
 * entry, an invalid CFSSL `signing` section (CFSSL's reasons: `No "signing" field present`, `empty
 * expiry string`, `failed to find auth_key in auth_keys section`…).
 */
export async function loadServerConfig(file: string | undefined, options: LoadServerConfigOptions = {}): Promise<ServerConfig> {
  if (file === undefined) {
    return {
      file: null,
      dir: resolve(options.cwd ?? process.cwd()),
      policy: defaultSigningPolicy(),
      signers: [],
      allowPrivateNetworks: false,
      allowCidrs: [],
    };
  }
  const path = resolve(file);
  const dir = dirname(path);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new ConfigFileError(path, `cannot read the file (${(cause as NodeJS.ErrnoException).code ?? 'read error'})`, { cause });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new ConfigFileError(path, `failed to unmarshal configuration: ${(cause as Error).message}`, { cause });
  }
  if (!isRecord(raw)) throw new ConfigFileError(path, `the configuration must be a JSON object, got ${typeName(raw)}`);

  const policyOptions = { baseDir: dir, ...(options.env ? { env: options.env } : {}) };
  const hasSigners = raw['signers'] !== undefined && raw['signers'] !== null;
  // CFSSL requires `signing`; a certsmith file that only names signers may leave it out and gets
  // CFSSL's DefaultConfig, as `cfssl serve` without `-config`.
  const policy =
    !hasSigners || hasKey(raw, 'signing')
      ? parsePolicy(path, '', () => parseSigningPolicy(raw, policyOptions))
      : defaultSigningPolicy();

  const signers: SignerConfig[] = [];
  if (hasSigners) {
    const section = raw['signers'];
    if (!isRecord(section)) throw new ConfigFileError(path, `signers must be an object of label → signer, got ${typeName(section)}`);
    for (const [label, value] of Object.entries(section)) {
      signers.push(await parseSignerEntry(path, dir, raw, label, value, policyOptions));
    }
  }
  return { file: path, dir, policy, signers, ...parseNetworkAllowance(path, raw) };
}

/**
 * `"allowPrivateNetworks"` and `"allowCidrs"` (certsmith extensions). Every CIDR is checked here, at
 * start-up: a bad one reaching a worker would fail every bundle request instead.
 */
function parseNetworkAllowance(path: string, raw: Record<string, unknown>): { allowPrivateNetworks: boolean; allowCidrs: string[] } {
  const allow = raw['allowPrivateNetworks'] ?? false;
  if (typeof allow !== 'boolean') throw new ConfigFileError(path, `allowPrivateNetworks must be a boolean, got ${typeName(allow)}`);
  const cidrs = raw['allowCidrs'] ?? [];
  if (!Array.isArray(cidrs)) throw new ConfigFileError(path, `allowCidrs must be an array of CIDR strings, got ${typeName(cidrs)}`);
  cidrs.forEach((cidr: unknown, index) => {
    if (typeof cidr !== 'string') throw new ConfigFileError(path, `allowCidrs[${index}] must be a string, got ${typeName(cidr)}`);
    try {
      parseCidr(cidr);
    } catch (cause) {
      throw new ConfigFileError(path, `allowCidrs[${index}]: ${(cause as Error).message}`, { cause });
    }
  });
  return { allowPrivateNetworks: allow, allowCidrs: cidrs as string[] };
}

/** CFSSL matches `signing` case-insensitively, as every key of the Go config struct. */
function hasKey(record: Record<string, unknown>, key: string): boolean {
  return Object.keys(record).some((candidate) => candidate.toLowerCase() === key && record[candidate] !== null);
}

function parsePolicy(path: string, where: string, parse: () => SigningPolicy): SigningPolicy {
  try {
    return parse();
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    throw new ConfigFileError(path, `${where}${message}`, { cause, code: isCodedError(cause) ? cause.code : undefined });
  }
}

async function parseSignerEntry(
  path: string,
  dir: string,
  raw: Record<string, unknown>,
  label: string,
  value: unknown,
  policyOptions: { baseDir: string; env?: Readonly<Record<string, string | undefined>> },
): Promise<SignerConfig> {
  const where = `signers.${label}`;
  if (!LABEL.test(label)) {
    throw new ConfigFileError(path, `signer label ${JSON.stringify(label)} must be 1-64 letters, digits, "_", "." or "-"`);
  }
  let plugin: unknown;
  let options: unknown;
  let entry: Record<string, unknown> = {};
  if (Array.isArray(value)) {
    // The style guide's `[specifier, options]` form.
    if (value.length < 1 || value.length > 2) {
      throw new ConfigFileError(path, `${where} must be [plugin, options] or {"plugin", "options"}, got an array of ${value.length}`);
    }
    [plugin, options] = value;
  } else if (isRecord(value)) {
    entry = value;
    const unknown = Object.keys(value).filter((key) => !ENTRY_KEYS.has(key));
    if (unknown.length > 0) {
      throw new ConfigFileError(path, `${where} has unknown key${unknown.length === 1 ? '' : 's'} ${unknown.map((key) => JSON.stringify(key)).join(', ')} (allowed: plugin, options, signing, config)`);
    }
    plugin = value['plugin'];
    options = value['options'];
  } else {
    throw new ConfigFileError(path, `${where} must be {"plugin", "options"} or [plugin, options], got ${typeName(value)}`);
  }
  if (typeof plugin !== 'string' || plugin.trim() === '') {
    throw new ConfigFileError(path, `${where}.plugin must be a non-empty string (a package name or a path), got ${typeName(plugin)}`);
  }
  if (options !== undefined && options !== null && !isRecord(options)) {
    throw new ConfigFileError(path, `${where}.options must be an object, got ${typeName(options)}`);
  }

  let policy: SigningPolicy | null = null;
  if (entry['signing'] !== undefined && entry['config'] !== undefined) {
    throw new ConfigFileError(path, `${where} has both "signing" and "config"; give one`);
  }
  if (entry['signing'] !== undefined) {
    const own = { signing: entry['signing'], auth_keys: raw['auth_keys'], remotes: raw['remotes'] };
    policy = parsePolicy(path, `${where}.signing: `, () => parseSigningPolicy(own, policyOptions));
  } else if (entry['config'] !== undefined) {
    const configFile = entry['config'];
    if (typeof configFile !== 'string' || configFile === '') {
      throw new ConfigFileError(path, `${where}.config must be the path of a CFSSL config file, got ${typeName(configFile)}`);
    }
    const configPath = isAbsolute(configFile) ? configFile : resolve(dir, configFile);
    const env = policyOptions.env ? { env: policyOptions.env } : {};
    try {
      policy = await loadSigningPolicyFile(configPath, env);
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      throw new ConfigFileError(path, `${where}.config (${configPath}): ${message}`, { cause, code: isCodedError(cause) ? cause.code : undefined });
    }
  }
  return { label, plugin, options: options ?? {}, policy };
}
