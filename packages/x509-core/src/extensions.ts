/**
 * Certificate extension decoding (RFC 5280 4.2): the extensions the model exposes as fields, with
 * Go's rules for what counts as handled when critical. Shared by certificates and CSRs.
 */
import type { BasicConstraints, Certificate, CertificateExtension, NameConstraints, SubjectAltNames } from './certificate-model.js';
import {
  DerReader,
  decodeLatin1,
  decodeOid,
  isAscii,
  readBitString,
  readBoolean,
  readOctetString,
  readOid,
  readElement,
  readSmallInteger,
} from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { derBoolean, derOctetString, derOid, derSequence } from './der-writer.js';
import { DerDecodeError, DerEncodeError } from './errors.js';
import { GeneralNameTag, emptySubjectAltNames, formatIpAddress, readGeneralNames } from './general-name.js';
import { Oid } from './oids.js';

/**
 * Extensions Go 1.19 (the CFSSL reference binary) processes; a critical extension outside this set
 * is listed in `unhandledCriticalExtensions` and fails path validation (RFC 5280 4.2). SAN and name
 * constraints are handled only conditionally (see below).
 */
const HANDLED_EXTENSIONS: ReadonlySet<string> = new Set([
  Oid.keyUsage,
  Oid.basicConstraints,
  Oid.crlDistributionPoints,
  Oid.authorityKeyIdentifier,
  Oid.extKeyUsage,
  Oid.subjectKeyIdentifier,
  Oid.certificatePolicies,
  Oid.authorityInfoAccess,
]);

/** The extension-derived fields of the model, filled while walking the extensions. */
export type ExtensionFacts = Pick<
  Certificate,
  | 'subjectKeyId'
  | 'authorityKeyId'
  | 'basicConstraints'
  | 'keyUsage'
  | 'extKeyUsage'
  | 'subjectAltNames'
  | 'ocspUrls'
  | 'caIssuerUrls'
  | 'crlDistributionPoints'
  | 'unhandledCriticalExtensions'
  | 'certificatePolicies'
  | 'nameConstraints'
>;

/** A reader over the contents of an extnValue OCTET STRING, in the certificate's own buffer. */
function valueReader(bytes: Uint8Array, value: DerElement, parent: DerReader): DerReader {
  return new DerReader(bytes, value.valueStart, value.end, parent.depth + 1);
}

/** RFC 5280 4.2.1.3: KeyUsage named bits 0..8 → bit i of the number (Go reads the same nine). */
function readKeyUsage(bytes: Uint8Array, reader: DerReader): number {
  const bits = readBitString(bytes, reader.expect(0x03, 'KeyUsage'));
  reader.finish('KeyUsage');
  let usage = 0;
  for (let bit = 0; bit < 9; bit++) {
    const octet = bits.bytes[bit >> 3];
    if (octet !== undefined && octet & (0x80 >> (bit & 7))) usage |= 1 << bit;
  }
  return usage;
}

/** RFC 5280 4.2.1.9. An absent pathLenConstraint is `null` (no limit). */
function readBasicConstraints(bytes: Uint8Array, reader: DerReader): BasicConstraints {
  const seq = reader.sequence('BasicConstraints');
  reader.finish('BasicConstraints');
  const caElement = seq.optional(0x01);
  const ca = caElement ? readBoolean(bytes, caElement) : false;
  const pathElement = seq.optional(0x02);
  const pathLenConstraint = pathElement ? readSmallInteger(bytes, pathElement) : null;
  seq.finish('BasicConstraints');
  return { ca, pathLenConstraint };
}

/** RFC 5280 4.2.2.1: OCSP and caIssuers URIs (other access methods and name forms ignored, as Go). */
function readAuthorityInfoAccess(bytes: Uint8Array, reader: DerReader, facts: ExtensionFacts): void {
  const seq = reader.sequence('AuthorityInfoAccessSyntax');
  reader.finish('AuthorityInfoAccessSyntax');
  while (seq.hasMore()) {
    const description = seq.sequence('AccessDescription');
    const method = readOid(bytes, description.expect(0x06, 'accessMethod'));
    const location = description.read();
    description.finish('AccessDescription');
    if (location.tag !== GeneralNameTag.uniformResourceIdentifier) continue;
    if (!isAscii(bytes, location.valueStart, location.end)) throw new DerDecodeError('AIA URI is not IA5', location.start);
    const uri = decodeLatin1(bytes, location.valueStart, location.end);
    if (method === Oid.accessOcsp) facts.ocspUrls.push(uri);
    else if (method === Oid.accessCaIssuers) facts.caIssuerUrls.push(uri);
  }
}

/** RFC 5280 4.2.1.13: the URIs of every distributionPoint fullName (relative names ignored, as Go). */
function readCrlDistributionPoints(bytes: Uint8Array, reader: DerReader, into: string[]): void {
  const seq = reader.sequence('CRLDistributionPoints');
  reader.finish('CRLDistributionPoints');
  while (seq.hasMore()) {
    const point = seq.sequence('DistributionPoint');
    const name = point.optional(0xa0);
    if (name) {
      const nameReader = point.enter(name);
      const fullName = nameReader.optional(0xa0);
      if (fullName) {
        const sans = emptySubjectAltNames();
        readGeneralNames(bytes, nameReader.enter(fullName), sans);
        into.push(...sans.uri);
      }
    }
  }
}

/** RFC 5280 4.2.1.4: policy OIDs (qualifiers are not needed by anything downstream). */
function readCertificatePolicies(bytes: Uint8Array, reader: DerReader): string[] {
  const seq = reader.sequence('CertificatePolicies');
  reader.finish('CertificatePolicies');
  const policies: string[] = [];
  while (seq.hasMore()) {
    const info = seq.sequence('PolicyInformation');
    policies.push(readOid(bytes, info.expect(0x06, 'policyIdentifier')));
  }
  return policies;
}

/** Prefix length of a contiguous netmask; throws for a non-contiguous one (Go refuses those too). */
function maskPrefixLength(mask: Uint8Array): number {
  let prefix = 0;
  let ended = false;
  for (const octet of mask) {
    for (let bit = 7; bit >= 0; bit--) {
      if (octet & (1 << bit)) {
        if (ended) throw new DerDecodeError('non-contiguous IP constraint mask', 0);
        prefix++;
      } else {
        ended = true;
      }
    }
  }
  return prefix;
}

function readSubtrees(bytes: Uint8Array, reader: DerReader, into: SubjectAltNames): boolean {
  let unsupported = false;
  while (reader.hasMore()) {
    const subtree = reader.sequence('GeneralSubtree');
    const base = subtree.read();
    switch (base.tag) {
      case GeneralNameTag.dNSName:
      case GeneralNameTag.rfc822Name:
      case GeneralNameTag.uniformResourceIdentifier: {
        if (!isAscii(bytes, base.valueStart, base.end)) throw new DerDecodeError('name constraint is not IA5', base.start);
        const text = decodeLatin1(bytes, base.valueStart, base.end);
        const bucket = base.tag === GeneralNameTag.dNSName ? into.dns : base.tag === GeneralNameTag.rfc822Name ? into.email : into.uri;
        bucket.push(text);
        break;
      }
      case GeneralNameTag.iPAddress: {
        // RFC 5280 4.2.1.10: address followed by mask, 8 octets for IPv4, 32 for IPv6.
        const length = base.end - base.valueStart;
        if (length !== 8 && length !== 32) throw new DerDecodeError('IP name constraint of invalid length', base.start);
        const half = length / 2;
        const address = bytes.subarray(base.valueStart, base.valueStart + half);
        const prefix = maskPrefixLength(bytes.subarray(base.valueStart + half, base.end));
        into.ip.push(`${half === 4 ? formatIpAddress(address) : formatIpv6Strict(address)}/${prefix}`);
        break;
      }
      default:
        unsupported = true;
        break;
    }
  }
  return unsupported;
}

/** IPv6 text for constraints: never collapse IPv4-mapped form to dotted (the prefix would be wrong). */
function formatIpv6Strict(address: Uint8Array): string {
  const text = formatIpAddress(address);
  return text.includes(':') ? text : `::ffff:${text}`;
}

/** RFC 5280 4.2.1.10. Go refuses a name constraints extension with neither subtree list. */
function readNameConstraints(bytes: Uint8Array, reader: DerReader, critical: boolean): NameConstraints {
  const seq = reader.sequence('NameConstraints');
  reader.finish('NameConstraints');
  const permittedElement = seq.optional(0xa0);
  const excludedElement = seq.optional(0xa1);
  seq.finish('NameConstraints');
  const hasPermitted = permittedElement !== null && permittedElement.end > permittedElement.valueStart;
  const hasExcluded = excludedElement !== null && excludedElement.end > excludedElement.valueStart;
  if (!hasPermitted && !hasExcluded) throw new DerDecodeError('empty name constraints extension', seq.end);
  const permitted = emptySubjectAltNames();
  const excluded = emptySubjectAltNames();
  let unsupported = false;
  if (permittedElement) unsupported = readSubtrees(bytes, seq.enter(permittedElement), permitted) || unsupported;
  if (excludedElement) unsupported = readSubtrees(bytes, seq.enter(excludedElement), excluded) || unsupported;
  return { critical, permitted, excluded, hasUnsupportedForms: unsupported };
}

/**
 * Walk an `Extensions` SEQUENCE (RFC 5280 4.1.2.9; also a CSR's extensionRequest) given as a reader
 * over its contents, filling `facts` and returning every extension raw, in order. Duplicate
 * extensions and malformed known extensions throw DerDecodeError, as Go refuses them.
 */
export function readExtensions(bytes: Uint8Array, reader: DerReader, facts: ExtensionFacts): CertificateExtension[] {
  const extensions: CertificateExtension[] = [];
  while (reader.hasMore()) {
    const ext = reader.sequence('Extension');
    const oidElement = ext.expect(0x06, 'extnID');
    const oid = decodeOid(bytes, oidElement.valueStart, oidElement.end);
    const criticalElement = ext.optional(0x01);
    const critical = criticalElement ? readBoolean(bytes, criticalElement) : false;
    const valueElement = ext.expect(0x04, 'extnValue');
    ext.finish('Extension');
    for (const seen of extensions) {
      if (seen.oid === oid) throw new DerDecodeError(`duplicate extension ${oid}`, oidElement.start);
    }
    extensions.push({ oid, critical, value: readOctetString(bytes, valueElement) });

    const value = valueReader(bytes, valueElement, ext);
    let handled = HANDLED_EXTENSIONS.has(oid);
    switch (oid) {
      case Oid.subjectKeyIdentifier:
        facts.subjectKeyId = readOctetString(bytes, value.expect(0x04, 'SubjectKeyIdentifier'));
        value.finish('SubjectKeyIdentifier');
        break;
      case Oid.authorityKeyIdentifier: {
        const seq = value.sequence('AuthorityKeyIdentifier');
        value.finish('AuthorityKeyIdentifier');
        const keyId = seq.optional(0x80);
        if (keyId) facts.authorityKeyId = readOctetString(bytes, keyId, 0x80);
        break;
      }
      case Oid.basicConstraints:
        facts.basicConstraints = readBasicConstraints(bytes, value);
        break;
      case Oid.keyUsage:
        facts.keyUsage = readKeyUsage(bytes, value);
        break;
      case Oid.extKeyUsage: {
        const seq = value.sequence('ExtKeyUsageSyntax');
        value.finish('ExtKeyUsageSyntax');
        const usages: string[] = [];
        while (seq.hasMore()) usages.push(readOid(bytes, seq.expect(0x06, 'KeyPurposeId')));
        facts.extKeyUsage = usages;
        break;
      }
      case Oid.subjectAltName: {
        const seq = value.sequence('SubjectAltName');
        value.finish('SubjectAltName');
        const sans = facts.subjectAltNames;
        readGeneralNames(bytes, seq, sans);
        // Go treats a SAN with none of the four supported forms as unhandled (critical check applies).
        handled = sans.dns.length + sans.email.length + sans.ip.length + sans.uri.length > 0;
        break;
      }
      case Oid.authorityInfoAccess:
        readAuthorityInfoAccess(bytes, value, facts);
        break;
      case Oid.crlDistributionPoints:
        readCrlDistributionPoints(bytes, value, facts.crlDistributionPoints);
        break;
      case Oid.certificatePolicies:
        facts.certificatePolicies = readCertificatePolicies(bytes, value);
        break;
      case Oid.nameConstraints: {
        const constraints = readNameConstraints(bytes, value, critical);
        facts.nameConstraints = constraints;
        handled = !constraints.hasUnsupportedForms;
        break;
      }
      default:
        break;
    }
    if (critical && !handled) facts.unhandledCriticalExtensions.push(oid);
  }
  return extensions;
}

/** Fresh facts with every extension absent. */
export function emptyExtensionFacts(): ExtensionFacts {
  return {
    subjectKeyId: null,
    authorityKeyId: null,
    basicConstraints: null,
    keyUsage: null,
    extKeyUsage: null,
    subjectAltNames: emptySubjectAltNames(),
    ocspUrls: [],
    caIssuerUrls: [],
    crlDistributionPoints: [],
    unhandledCriticalExtensions: [],
    certificatePolicies: null,
    nameConstraints: null,
  };
}

/** Extensions {@link readExtensions} decodes (and so refuses when malformed). */
const DECODED_EXTENSIONS: ReadonlySet<string> = new Set([...HANDLED_EXTENSIONS, Oid.subjectAltName, Oid.nameConstraints]);

/**
 * One Extension (RFC 5280 4.1): DER omits a default-valued BOOLEAN (X.690 11.5), so `critical` is
 * written only when true. The value must be exactly one DER element (extnValue holds the DER of one
 * ASN.1 value), and for the extensions certsmith decodes (SAN, key usage, basic constraints, AIA…)
 * a well-formed one: certsmith never writes a certificate or CSR its own parser — and Go's — would
 * refuse. Anything else is a {@link DerEncodeError} naming the extension.
 */
export function derExtension(oid: string, critical: boolean, value: Uint8Array): Uint8Array {
  const oidDer = derOid(oid);
  if (!(value instanceof Uint8Array)) throw new DerEncodeError(`extension ${oid}: value must be bytes`);
  let valueEnd: number;
  try {
    valueEnd = value.length === 0 ? -1 : readElement(value, 0).end;
  } catch {
    valueEnd = -1;
  }
  if (valueEnd !== value.length) throw new DerEncodeError(`extension ${oid}: value is not one DER element`);
  const encoded = critical
    ? derSequence(oidDer, derBoolean(true), derOctetString(value))
    : derSequence(oidDer, derOctetString(value));
  if (DECODED_EXTENSIONS.has(oid)) {
    try {
      readExtensions(encoded, new DerReader(encoded), emptyExtensionFacts());
    } catch (error) {
      if (!(error instanceof DerDecodeError)) throw error;
      throw new DerEncodeError(`extension ${oid}: malformed value (${error.message})`, { cause: error });
    }
  }
  return encoded;
}
