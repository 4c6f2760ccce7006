/**
 * X.509 Names built the way CFSSL/Go build them (behaviour doc 3.4; Go `pkix.Name.ToRDNSequence`):
 * values of each standard type are collected across all `names` entries in input order and encoded
 * as one multi-valued RDN per type (AVAs sorted by DER, `C=GB+C=US`), in the fixed order C, ST, L,
 * street, postalCode, O, OU, CN, serialNumber, followed by every extra attribute (OID map entries,
 * then E, per names entry) as its own RDN. A standard type that also appears among the extras is
 * dropped in favour of the extra, as Go does. Strings are PrintableString when possible, else
 * UTF8String.
 *
 * The issuer encodes request and certificate subjects with this; HSM administration encodes the
 * subject of the CA certificate and CSR it makes on a token with it, so both agree byte for byte.
 */
import type { NameAttribute } from './certificate-model.js';
import { derDirectoryString, derOid, derSequence, derSetOf } from './der-writer.js';
import { CsrBadRequestError } from './errors.js';
import { Oid } from './oids.js';

/**
 * One entry of a CFSSL request's `names` (cfssl `csr.Name`): every member optional, empty strings
 * are skipped. Structurally the same as the signer contract's `SubjectName`.
 */
export interface NameEntry {
  C?: string | undefined;
  ST?: string | undefined;
  L?: string | undefined;
  O?: string | undefined;
  OU?: string | undefined;
  /** emailAddress (1.2.840.113549.1.9.1), appended after the standard attributes. */
  E?: string | undefined;
  /** Accepted and ignored, as CFSSL does (the subject's serialNumber is a request-level field). */
  SerialNumber?: string | undefined;
  /** Extra attributes by dotted OID, appended in order. */
  OID?: Record<string, string> | undefined;
}

/** A subject in Go's `pkix.Name` shape: standard lists plus extra attributes in order. */
export interface SubjectAttributes {
  country: string[];
  province: string[];
  locality: string[];
  streetAddress: string[];
  postalCode: string[];
  organization: string[];
  organizationalUnit: string[];
  commonName: string;
  serialNumber: string;
  /** Non-standard attributes (emailAddress, custom OIDs), each encoded as its own RDN. */
  extra: NameAttribute[];
}

/** Attribute types Go's `pkix.Name` has fields for (they are re-read into those fields). */
export const STANDARD_ATTRIBUTE_OIDS: ReadonlySet<string> = new Set([
  Oid.countryName,
  Oid.stateOrProvinceName,
  Oid.localityName,
  Oid.streetAddress,
  Oid.postalCode,
  Oid.organizationName,
  Oid.organizationalUnitName,
  Oid.commonName,
  Oid.serialNumber,
]);

/** An empty subject. */
export function emptySubject(): SubjectAttributes {
  return {
    country: [],
    province: [],
    locality: [],
    streetAddress: [],
    postalCode: [],
    organization: [],
    organizationalUnit: [],
    commonName: '',
    serialNumber: '',
    extra: [],
  };
}

function appendIf(value: string | undefined, list: string[]): void {
  if (value !== undefined && value !== '') list.push(value);
}

/**
 * Validate a dotted OID the way CFSSL's `OIDFromString` does: every part must be an integer, else
 * 9300 `invalid OID part <part>`.
 */
export function parseOidString(text: string): string {
  for (const part of text.split('.')) {
    if (!/^[+-]?\d+$/.test(part)) throw new CsrBadRequestError(`invalid OID part ${part}`);
  }
  return text;
}

/**
 * Build the subject of a CFSSL certificate request (`csr.CertificateRequest.Name`): `names` merged
 * in order, `SerialNumber` in a names entry ignored, `OID` entries then `E` appended as extras per
 * entry. A non-numeric OID part → 9300 `invalid OID part <part>`.
 */
export function subjectFromNames(commonName: string | undefined, names: readonly NameEntry[] | null | undefined, serialNumber: string | undefined): SubjectAttributes {
  const subject = emptySubject();
  subject.commonName = commonName ?? '';
  for (const name of names ?? []) {
    if (name === null || typeof name !== 'object') continue;
    appendIf(name.C, subject.country);
    appendIf(name.ST, subject.province);
    appendIf(name.L, subject.locality);
    appendIf(name.O, subject.organization);
    appendIf(name.OU, subject.organizationalUnit);
    for (const [oid, value] of Object.entries(name.OID ?? {})) {
      subject.extra.push({ oid: parseOidString(oid), value });
    }
    if (name.E !== undefined && name.E !== '') subject.extra.push({ oid: Oid.emailAddress, value: name.E });
  }
  subject.serialNumber = serialNumber ?? '';
  return subject;
}

/**
 * A subject as Go's `FillFromRDNSequence` reads it back from DER attributes: standard types into
 * their lists (CN and serialNumber: the last one wins), everything else into `extra` in order. The
 * certificate subject is this re-read form re-encoded (behaviour doc 3.7).
 */
export function subjectFromAttributes(attributes: Iterable<NameAttribute>): SubjectAttributes {
  const subject = emptySubject();
  for (const attribute of attributes) {
    switch (attribute.oid) {
      case Oid.countryName:
        subject.country.push(attribute.value);
        break;
      case Oid.stateOrProvinceName:
        subject.province.push(attribute.value);
        break;
      case Oid.localityName:
        subject.locality.push(attribute.value);
        break;
      case Oid.streetAddress:
        subject.streetAddress.push(attribute.value);
        break;
      case Oid.postalCode:
        subject.postalCode.push(attribute.value);
        break;
      case Oid.organizationName:
        subject.organization.push(attribute.value);
        break;
      case Oid.organizationalUnitName:
        subject.organizationalUnit.push(attribute.value);
        break;
      case Oid.commonName:
        subject.commonName = attribute.value;
        break;
      case Oid.serialNumber:
        subject.serialNumber = attribute.value;
        break;
      default:
        subject.extra.push({ oid: attribute.oid, value: attribute.value });
    }
  }
  return subject;
}

/** The attributes of a subject in encoding order (the inverse of {@link subjectFromAttributes}). */
export function subjectAttributeList(subject: SubjectAttributes): NameAttribute[] {
  const out: NameAttribute[] = [];
  for (const rdn of subjectRdns(subject)) out.push(...rdn);
  return out;
}

function subjectRdns(subject: SubjectAttributes): NameAttribute[][] {
  const extraOids = new Set(subject.extra.map((attribute) => attribute.oid));
  const rdns: NameAttribute[][] = [];
  const append = (values: readonly string[], oid: string): void => {
    // Go's appendRDNs: skip empty lists and types overridden by an extra attribute.
    if (values.length === 0 || extraOids.has(oid)) return;
    rdns.push(values.map((value) => ({ oid, value })));
  };
  append(subject.country, Oid.countryName);
  append(subject.province, Oid.stateOrProvinceName);
  append(subject.locality, Oid.localityName);
  append(subject.streetAddress, Oid.streetAddress);
  append(subject.postalCode, Oid.postalCode);
  append(subject.organization, Oid.organizationName);
  append(subject.organizationalUnit, Oid.organizationalUnitName);
  if (subject.commonName !== '') append([subject.commonName], Oid.commonName);
  if (subject.serialNumber !== '') append([subject.serialNumber], Oid.serialNumber);
  for (const attribute of subject.extra) rdns.push([attribute]);
  return rdns;
}

function encodeAttributeValue(value: string): Uint8Array {
  // RFC 4514 `#hex` marks a non-string value that the parser could only keep as DER.
  if (value.charCodeAt(0) === 0x23 && /^#(?:[0-9a-f]{2})+$/i.test(value)) return Uint8Array.from(Buffer.from(value.slice(1), 'hex'));
  return derDirectoryString(value);
}

function encodeAttributeType(oid: string): Uint8Array {
  try {
    return derOid(oid);
  } catch (cause) {
    // Go fails to marshal such an OID; report it as the request's fault (9300), not a crash.
    throw new CsrBadRequestError(`invalid OID ${oid}`, { cause });
  }
}

/*
 * AttributeTypeAndValue encodings of organisation-level attributes (C, ST, L, O, OU…) repeat from
 * request to request, so they are memoised (bounded; cleared when full). Per-request values — CN,
 * serialNumber and extra attributes such as emailAddress — are not cached.
 */
const AVA_CACHE_LIMIT = 1024;
const avaCache = new Map<string, Uint8Array>();
const UNCACHED: ReadonlySet<string> = new Set([Oid.commonName, Oid.serialNumber]);

function encodeAva(attribute: NameAttribute, cacheable: boolean): Uint8Array {
  if (!cacheable) return derSequence(encodeAttributeType(attribute.oid), encodeAttributeValue(attribute.value));
  const key = `${attribute.oid}\u0000${attribute.value}`;
  let der = avaCache.get(key);
  if (der === undefined) {
    der = derSequence(encodeAttributeType(attribute.oid), encodeAttributeValue(attribute.value));
    if (avaCache.size >= AVA_CACHE_LIMIT) avaCache.clear();
    avaCache.set(key, der);
  }
  return der;
}

/** Encode a subject as a DER Name (RDNSequence), in Go's order. */
export function encodeSubject(subject: SubjectAttributes): Uint8Array {
  const list = subjectRdns(subject);
  const standardCount = list.length - subject.extra.length;
  const rdns = list.map((rdn, index) =>
    derSetOf(rdn.map((attribute) => encodeAva(attribute, index < standardCount && !UNCACHED.has(attribute.oid)))),
  );
  return derSequence(...rdns);
}

/** True when the subject encodes to an empty Name (SAN must then be critical, RFC 5280 4.2.1.6). */
export function isEmptySubject(subject: SubjectAttributes): boolean {
  return subjectRdns(subject).length === 0;
}

