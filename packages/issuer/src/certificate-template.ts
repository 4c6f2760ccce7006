/**
 * From CSR facts to a signed certificate, step for step as CFSSL's local signer
 * (`signer.ParseCertificateRequest`, `local.Signer.Sign`, `signer.FillTemplate`; behaviour doc
 * 3.7, 4.1): CSR whitelist, CA checks (5300), host and subject overrides, name whitelist (5500),
 * serial (1400), allowed request extensions (1300), validity, usages (5100), extensions in Go's
 * order, then one call to the signer. Everything is encoded with the lean DER writer; the profile's
 * constant extensions and the CA-derived parts were encoded once beforehand.
 */
import { hash, randomFillSync } from 'node:crypto';

import type { SignRequest, SignRequestExtension, SignRequestSubject } from '@certsmith/signer-api';
import { SignerUnavailableError } from '@certsmith/signer-api';
import type { CertificateExtension, NameAttribute, PublicKeyInfo, SanList, SubjectAttributes } from '@certsmith/x509-core';
import {
  CertsmithError,
  DerReader,
  ErrorCode,
  compareBytes,
  derSequence,
  emptySanList,
  encodeOidContent,
  encodePem,
  encodeSigned,
  encodeSubject,
  encodeSubjectAltNames,
  encodeTbsCertificate,
  isEmptySanList,
  isEmptySubject,
  readBoolean,
  readSmallInteger,
  sansFromHosts,
  signatureAlgorithmIdentifier,
  subjectFromAttributes,
  subjectFromNames,
} from '@certsmith/x509-core';

import type { ExtensionSpec } from './extensions.js';
import { ExtensionOid, crlDistributionPointsExtension, encodeExtension, subjectAltNameExtension, subjectKeyIdExtension } from './extensions.js';
import type { IssuerContext } from './issuer-context.js';
import type { SigningPolicy, SigningProfile } from './signing-policy.js';
import type { GoRegexp } from './go-regexp.js';
import { matchGoRegexp } from './go-regexp.js';
import {
  InvalidCertificateRequestError,
  MissingSerialError,
  NameWhitelistError,
  NoKeyUsagesError,
  PolicyViolationError,
} from './errors.js';

/** What the signer needs to know about a CSR (already parsed and signature-checked). */
export interface CsrFacts {
  /** Subject attributes in DER order (RDNs flattened). */
  subjectAttributes: readonly NameAttribute[];
  publicKey: PublicKeyInfo;
  sans: SanList;
  /** Extensions of the extensionRequest attribute, in order. */
  extensions: readonly CertificateExtension[];
  /**
   * Optional precomputed forms, used only while the request does not change them: the subject as
   * {@link subjectFromAttributes} reads `subjectAttributes` plus its DER, and the SAN GeneralNames
   * DER of `sans`. newcert passes the CSR's own encodings so the certificate does not re-encode them.
   */
  precomputed?: { subject?: { attributes: SubjectAttributes; der: Uint8Array }; sanDer?: Uint8Array };
}

/** Request-level overrides (the SignRequest members CFSSL's local signer honours). */
export interface SignOverrides {
  hosts?: readonly string[] | null;
  subject?: SignRequestSubject | null;
  serial?: bigint | string | null;
  extensions?: readonly SignRequestExtension[];
  crlOverride?: string;
  notBefore?: string;
  notAfter?: string;
}

/** What a sign request changes in the certificate its CSR would give (CFSSL's SignRequest fields). */
export function signOverridesOf(request: SignRequest): SignOverrides {
  return {
    hosts: request.hosts,
    subject: request.subject,
    serial: request.serial,
    extensions: request.extensions,
    crlOverride: request.crl_override,
    notBefore: request.NotBefore,
    notAfter: request.NotAfter,
  };
}

/** A signed certificate. */
export interface IssuedCertificate {
  der: Uint8Array;
  /** `CERTIFICATE` PEM with trailing newline. */
  pem: string;
}

/** The working certificate template (Go's `x509.Certificate` fields CFSSL touches). */
interface Template {
  subject: SubjectAttributes | null;
  /** DER of `subject` when known (cleared when the subject changes). */
  subjectDer: Uint8Array | null;
  /** GeneralNames DER of `sans` when known (cleared when the SANs change). */
  sanDer: Uint8Array | null;
  publicKey: PublicKeyInfo | null;
  sans: SanList;
  isCa: boolean;
  maxPathLen: number;
  extraExtensions: ExtensionSpec[];
  signatureAlgorithmWhitelisted: boolean;
  crlDistributionPoints: string[] | null;
}

const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

/** Parse a CSR BasicConstraints value (`SEQUENCE { BOOLEAN DEFAULT FALSE, INTEGER OPTIONAL }`) with Go's defaults. */
function readCsrBasicConstraints(value: Uint8Array): { isCa: boolean; maxPathLen: number } {
  try {
    const outer = new DerReader(value);
    const reader = outer.sequence('BasicConstraints');
    outer.finish('BasicConstraints');
    let isCa = false;
    let maxPathLen = -1;
    if (reader.peekTag() === 0x01) isCa = readBoolean(value, reader.read());
    if (reader.peekTag() === 0x02) maxPathLen = readSmallInteger(value, reader.read());
    reader.finish('BasicConstraints');
    return { isCa, maxPathLen };
  } catch (cause) {
    // cfssl: Wrap(CSRError, ParseFailed, err).
    throw new CertsmithError(ErrorCode.CsrParseFailed, `x509: invalid BasicConstraints in CSR: ${(cause as Error).message}`, { cause });
  }
}

/** cfssl `signer.ParseCertificateRequest` + the CSRWhitelist copy of `local.Sign`. */
function templateFromCsr(csr: CsrFacts, profile: SigningProfile): Template {
  let isCa = false;
  let maxPathLen = 0;
  const extras: ExtensionSpec[] = [];
  for (const extension of csr.extensions) {
    if (extension.oid === ExtensionOid.basicConstraints) {
      const constraints = readCsrBasicConstraints(extension.value);
      isCa = constraints.isCa;
      maxPathLen = constraints.maxPathLen;
    } else if (extension.oid === ExtensionOid.delegationUsage || profile.copyExtensions) {
      // Delegation usage is always carried over; anything else only with copy_extensions.
      extras.push({ oid: extension.oid, critical: extension.critical, value: extension.value });
    }
  }
  const whitelist = profile.csrWhitelist;
  if (whitelist === null) {
    const precomputed = csr.precomputed?.subject;
    return {
      subject: precomputed ? precomputed.attributes : subjectFromAttributes(csr.subjectAttributes),
      subjectDer: precomputed ? precomputed.der : null,
      sanDer: csr.precomputed?.sanDer ?? null,
      publicKey: csr.publicKey,
      sans: csr.sans,
      isCa,
      maxPathLen,
      extraExtensions: extras,
      signatureAlgorithmWhitelisted: true,
      crlDistributionPoints: null,
    };
  }
  // Only the whitelisted fields survive (no extensions, no basic constraints).
  return {
    subject: whitelist.Subject ? subjectFromAttributes(csr.subjectAttributes) : null,
    subjectDer: null,
    sanDer: null,
    publicKey: whitelist.PublicKey ? csr.publicKey : null,
    sans: {
      dns: whitelist.DNSNames ? csr.sans.dns : [],
      email: whitelist.EmailAddresses ? csr.sans.email : [],
      ip: whitelist.IPAddresses ? csr.sans.ip : [],
      uri: whitelist.URIs ? csr.sans.uri : [],
    },
    isCa: false,
    maxPathLen: 0,
    extraExtensions: [],
    signatureAlgorithmWhitelisted: whitelist.SignatureAlgorithm,
    crlDistributionPoints: null,
  };
}

/** cfssl `PopulateSubjectFromCSR`: the override's values, with empty ones taken from the CSR. */
function overrideSubject(override: SignRequestSubject, csrSubject: SubjectAttributes | null): SubjectAttributes {
  // signer.Subject.Name() only knows C, ST, L, O, OU, CN and SerialNumber.
  const names = (override.names ?? []).map((name) => ({ C: name.C, ST: name.ST, L: name.L, O: name.O, OU: name.OU }));
  const subject = subjectFromNames(override.CN, names, override.SerialNumber);
  const from = csrSubject;
  if (from === null) return subject;
  if (subject.commonName === '') subject.commonName = from.commonName;
  if (subject.country.length === 0) subject.country = [...from.country];
  if (subject.province.length === 0) subject.province = [...from.province];
  if (subject.locality.length === 0) subject.locality = [...from.locality];
  if (subject.organization.length === 0) subject.organization = [...from.organization];
  if (subject.organizationalUnit.length === 0) subject.organizationalUnit = [...from.organizationalUnit];
  if (subject.serialNumber === '') subject.serialNumber = from.serialNumber;
  return subject;
}

function parseSerial(value: bigint | string | number): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  throw new InvalidCertificateRequestError('serial must be an integer');
}

/** Random bytes after the time prefix of a serial. */
const SERIAL_RANDOM_BYTES = 14;
const serialPool = new Uint8Array(SERIAL_RANDOM_BYTES * 256);
let serialOffset = serialPool.length;

/**
 * A positive 20-byte serial: the time of issuing in milliseconds (48 bits, big-endian; its first
 * byte is 0x01 until the year 10889) followed by 14 bytes from the CSPRNG (112 bits; the CA/Browser
 * Forum asks for at least 64, and serials stay unpredictable and non-sequential). CFSSL's are 20
 * random bytes (top bit cleared); the time prefix makes successive certificates neighbours in every
 * index ordered by serial — the store's primary keys, its OCSP responses, the name and expiry
 * indexes — so recording one adds to the last leaf instead of rewriting a leaf of its own per
 * certificate (docs/performance.md, "Certificate store"; docs/migrating-from-cfssl.md).
 */
function randomSerial(): Uint8Array {
  if (serialOffset + SERIAL_RANDOM_BYTES > serialPool.length) {
    randomFillSync(serialPool);
    serialOffset = 0;
  }
  const serial = new Uint8Array(20);
  let time = Date.now();
  for (let i = 5; i >= 0; i -= 1) {
    serial[i] = time % 256;
    time = Math.floor(time / 256);
  }
  serial.set(serialPool.subarray(serialOffset, serialOffset + SERIAL_RANDOM_BYTES), 6);
  serialOffset += SERIAL_RANDOM_BYTES;
  return serial;
}

function parseTime(text: string | undefined): Date | null {
  if (text === undefined || text === '' || text === GO_ZERO_TIME) return null;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw new InvalidCertificateRequestError(`invalid time ${JSON.stringify(text)}`);
  return date;
}

function nameMatches(whitelist: GoRegexp, name: string): boolean {
  return matchGoRegexp(whitelist, name);
}

const extensionCache = new WeakMap<ExtensionSpec, Uint8Array>();

function encoded(extension: ExtensionSpec): Uint8Array {
  let der = extensionCache.get(extension);
  if (!der) {
    der = encodeExtension(extension);
    extensionCache.set(extension, der);
  }
  return der;
}

function hexToBytes(hex: string): Uint8Array {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new InvalidCertificateRequestError('encoding/hex: invalid byte');
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/**
 * Issue a certificate for a CSR under `profile` with the signer of `context`, applying `overrides`
 * as CFSSL's local signer applies a SignRequest.
 */
export async function issueCertificate(
  context: IssuerContext,
  policy: SigningPolicy,
  profile: SigningProfile,
  csr: CsrFacts,
  overrides: SignOverrides = {},
): Promise<IssuedCertificate> {
  const signer = context.signer;
  if (typeof signer.sign !== 'function' || context.algorithm === null || context.algorithmIdentifier === null) {
    throw new SignerUnavailableError('signer cannot sign certificates locally');
  }
  const template = templateFromCsr(csr, profile);

  if (overrides.crlOverride) template.crlDistributionPoints = [overrides.crlOverride];

  if (template.isCa) {
    if (!profile.caConstraint.isCa) throw new PolicyViolationError();
    if (context.caMaxPathLen > 0) {
      if (template.maxPathLen >= context.caMaxPathLen) throw new PolicyViolationError();
    } else if (context.caMaxPathLen === 0 && context.caMaxPathLenZero) {
      throw new PolicyViolationError();
    }
  }

  // OverrideHosts: a non-null `hosts` replaces every SAN.
  if (overrides.hosts !== undefined && overrides.hosts !== null) {
    template.sans = sansFromHosts(overrides.hosts);
    template.sanDer = null;
  }
  if (overrides.subject) {
    template.subject = overrideSubject(overrides.subject, template.subject);
    template.subjectDer = null;
  }

  const whitelist = profile.nameWhitelist;
  if (whitelist) {
    const commonName = template.subject?.commonName ?? '';
    if (commonName !== '' && !nameMatches(whitelist, commonName)) throw new NameWhitelistError();
    for (const name of template.sans.dns) if (!nameMatches(whitelist, name)) throw new NameWhitelistError();
    for (const name of template.sans.email) if (!nameMatches(whitelist, name)) throw new NameWhitelistError();
    for (const name of template.sans.uri) if (!nameMatches(whitelist, name)) throw new NameWhitelistError();
  }

  let serial: Uint8Array | bigint;
  if (profile.clientProvidesSerialNumbers) {
    if (overrides.serial === undefined || overrides.serial === null || overrides.serial === '') throw new MissingSerialError();
    serial = parseSerial(overrides.serial);
    if (serial < 0n) throw new CertsmithError(ErrorCode.CertificateUnknown, 'x509: negative serial number');
  } else {
    serial = randomSerial();
  }

  for (const extension of overrides.extensions ?? []) {
    if (!profile.allowedExtensions.includes(extension.id)) throw new InvalidCertificateRequestError();
    try {
      encodeOidContent(extension.id);
    } catch (cause) {
      throw new InvalidCertificateRequestError(undefined, { cause });
    }
    template.extraExtensions.push({ oid: extension.id, critical: extension.critical === true, value: hexToBytes(extension.value) });
  }

  // FillTemplate.
  if (profile.keyUsage === 0 && profile.extKeyUsages.length === 0) throw new NoKeyUsagesError();
  const publicKey = template.publicKey;
  if (publicKey === null) throw new CertsmithError(ErrorCode.CertificateUnknown, 'x509: unsupported public key type: <nil>');
  const expiry = profile.expiry !== 0 ? profile.expiry : policy.default.expiry;
  let notBefore = parseTime(overrides.notBefore);
  if (notBefore === null) {
    if (profile.notBefore) {
      notBefore = profile.notBefore;
    } else {
      // Go: time.Now().Round(time.Minute) minus backdate (default 5 minutes).
      const backdate = profile.backdate !== 0 ? profile.backdate : 5 * 60_000;
      notBefore = new Date(Math.round(Date.now() / 60_000) * 60_000 - backdate);
    }
  }
  let notAfter = parseTime(overrides.notAfter);
  if (notAfter === null) notAfter = profile.notAfter ?? new Date(notBefore.getTime() + expiry);
  if (profile.caConstraint.isCa) {
    // A CA certificate carries no DNS, email or URI names (IP addresses stay, as in Go).
    template.sans = { ...emptySanList(), ip: template.sans.ip };
    template.sanDer = null;
  }

  const subject = template.subject;
  const subjectDer = template.subjectDer ?? (subject ? encodeSubject(subject) : derSequence());
  const subjectIsEmpty = subject === null || isEmptySubject(subject);
  const subjectKeyId = hash('sha1', publicKey.subjectPublicKey, 'buffer');

  const extras = template.extraExtensions.concat(profile.encoded.trailing);
  const extraOids = extras.length > 0 ? new Set(extras.map((extension) => extension.oid)) : null;
  const allowed = (oid: string): boolean => extraOids === null || !extraOids.has(oid);
  const extensions: Uint8Array[] = [];
  const { keyUsage, extKeyUsage, basicConstraints, authorityInfoAccess } = profile.encoded;
  if (keyUsage && allowed(ExtensionOid.keyUsage)) extensions.push(encoded(keyUsage));
  if (extKeyUsage && allowed(ExtensionOid.extKeyUsage)) extensions.push(encoded(extKeyUsage));
  if (allowed(ExtensionOid.basicConstraints)) extensions.push(encoded(basicConstraints));
  if (allowed(ExtensionOid.subjectKeyIdentifier)) extensions.push(encodeExtension(subjectKeyIdExtension(subjectKeyId)));
  // Go omits the AKI when the subject equals the issuer (a self-signed re-issue).
  if (context.authorityKeyIdDer && allowed(ExtensionOid.authorityKeyIdentifier) && compareBytes(subjectDer, context.issuerNameDer) !== 0) {
    extensions.push(context.authorityKeyIdDer);
  }
  if (authorityInfoAccess && allowed(ExtensionOid.authorityInfoAccess)) extensions.push(encoded(authorityInfoAccess));
  if (!isEmptySanList(template.sans) && allowed(ExtensionOid.subjectAltName)) {
    extensions.push(encodeExtension(subjectAltNameExtension(template.sanDer ?? encodeSubjectAltNames(template.sans), subjectIsEmpty)));
  }
  if (allowed(ExtensionOid.crlDistributionPoints)) {
    if (template.crlDistributionPoints) {
      extensions.push(encodeExtension(crlDistributionPointsExtension(template.crlDistributionPoints)));
    } else if (profile.encoded.crlDistributionPoints) {
      extensions.push(encoded(profile.encoded.crlDistributionPoints));
    }
  }
  for (const extension of extras) extensions.push(encoded(extension));

  // Without a whitelisted signature algorithm Go falls back to its default for the key, which
  // differs from CFSSL's choice only for RSA CAs of 3072+ bits (SHA-256 instead of SHA-384/512).
  let algorithm = context.algorithm;
  let algorithmId = context.algorithmIdentifier;
  if (!template.signatureAlgorithmWhitelisted && algorithm.startsWith('RSA-SHA') && signer.algorithms.includes('RSA-SHA256')) {
    algorithm = 'RSA-SHA256';
    algorithmId = signatureAlgorithmIdentifier(algorithm);
  }

  const tbs = encodeTbsCertificate({
    serial,
    signatureAlgorithm: algorithmId,
    issuer: context.issuerNameDer,
    notBefore,
    notAfter,
    subject: subjectDer,
    spki: publicKey.spki,
    extensions,
  });
  const signature = await signer.sign(tbs, algorithm);
  const der = encodeSigned(tbs, algorithmId, signature);
  return { der, pem: encodePem('CERTIFICATE', der) };
}
