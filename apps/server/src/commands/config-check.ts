/**
 * `certsmith config check FILE`: validate a config file the way `certsmith serve -config FILE`
 * loads it, but report EVERY problem with its JSON path instead of stopping at the first:
 *
 * ```
 * signing.profiles.www.expiry: time: unknown unit "x" in duration "1x"
 * auth_keys.main.key: environment variable CA_MAIN_KEY is not set
 * signers.hsm.plugin: package @acme/signer-vault is not installed; install it …
 * ```
 *
 * The server's loaders stop at the first error, so this module is their collecting mode: it splits
 * the file into parts and runs the server's own validator on each part — `parseSigningPolicy` per
 * profile and per auth key, `loadSigningPolicyFile` for a signer's `config`, `loadSigner` (plugin
 * resolution, API version, option validation, creation) per signer, the chain-builder and
 * ubiquity-rules loaders for trust files — and names the part in the message. Only the shape rules
 * of a `signers` entry are restated here (config-file.ts keeps them in an unexported function). As a
 * final guard, a file with no problem found is loaded with `loadServerConfig`, so `config check`
 * never passes a file the server would refuse. Secret values are never printed: auth keys are
 * reported by name and reference only.
 */
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { Command } from 'commander';
import { loadCertificatePool } from '@certsmith/chain-builder';
import { createLogger } from '@certsmith/http-api';
import { GoDurationError, defaultSigningPolicy, loadSigningPolicyFile, parseSigningPolicy, resolveUsages } from '@certsmith/issuer';
import type { SigningPolicy, SigningProfile } from '@certsmith/issuer';
import { parseSecretReference } from '@certsmith/signer-api';
import { localSignerPlugin } from '@certsmith/signer-local';
import { loadPlatforms } from '@certsmith/ubiquity-rules';
import { loadServerConfig } from '../config-file.js';
import { SignerLoadError } from '../errors.js';
import { loadSigner } from '../signer-loader.js';
import type { CommandIo } from './common.js';
import { EXIT_FAILED, UsageError, acceptGoFlags, goJson, resolveIo, runAction } from './common.js';

/** One finding: the JSON path of the part (`""` = the file itself, `--flag` for flag files) and what is wrong. */
export interface ConfigFinding {
  path: string;
  message: string;
}

/** What {@link checkConfigFile} found. */
export interface ConfigCheckResult {
  /** Absolute path of the file. */
  file: string;
  /** Things the server would refuse (exit 2). */
  problems: ConfigFinding[];
  /** Things the server accepts but probably are not meant (unknown usages are ignored, …). */
  warnings: ConfigFinding[];
  /** What was checked. */
  counts: { profiles: number; authKeys: number; signers: number };
}

/** Options of {@link checkConfigFile}. */
export interface ConfigCheckOptions {
  /** Environment for `env:` references (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory for the file and the flag files (default `process.cwd()`). */
  cwd?: string;
  /** Load every signer (plugin, options, creation) as the server does. Default true. */
  loadSigners?: boolean;
  /** `serve` flags checked with the file: `--ca`/`--ca-key` and the trust files. */
  caFile?: string;
  caKeyFile?: string;
  caBundleFile?: string;
  intBundleFile?: string;
  metadataFile?: string;
}

const LABEL = /^[\w.-]{1,64}$/;
const ENTRY_KEYS = new Set(['plugin', 'options', 'signing', 'config']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `base.key`, or `base["odd key"]` for keys that are not plain words. */
export function joinPath(base: string, key: string): string {
  if (/^[A-Za-z_][\w-]*$/.test(key)) return base === '' ? key : `${base}.${key}`;
  return `${base}[${JSON.stringify(key)}]`;
}

/** A member matched case-insensitively, as Go's decoder does (the last match wins): `[key, value]`. */
function member(record: Record<string, unknown>, name: string): [string, unknown] | undefined {
  let found: [string, unknown] | undefined;
  for (const [key, value] of Object.entries(record)) if (key.toLowerCase() === name.toLowerCase()) found = [key, value];
  return found;
}

function memberValue(record: Record<string, unknown>, name: string): unknown {
  return member(record, name)?.[1];
}

function stringField(record: Record<string, unknown>, name: string): string {
  const value = memberValue(record, name);
  return typeof value === 'string' ? value : '';
}

/** The file's valid auth keys and remotes: what each profile is checked against. */
interface PolicyContext {
  baseDir: string;
  env: Readonly<Record<string, string | undefined>>;
  /** Auth keys that resolve, by name (raw entries). */
  authKeys: Record<string, unknown>;
  /** Auth key names present in the file but unusable (reported at `auth_keys.<name>`). */
  brokenAuthKeys: Set<string>;
  /** Remotes with a string address. */
  remotes: Record<string, string>;
}

const CHECK_REMOTE = '__certsmith_config_check__';

class Collector {
  readonly problems: ConfigFinding[] = [];
  readonly warnings: ConfigFinding[] = [];
  problem(path: string, message: string): void {
    this.problems.push({ path, message });
  }
  warning(path: string, message: string): void {
    this.warnings.push({ path, message });
  }
}

/** `failed to unmarshal configuration: <Go text>` → the Go text. */
function unmarshalText(message: string): string | null {
  const prefix = 'failed to unmarshal configuration: ';
  return message.startsWith(prefix) ? message.slice(prefix.length) : null;
}

/** Why CFSSL's `validProfile` refused a profile, with the member to blame. */
function explainInvalidProfile(raw: Record<string, unknown>, isDefault: boolean): [string, string] {
  const remote = stringField(raw, 'remote');
  const authRemote = isRecord(memberValue(raw, 'auth_remote')) ? (memberValue(raw, 'auth_remote') as Record<string, unknown>) : {};
  const authRemoteRemote = stringField(authRemote, 'remote');
  if (authRemoteRemote === '' && stringField(authRemote, 'auth_key') !== '') return ['auth_remote.remote', 'auth_remote.auth_key needs auth_remote.remote'];
  if (remote !== '' && authRemoteRemote !== '') return ['auth_remote', 'give either "remote" or "auth_remote", not both'];
  if (remote !== '' || authRemoteRemote !== '') return ['', 'Invalid or unknown policy'];
  const notBefore = memberValue(raw, 'not_before');
  const notAfter = memberValue(raw, 'not_after');
  if (typeof notBefore === 'string' && typeof notAfter === 'string' && new Date(notAfter).getTime() < new Date(notBefore).getTime()) {
    return ['not_after', 'not_after is before not_before'];
  }
  if (isDefault) return ['expiry', 'the default profile needs a non-zero expiry'];
  const usages = memberValue(raw, 'usages');
  const list = Array.isArray(usages) ? usages.filter((usage): usage is string => typeof usage === 'string') : [];
  if (list.length === 0) return ['usages', 'no usages given (e.g. ["signing", "key encipherment", "server auth"])'];
  const { unknown } = resolveUsages(list);
  if (unknown.length === list.length) return ['usages', `none of the usages is known: ${unknown.map((usage) => JSON.stringify(usage)).join(', ')}`];
  return ['', 'Invalid or unknown policy'];
}

/** The member of `raw` a `parseSigningPolicy` error is about, and the message to show. */
function attributeProfileError(raw: Record<string, unknown>, error: unknown, isDefault: boolean): [string, string] {
  const message = messageOf(error);
  const cause = (error as { cause?: unknown }).cause;
  const goText = unmarshalText(message);
  if (goText !== null) {
    const field = /Go struct field \w+\.signing\.(?:profiles|default)\.([\w.]+) of type/.exec(goText)?.[1];
    if (field !== undefined) return [field, goText];
    const time = /^parsing time (".*") as RFC 3339 failed$/.exec(goText)?.[1];
    if (time !== undefined) {
      const which = ['not_before', 'not_after'].find((name) => JSON.stringify(memberValue(raw, name)) === time);
      return [which ?? '', goText];
    }
    if (goText === 'Invalid OID') return [member(raw, 'allowed_extensions') ? 'allowed_extensions' : 'Policies', goText];
    return ['', goText];
  }
  if (message === 'empty expiry string') return ['expiry', message];
  if (cause instanceof GoDurationError || /^time: /.test(message)) {
    const backdate = stringField(raw, 'backdate');
    return [backdate !== '' && message.includes(JSON.stringify(backdate)) ? 'backdate' : 'expiry', message];
  }
  if (message === 'failed to compile name whitelist section') return ['name_whitelist', `${message}: ${messageOf(cause)}`];
  if (message === 'invalid policy qualifier type') return ['Policies', message];
  if (message === "can't parse nil profile") return ['', 'a profile must be an object, got null'];
  if (message === 'Invalid or unknown policy') return explainInvalidProfile(raw, isDefault);
  return ['', cause === undefined ? message : `${message}: ${messageOf(cause)}`];
}

/**
 * Check one profile with `parseSigningPolicy` alone in a policy (so its problems are its own);
 * references to missing or broken auth keys and remotes are reported at the referencing member
 * and neutralised so the rest of the profile is still checked.
 */
function checkProfile(path: string, raw: unknown, isDefault: boolean, context: PolicyContext, out: Collector): SigningProfile | null {
  if (!isRecord(raw)) {
    if (raw === null) out.problem(path, 'a profile must be an object, got null');
    else out.problem(path, `a profile must be an object, got ${typeName(raw)}`);
    return null;
  }
  const copy: Record<string, unknown> = { ...raw };
  let referenceProblem = false;
  const checkKeyReference = (record: Record<string, unknown>, name: string, at: string): void => {
    const found = member(record, name);
    if (found === undefined || typeof found[1] !== 'string' || found[1] === '') return;
    const keyName = found[1];
    if (context.brokenAuthKeys.has(keyName)) {
      out.problem(joinPath(path, at), `auth key ${JSON.stringify(keyName)} is not usable (see ${joinPath('auth_keys', keyName)})`);
    } else if (!(keyName in context.authKeys)) {
      out.problem(joinPath(path, at), `failed to find auth_key in auth_keys section: no auth key named ${JSON.stringify(keyName)}`);
    } else {
      return;
    }
    referenceProblem = true;
    delete record[found[0]];
  };
  checkKeyReference(copy, 'auth_key', 'auth_key');
  checkKeyReference(copy, 'prev_auth_key', 'prev_auth_key');
  const authRemote = member(copy, 'auth_remote');
  if (authRemote !== undefined && isRecord(authRemote[1])) {
    const inner = { ...authRemote[1] };
    copy[authRemote[0]] = inner;
    checkKeyReference(inner, 'auth_key', 'auth_remote.auth_key');
    const remoteName = member(inner, 'remote');
    if (remoteName !== undefined && typeof remoteName[1] === 'string' && remoteName[1] !== '' && !(remoteName[1] in context.remotes)) {
      out.problem(joinPath(path, 'auth_remote.remote'), `failed to find remote in remotes section: no remote named ${JSON.stringify(remoteName[1])}`);
      inner[remoteName[0]] = CHECK_REMOTE;
      referenceProblem = true;
    }
  }
  const remote = member(copy, 'remote');
  if (remote !== undefined && typeof remote[1] === 'string' && remote[1] !== '' && !(remote[1] in context.remotes)) {
    out.problem(joinPath(path, 'remote'), `failed to find remote in remotes section: no remote named ${JSON.stringify(remote[1])}`);
    copy[remote[0]] = CHECK_REMOTE;
    referenceProblem = true;
  }

  const signing = isDefault ? { default: copy } : { profiles: { checked: copy } };
  try {
    const policy = parseSigningPolicy(
      { signing, auth_keys: context.authKeys, remotes: { ...context.remotes, [CHECK_REMOTE]: 'http://127.0.0.1:1' } },
      { baseDir: context.baseDir, env: context.env },
    );
    const profile = isDefault ? policy.default : (policy.profiles.get('checked') ?? null);
    for (const usage of profile?.unknownUsages ?? []) out.warning(joinPath(path, 'usages'), `unknown usage ${JSON.stringify(usage)} is ignored`);
    return referenceProblem ? null : profile;
  } catch (error) {
    const [field, message] = attributeProfileError(copy, error, isDefault);
    out.problem(field === '' ? path : `${path}.${field}`, message);
    return null;
  }
}

/** Check every auth key: decodable, `standard`, and its reference resolvable (never printing the key). */
function checkAuthKeys(value: unknown, baseDir: string, env: Readonly<Record<string, string | undefined>>, out: Collector): Record<string, unknown> {
  const valid: Record<string, unknown> = {};
  if (value === undefined || value === null) return valid;
  if (!isRecord(value)) {
    out.problem('auth_keys', `must be an object of name → {"type": "standard", "key": …}, got ${typeName(value)}`);
    return valid;
  }
  for (const [name, entry] of Object.entries(value)) {
    const path = joinPath('auth_keys', name);
    if (isRecord(entry)) {
      const key = stringField(entry, 'key');
      const reference = parseSecretReference(key);
      if (reference?.kind === 'env' && env[reference.name] === undefined) {
        out.problem(joinPath(path, 'key'), `environment variable ${reference.name} is not set`);
        continue;
      }
      if (reference?.kind === 'env' && env[reference.name] === '') {
        out.problem(joinPath(path, 'key'), `environment variable ${reference.name} is empty`);
        continue;
      }
      if (key === '') {
        out.problem(joinPath(path, 'key'), 'no key given (hex, env:NAME or file:PATH)');
        continue;
      }
    }
    try {
      parseSigningPolicy(
        { signing: { default: { expiry: '1h', usages: ['signing'], auth_key: name } }, auth_keys: { [name]: entry } },
        { baseDir, env },
      );
      valid[name] = entry;
    } catch (error) {
      const message = messageOf(error);
      const goText = unmarshalText(message);
      if (goText !== null) out.problem(path, goText);
      else if (message === 'unknown authentication type') out.problem(joinPath(path, 'type'), `${message} (expected "standard")`);
      else if (message === 'failed to create new standard auth provider') {
        const cause = (error as { cause?: unknown }).cause;
        const code = (cause as NodeJS.ErrnoException | undefined)?.code;
        const key = isRecord(entry) ? stringField(entry, 'key') : '';
        const reference = parseSecretReference(key);
        const detail =
          code !== undefined && reference?.kind === 'file'
            ? `cannot read ${isAbsolute(reference.path) ? reference.path : resolve(baseDir, reference.path)} (${code})`
            : `${messageOf(cause)} (the key must be hex-encoded)`;
        out.problem(joinPath(path, 'key'), `${message}: ${detail}`);
      } else out.problem(path, message);
    }
  }
  return valid;
}

function checkRemotes(value: unknown, out: Collector): Record<string, string> {
  const valid: Record<string, string> = {};
  if (value === undefined || value === null) return valid;
  if (!isRecord(value)) {
    out.problem('remotes', `must be an object of name → "host:port", got ${typeName(value)}`);
    return valid;
  }
  for (const [name, address] of Object.entries(value)) {
    if (typeof address === 'string') valid[name] = address;
    else out.problem(joinPath('remotes', name), `must be a string ("host:port"), got ${typeName(address)}`);
  }
  return valid;
}

/** Check a CFSSL `signing` section; returns its policy when every profile is valid. */
function checkSigning(path: string, value: unknown, context: PolicyContext, out: Collector): { policy: SigningPolicy | null; profiles: number } {
  if (!isRecord(value)) {
    out.problem(path, `must be an object with "default" and "profiles", got ${typeName(value)}`);
    return { policy: null, profiles: 0 };
  }
  let ok = true;
  let count = 0;
  const defaultProfile = member(value, 'default');
  if (defaultProfile !== undefined && defaultProfile[1] !== null) {
    count++;
    ok = checkProfile(joinPath(path, defaultProfile[0]), defaultProfile[1], true, context, out) !== null && ok;
  }
  const profiles = member(value, 'profiles');
  if (profiles !== undefined && profiles[1] !== null) {
    if (!isRecord(profiles[1])) {
      out.problem(joinPath(path, profiles[0]), `must be an object of name → profile, got ${typeName(profiles[1])}`);
      ok = false;
    } else {
      for (const [name, raw] of Object.entries(profiles[1])) {
        count++;
        ok = checkProfile(joinPath(joinPath(path, profiles[0]), name), raw, false, context, out) !== null && ok;
      }
    }
  }
  if (!ok) return { policy: null, profiles: count };
  try {
    const policy = parseSigningPolicy({ signing: value, auth_keys: context.authKeys, remotes: context.remotes }, { baseDir: context.baseDir, env: context.env });
    return { policy, profiles: count };
  } catch (error) {
    out.problem(path, messageOf(error));
    return { policy: null, profiles: count };
  }
}

/** The remote-profile rule of the signer registry: a local signer must not sign profiles meant for a remote CA. */
function remoteProfile(policy: SigningPolicy): SigningProfile | undefined {
  return [policy.default, ...policy.profiles.values()].find((profile) => profile.remoteName !== '' || profile.authRemote.remote !== '');
}

/** `signer "x" (plugin y): reason; hint` → `reason; hint` (the path already names the signer). */
function signerMessage(error: unknown): string {
  return messageOf(error).replace(/^signer "[^"]*" \(plugin [^)]*\): /, '');
}

/**
 * Check `file` and collect every problem (see the module comment). Never throws for problems in the
 * file; only programming errors escape.
 */
export async function checkConfigFile(file: string, options: ConfigCheckOptions = {}): Promise<ConfigCheckResult> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const path = resolve(cwd, file);
  const dir = dirname(path);
  const out = new Collector();
  const counts = { profiles: 0, authKeys: 0, signers: 0 };
  const result = (): ConfigCheckResult => ({ file: path, problems: out.problems, warnings: out.warnings, counts });

  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    out.problem('', code !== undefined ? `cannot read the file (${code})` : `failed to unmarshal configuration: ${messageOf(error)}`);
    return result();
  }
  if (!isRecord(raw)) {
    out.problem('', `the configuration must be a JSON object, got ${typeName(raw)}`);
    return result();
  }

  const authKeysMember = member(raw, 'auth_keys');
  const authKeyNames = isRecord(authKeysMember?.[1]) ? Object.keys(authKeysMember[1] as Record<string, unknown>) : [];
  counts.authKeys = authKeyNames.length;
  const authKeys = checkAuthKeys(authKeysMember?.[1], dir, env, out);
  const context: PolicyContext = {
    baseDir: dir,
    env,
    authKeys,
    brokenAuthKeys: new Set(authKeyNames.filter((name) => !(name in authKeys))),
    remotes: checkRemotes(memberValue(raw, 'remotes'), out),
  };

  const signersValue = memberValue(raw, 'signers');
  const hasSigners = signersValue !== undefined && signersValue !== null;
  const signing = member(raw, 'signing');
  let filePolicy: SigningPolicy | null = null;
  if (signing === undefined || signing[1] === null) {
    if (!hasSigners) out.problem('signing', 'No "signing" field present');
    else filePolicy = defaultSigningPolicy();
  } else {
    const checked = checkSigning(signing[0], signing[1], context, out);
    filePolicy = checked.policy;
    counts.profiles += checked.profiles;
  }

  const signerLabels: string[] = [];
  const loadOne = async (label: string, where: string, plugin: string | typeof localSignerPlugin, pluginOptions: unknown, policy: SigningPolicy | null, configDir: string, describedAs?: string): Promise<void> => {
    try {
      const loaded = await loadSigner({
        label,
        plugin,
        options: pluginOptions,
        configDir,
        logger: createLogger({ level: 'silent' }),
        where,
        configFile: where.startsWith('signers.') ? path : null,
        env,
        ...(describedAs === undefined ? {} : { describedAs }),
      });
      try {
        const remote = policy === null ? undefined : remoteProfile(policy);
        if (remote !== undefined && typeof loaded.signer.sign === 'function') {
          out.problem(
            where,
            `signing profile ${JSON.stringify(remote.name)} sends requests to remote ${JSON.stringify(remote.remoteName || remote.authRemote.remote)}, but this signer signs locally; reach remote CAs with a @certsmith/signer-multiroot signer or remove "remote" from the profile`,
          );
        }
      } finally {
        await Promise.resolve(loaded.signer.close()).catch(() => undefined);
      }
    } catch (error) {
      const stage = error instanceof SignerLoadError && /options rejected|could not create the signer/.test(error.message) ? 'options' : 'plugin';
      out.problem(where.startsWith('signers.') ? `${where}.${stage}` : where, signerMessage(error));
    }
  };

  if (hasSigners) {
    if (!isRecord(signersValue)) {
      out.problem('signers', `must be an object of label → signer, got ${typeName(signersValue)}`);
    } else {
      for (const [label, value] of Object.entries(signersValue)) {
        counts.signers++;
        signerLabels.push(label);
        const where = joinPath('signers', label);
        if (!LABEL.test(label)) {
          out.problem(where, `signer label ${JSON.stringify(label)} must be 1-64 letters, digits, "_", "." or "-"`);
          continue;
        }
        let plugin: unknown;
        let pluginOptions: unknown;
        let entry: Record<string, unknown> = {};
        if (Array.isArray(value)) {
          if (value.length < 1 || value.length > 2) {
            out.problem(where, `must be [plugin, options] or {"plugin", "options"}, got an array of ${value.length}`);
            continue;
          }
          [plugin, pluginOptions] = value;
        } else if (isRecord(value)) {
          entry = value;
          const unknown = Object.keys(value).filter((key) => !ENTRY_KEYS.has(key));
          for (const key of unknown) out.problem(joinPath(where, key), 'unknown key (allowed: plugin, options, signing, config)');
          plugin = value['plugin'];
          pluginOptions = value['options'];
        } else {
          out.problem(where, `must be {"plugin", "options"} or [plugin, options], got ${typeName(value)}`);
          continue;
        }
        let shapeOk = true;
        if (typeof plugin !== 'string' || plugin.trim() === '') {
          out.problem(`${where}.plugin`, `must be a non-empty string (a package name or a path), got ${typeName(plugin)}`);
          shapeOk = false;
        }
        if (pluginOptions !== undefined && pluginOptions !== null && !isRecord(pluginOptions)) {
          out.problem(`${where}.options`, `must be an object, got ${typeName(pluginOptions)}`);
          shapeOk = false;
        }
        let policy: SigningPolicy | null = filePolicy;
        if (entry['signing'] !== undefined && entry['config'] !== undefined) {
          out.problem(where, 'has both "signing" and "config"; give one');
          policy = null;
        } else if (entry['signing'] !== undefined) {
          const checked = checkSigning(`${where}.signing`, entry['signing'], context, out);
          counts.profiles += checked.profiles;
          policy = checked.policy;
        } else if (entry['config'] !== undefined) {
          const configFile = entry['config'];
          if (typeof configFile !== 'string' || configFile === '') {
            out.problem(`${where}.config`, `must be the path of a CFSSL config file, got ${typeName(configFile)}`);
            policy = null;
          } else {
            try {
              policy = await loadSigningPolicyFile(isAbsolute(configFile) ? configFile : resolve(dir, configFile), { env });
            } catch (error) {
              out.problem(`${where}.config`, messageOf(error));
              policy = null;
            }
          }
        }
        if (shapeOk && options.loadSigners !== false) await loadOne(label, where, plugin as string, pluginOptions ?? {}, policy, dir);
      }
    }
  }

  // The serve flags checked with the file.
  if (options.caFile !== undefined && options.caKeyFile !== undefined) {
    if (signerLabels.includes('default')) {
      out.problem('signers.default', 'signer "default" is defined twice, by --ca/--ca-key and by signers.default; remove one of them');
    } else if (options.loadSigners !== false) {
      await loadOne('default', '--ca/--ca-key', localSignerPlugin, { certFile: options.caFile, keyFile: options.caKeyFile }, filePolicy, cwd, '@certsmith/signer-local from --ca/--ca-key');
    }
  }
  const trustFiles: Array<[string, string | undefined, (file: string) => Promise<unknown>]> = [
    ['--ca-bundle', options.caBundleFile, (file) => loadCertificatePool(file, 'roots')],
    ['--int-bundle', options.intBundleFile, (file) => loadCertificatePool(file, 'intermediates')],
    ['--metadata', options.metadataFile, (file) => loadPlatforms(file)],
  ];
  for (const [flag, file, load] of trustFiles) {
    if (file === undefined) continue;
    try {
      await load(resolve(cwd, file));
    } catch (error) {
      out.problem(flag, messageOf(error));
    }
  }

  // Final guard: the server's own loader must accept what looked clean.
  if (out.problems.length === 0) {
    try {
      await loadServerConfig(path, { env, cwd });
    } catch (error) {
      out.problem('', messageOf(error).replace(`config file ${path}: `, ''));
    }
  }
  return result();
}

/** Human form: one `path: message` line per finding, then a summary line. */
export function formatConfigCheck(result: ConfigCheckResult, shownFile: string): string {
  const line = (finding: ConfigFinding): string => `${finding.path === '' ? shownFile : finding.path}: ${finding.message}`;
  const lines = [...result.problems.map(line), ...result.warnings.map((finding) => `warning: ${line(finding)}`)];
  const { profiles, authKeys, signers } = result.counts;
  const summary = `${profiles} profile${profiles === 1 ? '' : 's'}, ${authKeys} auth key${authKeys === 1 ? '' : 's'}, ${signers} signer${signers === 1 ? '' : 's'}`;
  const problems = result.problems.length;
  lines.push(problems === 0 ? `${shownFile}: OK (${summary})` : `${shownFile}: ${problems} problem${problems === 1 ? '' : 's'} (${summary})`);
  return `${lines.join('\n')}\n`;
}

interface CheckFlags {
  json?: boolean;
  signers: boolean;
  ca?: string;
  caKey?: string;
  caBundle?: string;
  intBundle?: string;
  metadata?: string;
}

const EXAMPLES = `
Prints one line per problem, "<json path>: <message>", then a summary. Exit codes: 0 valid,
2 problems found, 1 usage error. Secrets are never printed: auth keys and signer secrets are
reported by reference (env:NAME, file:PATH) only.

Examples:
  certsmith config check /etc/certsmith/certsmith.json
  certsmith config check -ca ca.pem -ca-key ca-key.pem -ca-bundle roots.pem cfssl-config.json
  certsmith config check --json config.json | jq .problems
  certsmith config check --no-signers config.json     # do not load signer plugins`;

/** Register `certsmith config check`. */
export function registerConfigCommand(program: Command, io: Partial<CommandIo> = {}): Command {
  const resolved = resolveIo(io);
  const config = program
    .command('config')
    .description('configuration file tools')
    .helpOption('-h, --help', 'show help')
    .allowExcessArguments(false);
  const check = config
    .command('check')
    .description('validate a config file as certsmith serve would load it, listing every problem with its JSON path')
    .helpOption('-h, --help', 'show help')
    .argument('<file>', 'config file (CFSSL signing config, optionally with certsmith signers)')
    .option('--json', 'print {"file","valid","problems":[{"path","message"}],"warnings":[…]} instead of lines')
    .option('--no-signers', 'do not load signer plugins (only their entries are checked)')
    .option('--ca <file>', 'also check the local signer of serve --ca/--ca-key')
    .option('--ca-key <file>', 'CA private key for --ca')
    .option('--ca-bundle <file>', 'also check a root bundle (serve --ca-bundle)')
    .option('--int-bundle <file>', 'also check an intermediate bundle (serve --int-bundle)')
    .option('--metadata <file>', 'also check a platform metadata file (serve --metadata)')
    .allowExcessArguments(false)
    .addHelpText('after', EXAMPLES);
  acceptGoFlags(check);
  check.action(
    runAction(check, resolved, async (file: string, flags: CheckFlags) => {
      if ((flags.ca === undefined) !== (flags.caKey === undefined)) throw new UsageError('--ca and --ca-key go together');
      const options: ConfigCheckOptions = { env: resolved.env, cwd: resolved.cwd(), loadSigners: flags.signers };
      if (flags.ca !== undefined) options.caFile = flags.ca;
      if (flags.caKey !== undefined) options.caKeyFile = flags.caKey;
      if (flags.caBundle !== undefined) options.caBundleFile = flags.caBundle;
      if (flags.intBundle !== undefined) options.intBundleFile = flags.intBundle;
      if (flags.metadata !== undefined) options.metadataFile = flags.metadata;
      const result = await checkConfigFile(file, options);
      if (flags.json) {
        resolved.stdout(`${goJson({ file: result.file, valid: result.problems.length === 0, problems: result.problems, warnings: result.warnings }, 2)}\n`);
      } else {
        resolved.stdout(formatConfigCheck(result, file));
      }
      if (result.problems.length > 0) resolved.setExitCode(EXIT_FAILED);
    }),
  );
  return config;
}
