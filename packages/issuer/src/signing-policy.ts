/**
 * The CFSSL signing configuration (`config/config.go`, behaviour doc 3.6): the same JSON file a
 * CFSSL user passes to `cfssl serve -config` loads here, unknown keys tolerated, with CFSSL's
 * validation (5200) and DefaultConfig when there is none. Each profile's constant extensions are
 * encoded once at load time so issuing a certificate only encodes what varies per request.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';

import { BadRequestError, Oid, encodeOidContent } from '@certsmith/x509-core';

import type { CertificatePolicy, ExtensionSpec } from './extensions.js';
import {
  authorityInfoAccessExtension,
  basicConstraintsExtension,
  certificatePoliciesExtension,
  crlDistributionPointsExtension,
  extKeyUsageExtension,
  keyUsageExtension,
  ocspNoCheckExtension,
} from './extensions.js';
import type { GoField, GoType } from './go-json.js';
import { decodeGo, goAny, goBool, goInt, goString, goStringSlice, unmarshalTypeError } from './go-json.js';
import { GoDurationError, parseGoDuration } from './go-duration.js';
import { compileGoRegexp } from './go-regexp.js';
import { InvalidPolicyError, UnknownProfileError } from './errors.js';

/** Key usage names → KeyUsage bit (bit 0 = digitalSignature), as cfssl `config.KeyUsage`. */
export const KEY_USAGES: Readonly<Record<string, number>> = {
  signing: 1 << 0,
  'digital signature': 1 << 0,
  'content commitment': 1 << 1,
  'key encipherment': 1 << 2,
  'data encipherment': 1 << 3,
  'key agreement': 1 << 4,
  'cert sign': 1 << 5,
  'crl sign': 1 << 6,
  'encipher only': 1 << 7,
  'decipher only': 1 << 8,
};

/** Extended key usage names → OID, as cfssl `config.ExtKeyUsage`. */
export const EXT_KEY_USAGES: Readonly<Record<string, string>> = {
  any: Oid.anyExtendedKeyUsage,
  'server auth': Oid.serverAuth,
  'client auth': Oid.clientAuth,
  'code signing': Oid.codeSigning,
  'email protection': Oid.emailProtection,
  's/mime': Oid.emailProtection,
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: Oid.timeStamping,
  'ocsp signing': Oid.ocspSigning,
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** `CSRWhitelist`: which CSR fields are copied into the certificate. */
export interface CsrWhitelist {
  Subject: boolean;
  PublicKeyAlgorithm: boolean;
  PublicKey: boolean;
  SignatureAlgorithm: boolean;
  DNSNames: boolean;
  IPAddresses: boolean;
  EmailAddresses: boolean;
  URIs: boolean;
}

/** `ca_constraint`. */
export interface CaConstraint {
  isCa: boolean;
  maxPathLen: number;
  maxPathLenZero: boolean;
}

/** An authentication key from `auth_keys`. */
export interface AuthKey {
  type: string;
  /** The key reference as written (`hex`, `env:VAR`, `file:/path`). */
  key: string;
}

/** One signing profile, validated, with Go durations parsed and constant extensions encoded. */
export interface SigningProfile {
  /** Profile name; `default` for the default profile. */
  readonly name: string;
  readonly usages: readonly string[];
  /** KeyUsage bits from `usages`. */
  readonly keyUsage: number;
  /** ExtendedKeyUsage OIDs from `usages`, in order. */
  readonly extKeyUsages: readonly string[];
  /** Usage names neither table knows (ignored at signing time, as CFSSL does). */
  readonly unknownUsages: readonly string[];
  readonly issuerUrls: readonly string[] | null;
  readonly ocspUrl: string;
  readonly crlUrl: string;
  readonly caConstraint: Readonly<CaConstraint>;
  readonly ocspNoCheck: boolean;
  /** Expiry in milliseconds (0 for remote profiles). */
  readonly expiry: number;
  /** `expiry` as written (reported by `/info`). */
  readonly expiryString: string;
  /** Backdate in milliseconds; 0 = CFSSL's default 5 minutes. */
  readonly backdate: number;
  readonly backdateString: string;
  readonly authKeyName: string;
  readonly prevAuthKeyName: string;
  /** HMAC key of `auth_key`, resolved at load time; `null` when the profile needs no auth. */
  readonly authKey: Uint8Array | null;
  /** HMAC key of `prev_auth_key` (key rotation), `null` when none. */
  readonly prevAuthKey: Uint8Array | null;
  readonly remoteName: string;
  /** `remotes` entry of `remote` or `auth_remote.remote`. */
  readonly remoteServer: string;
  readonly authRemote: { readonly remote: string; readonly authKey: string };
  readonly authRemoteKey: Uint8Array | null;
  readonly notBefore: Date | null;
  readonly notAfter: Date | null;
  readonly nameWhitelistString: string;
  readonly nameWhitelist: RegExp | null;
  readonly copyExtensions: boolean;
  /** Dotted OIDs a sign request may add (`allowed_extensions`). */
  readonly allowedExtensions: readonly string[];
  readonly ctLogServers: readonly string[];
  readonly certStore: string;
  readonly lintErrorLevel: unknown;
  readonly ignoredLints: readonly string[];
  readonly ignoredLintSources: readonly string[];
  readonly policies: readonly CertificatePolicy[];
  readonly csrWhitelist: Readonly<CsrWhitelist> | null;
  readonly clientProvidesSerialNumbers: boolean;
  /** Encoded once: KU, EKU, BC, AIA, CRL DP (with default-profile fallbacks), CP, OCSP no-check. */
  readonly encoded: EncodedProfileExtensions;
}

/** A profile's constant extensions. */
export interface EncodedProfileExtensions {
  keyUsage: ExtensionSpec | null;
  extKeyUsage: ExtensionSpec | null;
  basicConstraints: ExtensionSpec;
  authorityInfoAccess: ExtensionSpec | null;
  crlDistributionPoints: ExtensionSpec | null;
  /** Certificate policies then OCSP no-check: the tail of Go's extra extensions. */
  trailing: ExtensionSpec[];
}

/** A loaded signing policy. */
export interface SigningPolicy {
  readonly default: SigningProfile;
  readonly profiles: ReadonlyMap<string, SigningProfile>;
  readonly authKeys: Readonly<Record<string, AuthKey>>;
  readonly remotes: Readonly<Record<string, string>>;
  /** The configuration JSON as decoded (includes sections certsmith does not use, e.g. `ocsp`). */
  readonly raw: unknown;
}

/** Options for loading a policy. */
export interface SigningPolicyOptions {
  /** Directory relative `file:` auth-key paths resolve against (default: the working directory, as CFSSL). */
  baseDir?: string;
  /** Environment for `env:` auth keys (default: `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
}

// ---------------------------------------------------------------------------------------------
// JSON schema (Go struct shapes)

const timeType: GoType = {
  kind: 'custom',
  goName: 'time.Time',
  decode(value, context) {
    if (typeof value !== 'string') throw unmarshalTypeError(typeof value === 'number' ? 'number' : typeof value, timeType, context);
    const date = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) ? new Date(value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new BadRequestError(`parsing time ${JSON.stringify(value)} as RFC 3339 failed`);
    return date;
  },
};

const oidStringType: GoType = {
  kind: 'custom',
  goName: 'config.OID',
  decode(value) {
    if (typeof value !== 'string') throw new BadRequestError(`OID JSON string not wrapped in quotes.${JSON.stringify(value)}`);
    try {
      encodeOidContent(value);
    } catch {
      throw new BadRequestError('Invalid OID');
    }
    return value;
  },
};

const whitelistFields = ['Subject', 'PublicKeyAlgorithm', 'PublicKey', 'SignatureAlgorithm', 'DNSNames', 'IPAddresses', 'EmailAddresses', 'URIs'];

const profileFields: GoField[] = [
  { json: 'usages', prop: 'usages', type: goStringSlice },
  { json: 'issuer_urls', prop: 'issuerUrls', type: goStringSlice },
  { json: 'ocsp_url', prop: 'ocspUrl', type: goString },
  { json: 'crl_url', prop: 'crlUrl', type: goString },
  {
    json: 'ca_constraint',
    prop: 'caConstraint',
    type: {
      kind: 'struct',
      goName: 'config.CAConstraint',
      structName: 'CAConstraint',
      fields: [
        { json: 'is_ca', prop: 'isCa', type: goBool },
        { json: 'max_path_len', prop: 'maxPathLen', type: goInt },
        { json: 'max_path_len_zero', prop: 'maxPathLenZero', type: goBool },
      ],
    },
  },
  { json: 'ocsp_no_check', prop: 'ocspNoCheck', type: goBool },
  { json: 'expiry', prop: 'expiryString', type: goString },
  { json: 'backdate', prop: 'backdateString', type: goString },
  { json: 'auth_key', prop: 'authKeyName', type: goString },
  { json: 'prev_auth_key', prop: 'prevAuthKeyName', type: goString },
  { json: 'remote', prop: 'remoteName', type: goString },
  { json: 'not_before', prop: 'notBefore', type: timeType },
  { json: 'not_after', prop: 'notAfter', type: timeType },
  { json: 'name_whitelist', prop: 'nameWhitelistString', type: goString },
  { json: 'copy_extensions', prop: 'copyExtensions', type: goBool },
  {
    json: 'auth_remote',
    prop: 'authRemote',
    type: {
      kind: 'struct',
      goName: 'config.AuthRemote',
      structName: 'AuthRemote',
      fields: [
        { json: 'remote', prop: 'remote', type: goString },
        { json: 'auth_key', prop: 'authKey', type: goString },
      ],
    },
  },
  { json: 'ct_log_servers', prop: 'ctLogServers', type: goStringSlice },
  { json: 'allowed_extensions', prop: 'allowedExtensions', type: { kind: 'slice', goName: '[]config.OID', elem: oidStringType } },
  { json: 'cert_store', prop: 'certStore', type: goString },
  { json: 'lint_error_level', prop: 'lintErrorLevel', type: goAny },
  { json: 'ignored_lints', prop: 'ignoredLints', type: goStringSlice },
  { json: 'ignored_lint_sources', prop: 'ignoredLintSources', type: goStringSlice },
  {
    json: 'Policies',
    prop: 'policies',
    type: {
      kind: 'slice',
      goName: '[]config.CertificatePolicy',
      elem: {
        kind: 'struct',
        goName: 'config.CertificatePolicy',
        structName: 'CertificatePolicy',
        fields: [
          { json: 'ID', prop: 'id', type: oidStringType },
          {
            json: 'qualifiers',
            prop: 'qualifiers',
            type: {
              kind: 'slice',
              goName: '[]config.CertificatePolicyQualifier',
              elem: {
                kind: 'struct',
                goName: 'config.CertificatePolicyQualifier',
                structName: 'CertificatePolicyQualifier',
                fields: [
                  { json: 'type', prop: 'type', type: goString },
                  { json: 'value', prop: 'value', type: goString },
                ],
              },
            },
          },
        ],
      },
    },
  },
  {
    json: 'CSRWhitelist',
    prop: 'csrWhitelist',
    type: {
      kind: 'struct',
      goName: 'config.CSRWhitelist',
      structName: 'CSRWhitelist',
      pointer: true,
      fields: whitelistFields.map((name) => ({ json: name, prop: name, type: goBool })),
    },
  },
  { json: 'ClientProvidesSerialNumbers', prop: 'clientProvidesSerialNumbers', type: goBool },
];

const profileType: GoType = { kind: 'struct', goName: 'config.SigningProfile', structName: 'SigningProfile', pointer: true, fields: profileFields };

const configType: GoType = {
  kind: 'struct',
  goName: 'config.Config',
  structName: 'Config',
  pointer: true,
  fields: [
    {
      json: 'signing',
      prop: 'signing',
      type: {
        kind: 'struct',
        goName: 'config.Signing',
        structName: 'Signing',
        pointer: true,
        fields: [
          { json: 'profiles', prop: 'profiles', type: { kind: 'map', goName: 'map[string]*config.SigningProfile', elem: profileType } },
          { json: 'default', prop: 'default', type: profileType },
        ],
      },
    },
    { json: 'ocsp', prop: 'ocsp', type: goAny },
    {
      json: 'auth_keys',
      prop: 'authKeys',
      type: {
        kind: 'map',
        goName: 'map[string]config.AuthKey',
        elem: {
          kind: 'struct',
          goName: 'config.AuthKey',
          structName: 'AuthKey',
          fields: [
            { json: 'type', prop: 'type', type: goString },
            { json: 'key', prop: 'key', type: goString },
          ],
        },
      },
    },
    { json: 'remotes', prop: 'remotes', type: { kind: 'map', goName: 'map[string]string', elem: goString } },
  ],
};

type RawProfile = {
  usages: string[] | null;
  issuerUrls: string[] | null;
  ocspUrl: string;
  crlUrl: string;
  caConstraint: CaConstraint;
  ocspNoCheck: boolean;
  expiryString: string;
  backdateString: string;
  authKeyName: string;
  prevAuthKeyName: string;
  remoteName: string;
  notBefore: Date | null | '';
  notAfter: Date | null | '';
  nameWhitelistString: string;
  copyExtensions: boolean;
  authRemote: { remote: string; authKey: string };
  ctLogServers: string[] | null;
  allowedExtensions: string[] | null;
  certStore: string;
  lintErrorLevel: unknown;
  ignoredLints: string[] | null;
  ignoredLintSources: string[] | null;
  policies: { id: string; qualifiers: { type: string; value: string }[] | null }[] | null;
  csrWhitelist: CsrWhitelist | null;
  clientProvidesSerialNumbers: boolean;
};

type RawConfig = {
  signing: { profiles: Record<string, RawProfile | null> | null; default: RawProfile | null } | null;
  ocsp: unknown;
  authKeys: Record<string, AuthKey> | null;
  remotes: Record<string, string> | null;
};

// ---------------------------------------------------------------------------------------------

/** Split `usages` into KeyUsage bits, EKU OIDs and unknown names (cfssl `SigningProfile.Usages`). */
export function resolveUsages(usages: readonly string[]): { keyUsage: number; extKeyUsages: string[]; unknown: string[] } {
  let keyUsage = 0;
  const extKeyUsages: string[] = [];
  const unknown: string[] = [];
  for (const usage of usages) {
    const bit = KEY_USAGES[usage];
    const eku = EXT_KEY_USAGES[usage];
    if (bit !== undefined) keyUsage |= bit;
    else if (eku !== undefined) extKeyUsages.push(eku);
    else unknown.push(usage);
  }
  return { keyUsage, extKeyUsages, unknown };
}

const invalid = (message?: string, cause?: unknown): InvalidPolicyError => new InvalidPolicyError(message, cause === undefined ? undefined : { cause });

/** Resolve an auth key reference like cfssl `auth.New`: hex, `env:VAR` or `file:/path`, all hex-encoded. */
export function resolveAuthKey(reference: string, options: SigningPolicyOptions = {}): Uint8Array {
  const colon = reference.indexOf(':');
  let hex: string;
  if (colon < 0) {
    hex = reference;
  } else {
    const prefix = reference.slice(0, colon);
    const rest = reference.slice(colon + 1);
    if (prefix === 'env') {
      hex = (options.env ?? process.env)[rest] ?? '';
    } else if (prefix === 'file') {
      const path = isAbsolute(rest) ? rest : resolve(options.baseDir ?? process.cwd(), rest);
      hex = readFileSync(path, 'utf8').trim();
    } else {
      throw new Error(`unknown key prefix: ${prefix}`);
    }
  }
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new Error('encoding/hex: invalid byte');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

function authKeyFor(name: string, authKeys: Record<string, AuthKey>, options: SigningPolicyOptions): Uint8Array {
  const entry = authKeys[name];
  if (entry === undefined) throw invalid('failed to find auth_key in auth_keys section');
  if (entry.type !== 'standard') throw invalid('unknown authentication type');
  try {
    return resolveAuthKey(entry.key, options);
  } catch (cause) {
    throw invalid('failed to create new standard auth provider', cause);
  }
}

interface ProfileDraft extends Omit<SigningProfile, 'encoded'> {}

/** cfssl `SigningProfile.populate`: parse durations, resolve remotes and auth keys, compile the whitelist. */
function populateProfile(name: string, raw: RawProfile | null, config: RawConfig, options: SigningPolicyOptions): ProfileDraft {
  if (raw === null) throw invalid("can't parse nil profile");
  const remotes = config.remotes ?? {};
  const authKeys = config.authKeys ?? {};
  let expiry = 0;
  let backdate = 0;
  let remoteServer = '';
  const notBefore = raw.notBefore instanceof Date ? raw.notBefore : null;
  const notAfter = raw.notAfter instanceof Date ? raw.notAfter : null;
  if (raw.remoteName === '' && raw.authRemote.remote === '') {
    if (raw.expiryString === '') throw invalid('empty expiry string');
    try {
      expiry = parseGoDuration(raw.expiryString);
      if (raw.backdateString !== '') backdate = parseGoDuration(raw.backdateString);
    } catch (cause) {
      if (cause instanceof GoDurationError) throw invalid(cause.message, cause);
      throw cause;
    }
    if (notBefore && notAfter && notAfter.getTime() < notBefore.getTime()) throw invalid();
    for (const policy of raw.policies ?? []) {
      for (const qualifier of policy.qualifiers ?? []) {
        if (qualifier.type !== '' && qualifier.type !== 'id-qt-unotice' && qualifier.type !== 'id-qt-cps') {
          throw invalid('invalid policy qualifier type');
        }
      }
    }
  } else if (raw.remoteName !== '') {
    if (raw.authRemote.remote !== '') throw invalid();
    remoteServer = remotes[raw.remoteName] ?? '';
    if (remoteServer === '') throw invalid('failed to find remote in remotes section');
  } else {
    remoteServer = remotes[raw.authRemote.remote] ?? '';
    if (remoteServer === '') throw invalid('failed to find remote in remotes section');
  }
  const authKey = raw.authKeyName !== '' ? authKeyFor(raw.authKeyName, authKeys, options) : null;
  const prevAuthKey = raw.prevAuthKeyName !== '' ? authKeyFor(raw.prevAuthKeyName, authKeys, options) : null;
  const authRemoteKey = raw.authRemote.authKey !== '' ? authKeyFor(raw.authRemote.authKey, authKeys, options) : null;
  let nameWhitelist: RegExp | null = null;
  if (raw.nameWhitelistString !== '') {
    try {
      nameWhitelist = compileGoRegexp(raw.nameWhitelistString);
    } catch (cause) {
      throw invalid('failed to compile name whitelist section', cause);
    }
  }
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
    notBefore,
    notAfter,
    nameWhitelistString: raw.nameWhitelistString,
    nameWhitelist,
    copyExtensions: raw.copyExtensions,
    allowedExtensions: raw.allowedExtensions ?? [],
    ctLogServers: raw.ctLogServers ?? [],
    certStore: raw.certStore,
    lintErrorLevel: raw.lintErrorLevel,
    ignoredLints: raw.ignoredLints ?? [],
    ignoredLintSources: raw.ignoredLintSources ?? [],
    policies: (raw.policies ?? []).map((policy) => ({
      id: policy.id,
      qualifiers: (policy.qualifiers ?? []) as CertificatePolicy['qualifiers'],
    })),
    csrWhitelist: raw.csrWhitelist,
    clientProvidesSerialNumbers: raw.clientProvidesSerialNumbers,
  };
}

/** cfssl `SigningProfile.validProfile`. */
function isValidProfile(profile: ProfileDraft, isDefault: boolean): boolean {
  if (profile.authRemote.remote === '' && profile.authRemote.authKey !== '') return false;
  if (profile.remoteName !== '') {
    return profile.remoteServer !== '' && profile.authRemote.remote === '';
  }
  if (profile.authRemote.remote !== '') return profile.remoteServer !== '';
  if (!isDefault) {
    if (profile.usages.length === 0) return false;
    if (profile.unknownUsages.length === profile.usages.length) return false;
  } else if (profile.expiry === 0) {
    return false;
  }
  return true;
}

/**
 * Encode a profile's constant extensions. Like cfssl `FillTemplate`, OCSP, CRL and issuer URLs fall
 * back to the default profile's values.
 */
function encodeProfile(profile: ProfileDraft, fallback: ProfileDraft): SigningProfile {
  const ocspUrl = profile.ocspUrl !== '' ? profile.ocspUrl : fallback.ocspUrl;
  const crlUrl = profile.crlUrl !== '' ? profile.crlUrl : fallback.crlUrl;
  const issuerUrls = profile.issuerUrls ?? fallback.issuerUrls ?? [];
  const { isCa, maxPathLen, maxPathLenZero } = profile.caConstraint;
  // Go: MaxPathLen 0 without MaxPathLenZero (or negative) means "no limit" and is omitted.
  const pathLen = isCa && (maxPathLen > 0 || (maxPathLen === 0 && maxPathLenZero)) ? maxPathLen : null;
  const trailing: ExtensionSpec[] = [];
  if (profile.policies.length > 0) trailing.push(certificatePoliciesExtension(profile.policies));
  if (profile.ocspNoCheck) trailing.push(ocspNoCheckExtension());
  const encoded: EncodedProfileExtensions = {
    keyUsage: profile.keyUsage !== 0 ? keyUsageExtension(profile.keyUsage) : null,
    extKeyUsage: profile.extKeyUsages.length > 0 ? extKeyUsageExtension(profile.extKeyUsages) : null,
    basicConstraints: basicConstraintsExtension(isCa, pathLen),
    authorityInfoAccess: ocspUrl !== '' || issuerUrls.length > 0 ? authorityInfoAccessExtension(ocspUrl !== '' ? [ocspUrl] : [], issuerUrls) : null,
    crlDistributionPoints: crlUrl !== '' ? crlDistributionPointsExtension([crlUrl]) : null,
    trailing,
  };
  return Object.freeze({ ...profile, encoded });
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
    prevAuthKeyName: '',
    remoteName: '',
    notBefore: null,
    notAfter: null,
    nameWhitelistString: '',
    copyExtensions: false,
    authRemote: { remote: '', authKey: '' },
    ctLogServers: null,
    allowedExtensions: null,
    certStore: '',
    lintErrorLevel: 0,
    ignoredLints: null,
    ignoredLintSources: null,
    policies: null,
    csrWhitelist: null,
    clientProvidesSerialNumbers: false,
  };
}

/**
 * cfssl `DefaultConfig()` (behaviour doc 3.6): usages signing, key encipherment, server auth,
 * client auth; expiry 8760h; no CA, no URLs. Used when the server has no `-config`.
 */
export function defaultSigningPolicy(): SigningPolicy {
  const draft = populateProfile('default', rawDefaultProfile(), { signing: null, ocsp: null, authKeys: null, remotes: null }, {});
  return Object.freeze({ default: encodeProfile(draft, draft), profiles: new Map(), authKeys: {}, remotes: {}, raw: null });
}

/**
 * Parse and validate a CFSSL configuration (JSON text or an already-parsed value), as cfssl
 * `config.LoadConfig` does. Errors are 5200: `failed to unmarshal configuration: <Go text>`,
 * `No "signing" field present`, `empty expiry string`, Go duration errors, `failed to find remote
 * in remotes section`, `failed to find auth_key in auth_keys section`, `unknown authentication
 * type`, `failed to compile name whitelist section`, or `Invalid or unknown policy` when a profile
 * fails validation (no usages, no known usage, …).
 */
export function parseSigningPolicy(json: string | unknown, options: SigningPolicyOptions = {}): SigningPolicy {
  let value: unknown = json;
  if (typeof json === 'string') {
    try {
      value = JSON.parse(json);
    } catch (cause) {
      throw invalid(`failed to unmarshal configuration: ${(cause as Error).message}`, cause);
    }
  }
  let config: RawConfig;
  try {
    config = (decodeGo(value, configType, null, { structName: 'Config', path: [] }) ?? {
      signing: null,
      ocsp: null,
      authKeys: null,
      remotes: null,
    }) as RawConfig;
  } catch (cause) {
    throw invalid(`failed to unmarshal configuration: ${(cause as Error).message}`, cause);
  }
  if (config.signing === null) throw invalid('No "signing" field present');
  const defaultDraft = populateProfile('default', config.signing.default ?? rawDefaultProfile(), config, options);
  const profileDrafts = new Map<string, ProfileDraft>();
  for (const [name, raw] of Object.entries(config.signing.profiles ?? {})) {
    profileDrafts.set(name, populateProfile(name, raw, config, options));
  }
  if (!isValidProfile(defaultDraft, true)) throw invalid();
  for (const draft of profileDrafts.values()) if (!isValidProfile(draft, false)) throw invalid();

  const profiles = new Map<string, SigningProfile>();
  for (const [name, draft] of profileDrafts) profiles.set(name, encodeProfile(draft, defaultDraft));
  return Object.freeze({
    default: encodeProfile(defaultDraft, defaultDraft),
    profiles,
    authKeys: Object.freeze({ ...(config.authKeys ?? {}) }),
    remotes: Object.freeze({ ...(config.remotes ?? {}) }),
    raw: value,
  });
}

/**
 * Read and parse a CFSSL configuration file. Relative `file:` auth-key paths resolve against the
 * file's directory unless `options.baseDir` says otherwise. A missing file → 5200.
 */
export async function loadSigningPolicyFile(path: string, options: SigningPolicyOptions = {}): Promise<SigningPolicy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw invalid(`failed to read configuration file ${path}: ${(cause as NodeJS.ErrnoException).code ?? 'read error'}`, cause);
  }
  return parseSigningPolicy(text, { baseDir: dirname(resolve(path)), ...options });
}

/**
 * The profile named `name`: empty/absent → default; `default` → the default profile unless a
 * profile of that name exists; unknown → 5400 `Unknown policy profile` (certsmith is deliberately
 * stricter here than CFSSL's local signer, which silently uses the default).
 */
export function selectProfile(policy: SigningPolicy, name: string | undefined | null): SigningProfile {
  if (name === undefined || name === null || name === '') return policy.default;
  const profile = policy.profiles.get(name);
  if (profile) return profile;
  if (name === 'default') return policy.default;
  throw new UnknownProfileError();
}

/** True when any profile (default included) has an `auth_key`: CFSSL then enables `/authsign`. */
export function policyHasAuthenticatedProfiles(policy: SigningPolicy): boolean {
  if (policy.default.authKey) return true;
  for (const profile of policy.profiles.values()) if (profile.authKey) return true;
  return false;
}

/** True when some profile has no `auth_key`: CFSSL then enables `/sign` (behaviour doc 4.5, 5). */
export function policyHasUnauthenticatedProfiles(policy: SigningPolicy): boolean {
  if (!policy.default.authKey) return true;
  for (const profile of policy.profiles.values()) if (!profile.authKey) return true;
  return false;
}

