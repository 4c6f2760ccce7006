/**
 * Certificate facts in CFSSL's output formats (`bundler/bundle.go:Bundle.MarshalJSON`,
 * `helpers.KeyLength`, `helpers.SignatureString`; behaviour doc 2.9), computed from the parsed
 * {@link Certificate}. Pure functions of the model: safe on any thread, no caching.
 */
import { createHash } from 'node:crypto';
import type { Certificate, DistinguishedName, PublicKeyInfo } from './certificate-model.js';
import { Oid } from './oids.js';
import { toHex } from './parse-certificate.js';

/**
 * CFSSL's attribute names, looked up by the **4th arc** of the OID only (`names.MarshalJSON`), so
 * e.g. `2.5.4.3` and any other `x.y.z.3` print as `CommonName`; unlisted arcs print an empty name.
 */
const NAME_BY_FOURTH_ARC: Readonly<Record<string, string>> = {
  '3': 'CommonName',
  '5': 'SerialNumber',
  '6': 'Country',
  '7': 'Locality',
  '8': 'Province',
  '9': 'StreetAddress',
  '10': 'Organization',
  '11': 'OrganizationalUnit',
  '17': 'PostalCode',
};

function fourthArc(oid: string): string | undefined {
  let dot = -1;
  for (let i = 0; i < 3; i++) {
    dot = oid.indexOf('.', dot + 1);
    if (dot < 0) return undefined;
  }
  const next = oid.indexOf('.', dot + 1);
  return oid.slice(dot + 1, next < 0 ? undefined : next);
}

/**
 * CFSSL's subject/issuer string: `/Name=value` for every attribute in DER order, multi-valued RDNs
 * flattened, no escaping; unknown attribute types give `/=value` (e.g. emailAddress). OIDs with
 * fewer than four arcs (which crash CFSSL's marshaller) also get an empty name.
 *
 * @example formatDistinguishedName(cert.subject) // '/Country=US/Organization=Example/CommonName=example.com'
 */
export function formatDistinguishedName(name: DistinguishedName): string {
  let out = '';
  for (const rdn of name.rdns) {
    for (const attribute of rdn) {
      const arc = fourthArc(attribute.oid);
      out += `/${(arc !== undefined ? NAME_BY_FOURTH_ARC[arc] : undefined) ?? ''}=${attribute.value}`;
    }
  }
  return out;
}

/**
 * The name's common name as Go's `pkix.Name.CommonName` holds it: the value of the **last** CN
 * attribute in DER order, `''` when there is none.
 */
export function commonName(name: DistinguishedName): string {
  let value = '';
  for (const rdn of name.rdns) for (const attribute of rdn) if (attribute.oid === Oid.commonName) value = attribute.value;
  return value;
}

/**
 * CFSSL `key_size`: RSA modulus bits, ECDSA curve bits, **32 for Ed25519** (Go's
 * `ed25519.PublicKeySize`, in bytes), 0 otherwise (DSA included).
 */
export function keySize(cert: Certificate): number {
  switch (cert.publicKey.algorithm) {
    case 'RSA':
    case 'ECDSA':
      return cert.publicKey.bits;
    case 'Ed25519':
      return 32;
    default:
      return 0;
  }
}

/** CFSSL `key_type`: `2048-bit RSA`, `256-bit ECDSA`, `Ed25519`, `DSA` or `Unknown`. */
export function keyTypeString(cert: Certificate): string {
  switch (cert.publicKey.algorithm) {
    case 'RSA':
      return `${keySize(cert)}-bit RSA`;
    case 'ECDSA':
      return `${keySize(cert)}-bit ECDSA`;
    case 'Ed25519':
      return 'Ed25519';
    case 'DSA':
      return 'DSA';
    default:
      return 'Unknown';
  }
}

/** CFSSL `signature`: the signature algorithm's CFSSL name (`SHA256WithRSA`, …, `Unknown Signature`). */
export function signatureString(cert: Certificate): string {
  return cert.signatureAlgorithm.name;
}

/**
 * A time as Go's `time.Time` JSON form in UTC (RFC 3339 with `Z`): fractional seconds only when
 * non-zero, without trailing zeros, e.g. `2027-03-12T23:59:59Z`, `2027-03-12T23:59:59.5Z`.
 */
export function formatExpiry(date: Date): string {
  const iso = date.toISOString(); // always YYYY-MM-DDTHH:MM:SS.sssZ for years 0–9999
  // Whole seconds (every certificate time): no regular expression (docs/performance.md#bundle-cpu-per-request).
  if (iso.charCodeAt(20) === 0x30 && iso.charCodeAt(21) === 0x30 && iso.charCodeAt(22) === 0x30) return `${iso.slice(0, 19)}Z`;
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
}

/**
 * CFSSL `hostnames`: the subject CN (if non-empty) and the DNS SANs, deduplicated, CN first then SAN
 * order (CFSSL's order is random — a Go map — so any stable order is compatible). IP, email and URI
 * SANs are not included.
 */
export function certificateHostnames(cert: Certificate): string[] {
  const names = new Set<string>();
  const cn = commonName(cert.subject);
  if (cn !== '') names.add(cn);
  for (const dns of cert.subjectAltNames.dns) names.add(dns);
  return [...names];
}

/** Upper-case hex of the subject key identifier extension, `''` when absent (CFSSL's SKI strings). */
export function subjectKeyIdHex(cert: Certificate): string {
  return cert.subjectKeyId === null ? '' : toHex(cert.subjectKeyId).toUpperCase();
}

/**
 * RFC 5280 4.2.1.2 method 1, as CFSSL/Go compute the SKI of issued certificates: SHA-1 of the
 * subjectPublicKey BIT STRING contents (not of the whole SPKI).
 */
export function computeSubjectKeyId(publicKey: PublicKeyInfo): Uint8Array {
  return new Uint8Array(createHash('sha1').update(publicKey.subjectPublicKey).digest());
}

/**
 * Lower-case hex SHA-1 of the whole SubjectPublicKeyInfo DER: how CFSSL's platform keystores
 * (ubiquity metadata) identify roots.
 */
export function spkiSha1Hex(certOrKey: Certificate | PublicKeyInfo): string {
  const publicKey = 'publicKey' in certOrKey ? certOrKey.publicKey : certOrKey;
  return createHash('sha1').update(publicKey.spki).digest('hex');
}

/** CFSSL `ocsp_support`: the certificate lists at least one OCSP URL in its AIA. */
export function ocspSupport(cert: Certificate): boolean {
  return cert.ocspUrls.length > 0;
}

/** CFSSL `crl_support`: the certificate lists at least one CRL distribution point URI. */
export function crlSupport(cert: Certificate): boolean {
  return cert.crlDistributionPoints.length > 0;
}

/** CFSSL `ocsp`: the OCSP URLs, or `null` when there are none (Go's nil slice). */
export function ocspServers(cert: Certificate): string[] | null {
  return cert.ocspUrls.length > 0 ? [...cert.ocspUrls] : null;
}
