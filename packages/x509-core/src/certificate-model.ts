/**
 * The parsed form of an X.509 certificate that every certsmith package works with. It is plain data
 * (structured-clone safe, so it can cross worker boundaries) produced by `parseCertificate` from DER.
 * Derived CFSSL-format facts (subject strings, key_type, signature names…) are computed from it by
 * the functions in `certificate-facts.ts`.
 */

/** Public key algorithm families CFSSL distinguishes (`helpers.KeyType`-like). */
export type KeyAlgorithm = 'RSA' | 'ECDSA' | 'Ed25519' | 'Ed448' | 'DSA' | 'Unknown';

/** Hash of a signature algorithm; `null` for pure EdDSA. */
export type HashAlgorithm = 'MD2' | 'MD5' | 'SHA1' | 'SHA224' | 'SHA256' | 'SHA384' | 'SHA512';

/** One attribute of a distinguished name, e.g. `{ oid: '2.5.4.3', value: 'example.com' }`. */
export interface NameAttribute {
  oid: string;
  value: string;
}

/** A distinguished name: the raw DER (used for issuer/subject matching) and its RDNs in DER order. */
export interface DistinguishedName {
  /** DER of the Name SEQUENCE, byte-exact as in the certificate (RFC 5280 7.1 matching uses it). */
  der: Uint8Array;
  /** RDNs in DER order; each RDN is a SET of one or more attributes. */
  rdns: NameAttribute[][];
}

/** SubjectPublicKeyInfo facts. */
export interface PublicKeyInfo {
  algorithm: KeyAlgorithm;
  /** OID of the SPKI algorithm (rsaEncryption, id-ecPublicKey, id-Ed25519…). */
  algorithmOid: string;
  /** RSA: modulus bits. ECDSA: curve bits (256/384/521). Ed25519: 256. Others: 0. */
  bits: number;
  /** ECDSA named curve (`P-256`, `P-384`, `P-521`), or the curve OID when unknown; `null` otherwise. */
  curve: string | null;
  /** Full SubjectPublicKeyInfo DER (platform keystores match roots by its SHA-1). */
  spki: Uint8Array;
  /** Contents of the subjectPublicKey BIT STRING (the SKI of RFC 5280 4.2.1.2 method 1 hashes these). */
  subjectPublicKey: Uint8Array;
}

/** Signature algorithm facts. */
export interface SignatureAlgorithmInfo {
  oid: string;
  /** CFSSL's spelling (`SHA256WithRSA`, `ECDSAWithSHA384`, `Ed25519`, `Unknown Signature`). */
  name: string;
  /** Hash used, `null` for pure EdDSA or unknown algorithms. */
  hash: HashAlgorithm | null;
  /** Key algorithm the signature is made with. */
  keyAlgorithm: KeyAlgorithm;
  /** True for RSASSA-PSS. */
  pss: boolean;
  /**
   * RSASSA-PSS parameters (RFC 4055 3.1) when `pss` is true and they could be read (defaults
   * applied: SHA-1, MGF1-SHA-1, salt 20); `null`/absent otherwise. Needed to verify PSS signatures.
   */
  pssParameters?: PssParameters | null;
}

/** RSASSA-PSS-params (RFC 4055 3.1) with DEFAULTs filled in. */
export interface PssParameters {
  hash: HashAlgorithm;
  /** Hash of MGF1 (only MGF1 is defined). */
  mgf1Hash: HashAlgorithm;
  saltLength: number;
}

/** Basic constraints extension (RFC 5280 4.2.1.9). */
export interface BasicConstraints {
  ca: boolean;
  /** `null` when absent (no limit). */
  pathLenConstraint: number | null;
}

/**
 * Subject alternative names, grouped by kind, in certificate order. IPs are in Go's `net.IP.String`
 * form (what CFSSL prints and compares): dotted quad for IPv4 and IPv4-mapped IPv6, RFC 5952 for
 * other IPv6 (lower case, longest run of ≥2 zero groups as `::`, e.g. `::1`, `2001:db8::1`).
 */
export interface SubjectAltNames {
  dns: string[];
  email: string[];
  ip: string[];
  uri: string[];
}

/** One extension as found in the certificate. */
export interface CertificateExtension {
  oid: string;
  critical: boolean;
  /** Contents of the extnValue OCTET STRING. */
  value: Uint8Array;
}

/** A parsed X.509 v1/v3 certificate. */
export interface Certificate {
  /** Whole certificate DER. */
  der: Uint8Array;
  /** TBSCertificate DER (the signed bytes). */
  tbs: Uint8Array;
  /** 1, 2 or 3. */
  version: number;
  /** Serial number as lower-case hex of its DER INTEGER content bytes (sign byte included as in DER). */
  serialNumberHex: string;
  signatureAlgorithm: SignatureAlgorithmInfo;
  /** Contents of the signatureValue BIT STRING. */
  signature: Uint8Array;
  issuer: DistinguishedName;
  subject: DistinguishedName;
  notBefore: Date;
  notAfter: Date;
  publicKey: PublicKeyInfo;
  extensions: CertificateExtension[];
  /** Subject key identifier extension value, `null` when absent. */
  subjectKeyId: Uint8Array | null;
  /** keyIdentifier of the authority key identifier extension, `null` when absent. */
  authorityKeyId: Uint8Array | null;
  basicConstraints: BasicConstraints | null;
  /** KeyUsage bits as a number (bit 0 = digitalSignature … bit 8 = decipherOnly), `null` when absent. */
  keyUsage: number | null;
  /** Extended key usage OIDs, `null` when absent. */
  extKeyUsage: string[] | null;
  subjectAltNames: SubjectAltNames;
  /** OCSP URLs from Authority Information Access. */
  ocspUrls: string[];
  /** CA Issuers URLs from Authority Information Access (used for AIA chasing). */
  caIssuerUrls: string[];
  /** URIs from CRL distribution points. */
  crlDistributionPoints: string[];
  /** OIDs of critical extensions this parser does not understand (path validation must reject them). */
  unhandledCriticalExtensions: string[];
  /** Policy OIDs of the certificate policies extension (RFC 5280 4.2.1.4), `null` when absent. */
  certificatePolicies?: string[] | null;
  /** Name constraints (RFC 5280 4.2.1.10), `null` when absent. */
  nameConstraints?: NameConstraints | null;
}

/**
 * Name constraints by kind. IP entries are `address/prefix` CIDR text (canonical address form as
 * in {@link SubjectAltNames}); DNS/email/URI entries are the constraint strings as encoded.
 */
export interface NameConstraints {
  critical: boolean;
  permitted: SubjectAltNames;
  excluded: SubjectAltNames;
  /** True when a subtree uses a name form not listed above (directoryName, otherName…). */
  hasUnsupportedForms: boolean;
}
