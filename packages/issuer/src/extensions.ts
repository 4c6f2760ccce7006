/**
 * DER encodings of the X.509 extensions the issuer writes, matching Go's `crypto/x509` output
 * byte for byte (CFSSL certificates are made by Go): criticality omitted when false, KeyUsage as a
 * named bit string, BasicConstraints `SEQUENCE {}` for CA:FALSE, pathLen omitted when unlimited.
 */
import {
  derBoolean,
  derExplicit,
  derImplicit,
  derInteger,
  derNamedBitString,
  derOctetString,
  derOid,
  derSequence,
  derTlv,
  derExtension,
  derIa5String,
  derUtf8String,
  encodeIa5String,
} from '@certsmith/x509-core';

/** An extension ready to encode. */
export interface ExtensionSpec {
  oid: string;
  critical: boolean;
  /** extnValue contents (the DER inside the OCTET STRING). */
  value: Uint8Array;
}

/** Extension OIDs used here. */
export const ExtensionOid = {
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  basicConstraints: '2.5.29.19',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  subjectAltName: '2.5.29.17',
  certificatePolicies: '2.5.29.32',
  nameConstraints: '2.5.29.30',
  crlDistributionPoints: '2.5.29.31',
  ocspNoCheck: '1.3.6.1.5.5.7.48.1.5',
  /** CFSSL's delegation usage (`helpers.DelegationUsage`, draft-ietf-tls-subcerts). */
  delegationUsage: '1.3.6.1.4.1.44363.44',
} as const;

/** Encode one Extension SEQUENCE (Go omits `critical` when false: DEFAULT FALSE). */
export function encodeExtension(extension: ExtensionSpec): Uint8Array {
  return derExtension(extension.oid, extension.critical, extension.value);
}

/** KeyUsage (RFC 5280 4.2.1.3), critical as Go marks it. `bits`: bit 0 = digitalSignature. */
export function keyUsageExtension(bits: number): ExtensionSpec {
  return { oid: ExtensionOid.keyUsage, critical: true, value: derNamedBitString(bits) };
}

/** ExtendedKeyUsage (RFC 5280 4.2.1.12), non-critical, OIDs in the given order. */
export function extKeyUsageExtension(oids: readonly string[]): ExtensionSpec {
  return { oid: ExtensionOid.extKeyUsage, critical: false, value: derSequence(...oids.map((oid) => derOid(oid))) };
}

/**
 * BasicConstraints (RFC 5280 4.2.1.9), critical, always written by CFSSL. `pathLen` `null` =
 * unlimited (omitted); CA:FALSE encodes as an empty SEQUENCE (DEFAULT FALSE omitted).
 */
export function basicConstraintsExtension(isCa: boolean, pathLen: number | null): ExtensionSpec {
  const parts: Uint8Array[] = [];
  if (isCa) parts.push(derBoolean(true));
  if (pathLen !== null && pathLen >= 0) parts.push(derInteger(pathLen));
  return { oid: ExtensionOid.basicConstraints, critical: true, value: derSequence(...parts) };
}

/** SubjectKeyIdentifier (RFC 5280 4.2.1.2). */
export function subjectKeyIdExtension(keyId: Uint8Array): ExtensionSpec {
  return { oid: ExtensionOid.subjectKeyIdentifier, critical: false, value: derOctetString(keyId) };
}

/** AuthorityKeyIdentifier with keyIdentifier only (RFC 5280 4.2.1.1), as Go writes it. */
export function authorityKeyIdExtension(keyId: Uint8Array): ExtensionSpec {
  return { oid: ExtensionOid.authorityKeyIdentifier, critical: false, value: derSequence(derImplicit(0, keyId, false)) };
}

/** AuthorityInfoAccess (RFC 5280 4.2.2.1): OCSP entries first, then CA Issuers, as Go orders them. */
export function authorityInfoAccessExtension(ocspUrls: readonly string[], issuerUrls: readonly string[]): ExtensionSpec {
  const descriptions = [
    ...ocspUrls.map((url) => derSequence(derOid('1.3.6.1.5.5.7.48.1'), derImplicit(6, encodeIa5String(url), false))),
    ...issuerUrls.map((url) => derSequence(derOid('1.3.6.1.5.5.7.48.2'), derImplicit(6, encodeIa5String(url), false))),
  ];
  return { oid: ExtensionOid.authorityInfoAccess, critical: false, value: derSequence(...descriptions) };
}

/** SubjectAltName from encoded GeneralNames; critical when the subject is empty (RFC 5280 4.2.1.6, Go). */
export function subjectAltNameExtension(generalNames: Uint8Array, subjectIsEmpty: boolean): ExtensionSpec {
  return { oid: ExtensionOid.subjectAltName, critical: subjectIsEmpty, value: generalNames };
}

/** CRLDistributionPoints (RFC 5280 4.2.1.13): one DistributionPoint with a fullName URI per URL. */
export function crlDistributionPointsExtension(urls: readonly string[]): ExtensionSpec {
  const points = urls.map((url) => derSequence(derExplicit(0, derTlv(0xa0, derImplicit(6, encodeIa5String(url), false)))));
  return { oid: ExtensionOid.crlDistributionPoints, critical: false, value: derSequence(...points) };
}

/** A certificate policy from the CFSSL config (`Policies`). */
export interface CertificatePolicy {
  /** Dotted policy OID. */
  id: string;
  qualifiers: { type: 'id-qt-cps' | 'id-qt-unotice'; value: string }[];
}

/**
 * CertificatePolicies (RFC 5280 4.2.1.4) as CFSSL's `addPolicies` writes it: CPS qualifiers as
 * IA5String, user notices as `SEQUENCE { explicitText UTF8String }`, non-critical.
 */
export function certificatePoliciesExtension(policies: readonly CertificatePolicy[]): ExtensionSpec {
  const infos = policies.map((policy) => {
    const qualifiers = policy.qualifiers.map((qualifier) =>
      qualifier.type === 'id-qt-cps'
        ? derSequence(derOid('1.3.6.1.5.5.7.2.1'), derIa5String(qualifier.value))
        : derSequence(derOid('1.3.6.1.5.5.7.2.2'), derSequence(derUtf8String(qualifier.value))),
    );
    return qualifiers.length > 0 ? derSequence(derOid(policy.id), derSequence(...qualifiers)) : derSequence(derOid(policy.id));
  });
  return { oid: ExtensionOid.certificatePolicies, critical: false, value: derSequence(...infos) };
}

/** id-pkix-ocsp-nocheck (RFC 6960 4.2.2.2.1) with the NULL value CFSSL writes. */
export function ocspNoCheckExtension(): ExtensionSpec {
  return { oid: ExtensionOid.ocspNoCheck, critical: false, value: Uint8Array.of(0x05, 0x00) };
}

/** CFSSL's delegation usage extension (NULL value, non-critical). */
export function delegationUsageExtension(): ExtensionSpec {
  return { oid: ExtensionOid.delegationUsage, critical: false, value: Uint8Array.of(0x05, 0x00) };
}
