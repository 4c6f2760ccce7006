/**
 * Object identifiers x509-core recognises, in dotted form. Tables keyed by OID (signature
 * algorithms, curves, hashes) live next to the code that uses them; this file only names OIDs so
 * that other packages (chain-builder, issuer) spell them the same way.
 */
export const Oid = {
  // Public key algorithms (RFC 3279, RFC 5480, RFC 8410, RFC 4055)
  rsaEncryption: '1.2.840.113549.1.1.1',
  rsassaPss: '1.2.840.113549.1.1.10',
  ecPublicKey: '1.2.840.10045.2.1',
  dsa: '1.2.840.10040.4.1',
  ed25519: '1.3.101.112',
  ed448: '1.3.101.113',
  // Named curves (RFC 5480 2.1.1.1)
  secp224r1: '1.3.132.0.33',
  prime256v1: '1.2.840.10045.3.1.7',
  secp384r1: '1.3.132.0.34',
  secp521r1: '1.3.132.0.35',
  // Hashes
  md2: '1.2.840.113549.2.2',
  md5: '1.2.840.113549.2.5',
  sha1: '1.3.14.3.2.26',
  sha224: '2.16.840.1.101.3.4.2.4',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  mgf1: '1.2.840.113549.1.1.8',
  // Certificate extensions (RFC 5280 4.2)
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  issuerAltName: '2.5.29.18',
  basicConstraints: '2.5.29.19',
  nameConstraints: '2.5.29.30',
  crlDistributionPoints: '2.5.29.31',
  certificatePolicies: '2.5.29.32',
  policyMappings: '2.5.29.33',
  authorityKeyIdentifier: '2.5.29.35',
  policyConstraints: '2.5.29.36',
  extKeyUsage: '2.5.29.37',
  inhibitAnyPolicy: '2.5.29.54',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  // Access methods (RFC 5280 4.2.2.1)
  accessOcsp: '1.3.6.1.5.5.7.48.1',
  accessCaIssuers: '1.3.6.1.5.5.7.48.2',
  ocspNoCheck: '1.3.6.1.5.5.7.48.1.5',
  // Extended key usages (RFC 5280 4.2.1.12)
  anyExtendedKeyUsage: '2.5.29.37.0',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
  codeSigning: '1.3.6.1.5.5.7.3.3',
  emailProtection: '1.3.6.1.5.5.7.3.4',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  ocspSigning: '1.3.6.1.5.5.7.3.9',
  // Name attributes (X.520, PKCS#9)
  commonName: '2.5.4.3',
  serialNumber: '2.5.4.5',
  countryName: '2.5.4.6',
  localityName: '2.5.4.7',
  stateOrProvinceName: '2.5.4.8',
  streetAddress: '2.5.4.9',
  organizationName: '2.5.4.10',
  organizationalUnitName: '2.5.4.11',
  postalCode: '2.5.4.17',
  emailAddress: '1.2.840.113549.1.9.1',
  // PKCS#9 / PKCS#10 attributes, PKCS#7 content types
  extensionRequest: '1.2.840.113549.1.9.14',
  challengePassword: '1.2.840.113549.1.9.7',
  pkcs7Data: '1.2.840.113549.1.7.1',
  pkcs7SignedData: '1.2.840.113549.1.7.2',
} as const;

/**
 * OIDs that recur in nearly every certificate (besides {@link Oid}): signature algorithms, X.520 and
 * domain-component name attributes, CA/Browser Forum and common CA policies, CT, Microsoft and
 * Netscape extensions. The DER reader interns these (see `decodeOid`) so the hot path returns a
 * constant string instead of building one.
 */
export const COMMON_OIDS: readonly string[] = [
  ...Object.values(Oid),
  // Signature algorithms (RFC 3279, 4055, 5758, 8410)
  '1.2.840.113549.1.1.2',
  '1.2.840.113549.1.1.4',
  '1.2.840.113549.1.1.5',
  '1.3.14.3.2.29',
  '1.2.840.113549.1.1.11',
  '1.2.840.113549.1.1.12',
  '1.2.840.113549.1.1.13',
  '1.2.840.113549.1.1.14',
  '1.2.840.10040.4.3',
  '2.16.840.1.101.3.4.3.2',
  '1.2.840.10045.4.1',
  '1.2.840.10045.4.3.1',
  '1.2.840.10045.4.3.2',
  '1.2.840.10045.4.3.3',
  '1.2.840.10045.4.3.4',
  // Name attributes (X.520 2.5.4.x, RFC 4519, EV jurisdiction, domainComponent, userId)
  ...[4, 12, 13, 15, 16, 41, 42, 43, 44, 45, 46, 65, 97].map((arc) => `2.5.4.${arc}`),
  '1.3.6.1.4.1.311.60.2.1.1',
  '1.3.6.1.4.1.311.60.2.1.2',
  '1.3.6.1.4.1.311.60.2.1.3',
  '0.9.2342.19200300.100.1.25',
  '0.9.2342.19200300.100.1.1',
  // Policies (CA/B Forum, anyPolicy, CPS/user notice qualifiers)
  '2.5.29.32.0',
  '2.23.140.1.1',
  '2.23.140.1.2.1',
  '2.23.140.1.2.2',
  '2.23.140.1.2.3',
  '2.23.140.1.3',
  '2.23.140.1.31',
  '1.3.6.1.5.5.7.2.1',
  '1.3.6.1.5.5.7.2.2',
  // Certificate Transparency (RFC 6962 3.1, 3.3), Microsoft and Netscape extensions
  '1.3.6.1.4.1.11129.2.4.2',
  '1.3.6.1.4.1.11129.2.4.3',
  '1.3.6.1.4.1.311.20.2',
  '1.3.6.1.4.1.311.21.1',
  '1.3.6.1.4.1.311.21.2',
  '1.3.6.1.4.1.311.21.7',
  '1.3.6.1.4.1.311.21.10',
  '2.16.840.1.113730.1.1',
  '2.16.840.1.113730.1.13',
  '2.5.29.1',
  '2.5.29.3',
  '2.5.29.4',
  '2.5.29.16',
  '1.3.6.1.5.5.7.1.3',
  '1.3.6.1.5.5.7.1.11',
  '1.3.6.1.5.5.7.1.12',
  '1.3.6.1.5.5.7.1.24',
];
