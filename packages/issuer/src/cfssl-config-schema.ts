/**
 * CFSSL's configuration file as Go's `encoding/json` sees it: the structs of `config/config.go` at
 * CFSSL HEAD `ed8df497` (`Config`, `Signing`, `SigningProfile`, `AuthKey`, `CAConstraint`,
 * `AuthRemote`, `CertificatePolicy`, `CSRWhitelist`, `ocsp/config.Config`), field by field and in
 * Go's field order — the order decides which field a key matches when two differ only in case
 * (`EXPIRY` is `expiry`, the string; `Expiry` is the Go duration field). Untagged exported Go fields
 * (`Expiry`, `Backdate`, `RemoteServer`, `Provider`, …) are part of the schema because Go decodes
 * them too; what certsmith does with each is decided in `unsupported-config-keys.ts`.
 *
 * {@link decodeCfsslConfig} decodes a parsed JSON value into {@link RawCfsslConfig} and reports
 * Go's type errors and unknown keys with their JSON paths.
 */
import { BadRequestError, encodeOidContent } from '@certsmith/x509-core';

import type { ConfigReport } from './config-problems.js';
import type { GoField, GoType } from './go-json.js';
import { decodeGo, goBool, goInt, goString, goStringSlice, jsonKind, unmarshalTypeError } from './go-json.js';

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

/** A key that was present (not absent, not `null`) and its decoded value. */
export interface Present<T> {
  readonly value: T;
  /** The key as written in the document (Go matches keys case-insensitively). */
  readonly key: string;
}

/** A `SigningProfile` as decoded, before `populate`. */
export interface RawProfile {
  usages: string[] | null;
  issuerUrls: string[] | null;
  ocspUrl: string;
  crlUrl: string;
  caConstraint: CaConstraint;
  ocspNoCheck: boolean;
  expiryString: string;
  backdateString: string;
  authKeyName: string;
  copyExtensions: boolean;
  prevAuthKeyName: string;
  remoteName: string;
  notBefore: Date | null;
  notAfter: Date | null;
  nameWhitelistString: string;
  authRemote: { remote: string; authKey: string };
  allowedExtensions: string[] | null;
  policies: { id: string; qualifiers: { type: string; value: string }[] | null }[] | null;
  csrWhitelist: CsrWhitelist | null;
  clientProvidesSerialNumbers: boolean;
  // Keys certsmith does not implement (see unsupported-config-keys.ts): null when absent.
  ctLogServers: Present<string[] | null> | null;
  certStore: Present<string> | null;
  lintErrorLevel: Present<number> | null;
  ignoredLints: Present<string[] | null> | null;
  ignoredLintSources: Present<string[] | null> | null;
  goExpiry: Present<number> | null;
  goBackdate: Present<number> | null;
  provider: Present<null> | null;
  prevProvider: Present<null> | null;
  remoteProvider: Present<null> | null;
  remoteServer: Present<string> | null;
  remoteCas: Present<unknown> | null;
  clientCert: Present<unknown> | null;
  goNameWhitelist: Present<unknown> | null;
  extensionWhitelist: Present<unknown> | null;
  lintRegistry: Present<null> | null;
}

/** A `Config` as decoded. */
export interface RawCfsslConfig {
  signing: { profiles: Record<string, RawProfile | null> | null; default: RawProfile | null } | null;
  ocsp: Present<unknown> | null;
  authKeys: Record<string, AuthKey> | null;
  remotes: Record<string, string> | null;
}

/** Go `time.Time` from RFC 3339 text. */
const timeType: GoType = {
  kind: 'custom',
  goName: 'time.Time',
  decode(value, context) {
    if (typeof value !== 'string') throw unmarshalTypeError(jsonKind(value), timeType, context);
    const date = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(value) ? new Date(value) : new Date(NaN);
    if (Number.isNaN(date.getTime())) throw new BadRequestError(`parsing time ${JSON.stringify(value)} as RFC 3339 failed`);
    return date;
  },
};

/** cfssl `config.OID` (`UnmarshalJSON`: a quoted dotted string). */
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

/**
 * zlint's `lint.LintStatus` (`lint_error_level`): its `UnmarshalJSON` strips quotes from the raw
 * JSON and looks the rest up among the status labels — so `"warn"` is 5 and a number such as `3`
 * (what CFSSL's comment suggests) makes CFSSL refuse the file: `bad LintStatus JSON value: 3`.
 */
export const LINT_STATUS_LABELS: Readonly<Record<string, number>> = {
  reserved: 0,
  NA: 1,
  NE: 2,
  pass: 3,
  info: 4,
  warn: 5,
  error: 6,
  fatal: 7,
};

const lintStatusType: GoType = {
  kind: 'custom',
  goName: 'lint.LintStatus',
  decode(value) {
    const raw = JSON.stringify(value);
    const label = raw.replaceAll('"', '');
    if (!Object.hasOwn(LINT_STATUS_LABELS, label)) throw new BadRequestError(`bad LintStatus JSON value: ${raw}`);
    return LINT_STATUS_LABELS[label];
  },
};

/** Go `time.Duration`: an int64 of nanoseconds in JSON. */
const goDuration: GoType = {
  kind: 'custom',
  goName: 'time.Duration',
  decode(value, context) {
    if (typeof value !== 'number') throw unmarshalTypeError(jsonKind(value), goDuration, context);
    if (!Number.isSafeInteger(value)) throw unmarshalTypeError(`number ${value}`, goDuration, context);
    return value;
  },
};

/** A Go interface type with methods: any JSON value but `null` fails to decode (`json: cannot unmarshal object into … of type auth.Provider`). */
function goInterface(goName: string): GoType {
  const type: GoType = {
    kind: 'custom',
    goName,
    decode(value, context) {
      throw unmarshalTypeError(jsonKind(value), type, context);
    },
  };
  return type;
}

/** A pointer to a Go struct whose fields are all unexported or beyond what a config sets: any object decodes. */
function opaqueStruct(goName: string): GoType {
  const type: GoType = {
    kind: 'custom',
    goName,
    decode(value, context) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unmarshalTypeError(jsonKind(value), type, context);
      return value;
    },
  };
  return type;
}

/** Decode `inner` and box it, so presence is visible after decoding (null and absence stay `null`). */
function present(inner: GoType): GoType {
  return {
    kind: 'custom',
    goName: inner.kind === 'custom' || inner.kind === 'slice' || inner.kind === 'map' || inner.kind === 'struct' ? inner.goName : inner.kind,
    decode(value, context): Present<unknown> {
      const key = String(context.at?.at(-1) ?? context.path.at(-1) ?? '');
      return { value: inner.kind === 'custom' ? inner.decode(value, context) : decodeGo(value, inner, null, context), key };
    },
  };
}

const whitelistFields = ['Subject', 'PublicKeyAlgorithm', 'PublicKey', 'SignatureAlgorithm', 'DNSNames', 'IPAddresses', 'EmailAddresses', 'URIs'];

/** `SigningProfile` in Go's field order (tagged fields, then the untagged exported ones). */
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
  { json: 'copy_extensions', prop: 'copyExtensions', type: goBool },
  { json: 'prev_auth_key', prop: 'prevAuthKeyName', type: goString },
  { json: 'remote', prop: 'remoteName', type: goString },
  { json: 'not_before', prop: 'notBefore', type: timeType },
  { json: 'not_after', prop: 'notAfter', type: timeType },
  { json: 'name_whitelist', prop: 'nameWhitelistString', type: goString },
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
  { json: 'ct_log_servers', prop: 'ctLogServers', type: present(goStringSlice) },
  { json: 'allowed_extensions', prop: 'allowedExtensions', type: { kind: 'slice', goName: '[]config.OID', elem: oidStringType } },
  { json: 'cert_store', prop: 'certStore', type: present(goString) },
  { json: 'lint_error_level', prop: 'lintErrorLevel', type: present(lintStatusType) },
  { json: 'ignored_lints', prop: 'ignoredLints', type: present(goStringSlice) },
  { json: 'ignored_lint_sources', prop: 'ignoredLintSources', type: present(goStringSlice) },
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
            json: 'Qualifiers',
            prop: 'qualifiers',
            type: {
              kind: 'slice',
              goName: '[]config.CertificatePolicyQualifier',
              elem: {
                kind: 'struct',
                goName: 'config.CertificatePolicyQualifier',
                structName: 'CertificatePolicyQualifier',
                fields: [
                  { json: 'Type', prop: 'type', type: goString },
                  { json: 'Value', prop: 'value', type: goString },
                ],
              },
            },
          },
        ],
      },
    },
  },
  { json: 'Expiry', prop: 'goExpiry', type: present(goDuration) },
  { json: 'Backdate', prop: 'goBackdate', type: present(goDuration) },
  { json: 'Provider', prop: 'provider', type: present(goInterface('auth.Provider')) },
  { json: 'PrevProvider', prop: 'prevProvider', type: present(goInterface('auth.Provider')) },
  { json: 'RemoteProvider', prop: 'remoteProvider', type: present(goInterface('auth.Provider')) },
  { json: 'RemoteServer', prop: 'remoteServer', type: present(goString) },
  { json: 'RemoteCAs', prop: 'remoteCas', type: present(opaqueStruct('x509.CertPool')) },
  { json: 'ClientCert', prop: 'clientCert', type: present(opaqueStruct('tls.Certificate')) },
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
  // Go 1.19/1.20 (CFSSL's go.mod says 1.20): a Regexp has only unexported fields, so only an object decodes.
  { json: 'NameWhitelist', prop: 'goNameWhitelist', type: present(opaqueStruct('regexp.Regexp')) },
  { json: 'ExtensionWhitelist', prop: 'extensionWhitelist', type: present({ kind: 'map', goName: 'map[string]bool', elem: goBool }) },
  { json: 'ClientProvidesSerialNumbers', prop: 'clientProvidesSerialNumbers', type: goBool },
  { json: 'LintRegistry', prop: 'lintRegistry', type: present(goInterface('lint.Registry')) },
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
    {
      json: 'ocsp',
      prop: 'ocsp',
      type: present({
        kind: 'struct',
        goName: 'config.Config',
        structName: 'Config',
        fields: [
          { json: 'CACertFile', prop: 'caCertFile', type: goString },
          { json: 'ResponderCertFile', prop: 'responderCertFile', type: goString },
          { json: 'KeyFile', prop: 'keyFile', type: goString },
          { json: 'Interval', prop: 'interval', type: goDuration },
        ],
      }),
    },
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

/** Top-level keys of a CFSSL config (lower-case), for callers that add keys of their own. */
export const CFSSL_CONFIG_KEYS: readonly string[] = ['signing', 'ocsp', 'auth_keys', 'remotes'];

/** The empty `Config` Go starts from. */
export function emptyRawConfig(): RawCfsslConfig {
  return { signing: null, ocsp: null, authKeys: null, remotes: null };
}

/** Options of {@link decodeCfsslConfig}. */
export interface DecodeCfsslConfigOptions {
  /** Top-level keys that are not CFSSL's but the caller's (certsmith's `signers`…): no unknown-key warning. */
  ownKeys?: readonly string[];
}

/**
 * Decode a parsed CFSSL config as Go's `json.Unmarshal(body, &cfg)` does, reporting every type
 * error as `failed to unmarshal configuration: <Go text>` at its path (CFSSL stops at the first)
 * and every key Go would ignore as a warning.
 */
export function decodeCfsslConfig(value: unknown, report: ConfigReport, options: DecodeCfsslConfigOptions = {}): RawCfsslConfig {
  const own = new Set((options.ownKeys ?? []).map((key) => key.toLowerCase()));
  const decoded = decodeGo(value, configType, null, {
    structName: 'Config',
    path: [],
    at: [],
    sink: {
      error: (error, at) => report.problem(at, `failed to unmarshal configuration: ${error.message}`),
      unknownKey: (at) => {
        if (at.length === 1 && own.has(String(at[0]).toLowerCase())) return;
        // The whole `ocsp` section is unused (one warning for it, unsupported-config-keys.ts).
        if (String(at[0]).toLowerCase() === 'ocsp') return;
        report.warning(at, 'unknown key, ignored (CFSSL ignores it too): check its spelling');
      },
    },
  });
  return (decoded ?? emptyRawConfig()) as RawCfsslConfig;
}
