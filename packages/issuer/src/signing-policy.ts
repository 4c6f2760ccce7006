/**
 * The CFSSL signing policy as certsmith uses it (`config/config.go`, behaviour doc 3.6): profiles
 * with their usages, validity, URLs, constraints and auth keys already resolved and their constant
 * extensions already encoded, and the choice of a profile for a request. Reading one from CFSSL's
 * JSON is `signing-policy-loader.ts`; the Go struct shapes are `cfssl-config-schema.ts`.
 */
import { Oid } from '@certsmith/x509-core';

import type { AuthKey, CaConstraint, CsrWhitelist } from './cfssl-config-schema.js';
import type { CertificatePolicy, ExtensionSpec } from './extensions.js';
import type { GoRegexp } from './go-regexp.js';
import { UnknownProfileError } from './errors.js';

export type { AuthKey, CaConstraint, CsrWhitelist } from './cfssl-config-schema.js';

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
  /** `name_whitelist` compiled as a Go (RE2) regexp; match with `matchGoRegexp`. */
  readonly nameWhitelist: GoRegexp | null;
  readonly copyExtensions: boolean;
  /** Dotted OIDs a sign request may add (`allowed_extensions`). */
  readonly allowedExtensions: readonly string[];
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
