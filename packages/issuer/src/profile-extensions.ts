/**
 * A signing profile's constant extensions, encoded once when the policy is loaded so that issuing
 * a certificate only encodes what varies per request. Like cfssl `signer.FillTemplate`, the OCSP,
 * CRL and issuer URLs of a profile fall back to the default profile's.
 */
import type { ExtensionSpec } from './extensions.js';
import {
  authorityInfoAccessExtension,
  basicConstraintsExtension,
  certificatePoliciesExtension,
  crlDistributionPointsExtension,
  extKeyUsageExtension,
  keyUsageExtension,
  ocspNoCheckExtension,
} from './extensions.js';
import type { EncodedProfileExtensions, SigningProfile } from './signing-policy.js';

/** A profile before its extensions are encoded. */
export type ProfileWithoutExtensions = Omit<SigningProfile, 'encoded'>;

/** Encode `profile`'s constant extensions (`fallback` = the default profile) and freeze it. */
export function encodeProfileExtensions(profile: ProfileWithoutExtensions, fallback: ProfileWithoutExtensions): SigningProfile {
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
