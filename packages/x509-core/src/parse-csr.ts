/**
 * PKCS#10 certificate request parsing (RFC 2986) with CFSSL's codes (`signer/local.Sign`,
 * `signer.ParseCertificateRequest`; behaviour doc 3.7): bad PEM → 9002, wrong PEM label → 9300
 * `not a csr`, bad DER → 9003, bad self-signature → 9300 with Go's verification message.
 */
import type {
  BasicConstraints,
  CertificateExtension,
  DistinguishedName,
  PublicKeyInfo,
  SignatureAlgorithmInfo,
  SubjectAltNames,
} from './certificate-model.js';
import { readSignatureAlgorithm } from './algorithm-identifier.js';
import { DerReader, elementBytes, readBitString, readOid, readSmallInteger } from './der-reader.js';
import { readDistinguishedName } from './distinguished-name.js';
import { CsrBadRequestError, CsrDecodeError, CsrParseError, DerDecodeError } from './errors.js';
import { emptyExtensionFacts, readExtensions } from './extensions.js';
import { Oid } from './oids.js';
import { decodePemBlock } from './pem.js';
import { readPublicKeyInfo } from './public-key-info.js';
import { isSignatureAlgorithmSupported, verifySignature } from './verify-signature.js';

/** One CSR attribute (RFC 2986 4.1) with its values' DER. */
export interface CsrAttribute {
  oid: string;
  /** DER of each value of the attribute's SET. */
  values: Uint8Array[];
}

/** Extensions requested through the PKCS#9 extensionRequest attribute, decoded like a certificate's. */
export interface RequestedExtensions {
  keyUsage: number | null;
  extKeyUsage: string[] | null;
  subjectKeyId: Uint8Array | null;
  certificatePolicies: string[] | null;
  ocspUrls: string[];
  caIssuerUrls: string[];
  crlDistributionPoints: string[];
  /** Critical requested extensions certsmith does not understand. */
  unhandledCriticalExtensions: string[];
}

/** A parsed PKCS#10 certificate request. */
export interface CertificateRequest {
  /** Whole CertificationRequest DER. */
  der: Uint8Array;
  /** CertificationRequestInfo DER (the self-signed bytes). */
  tbs: Uint8Array;
  /** Raw version INTEGER (0 for v1, the only defined version). */
  version: number;
  subject: DistinguishedName;
  publicKey: PublicKeyInfo;
  signatureAlgorithm: SignatureAlgorithmInfo;
  /** Contents of the signature BIT STRING. */
  signature: Uint8Array;
  /** SANs from the extensionRequest (Go's `csr.DNSNames`, `EmailAddresses`, `IPAddresses`, `URIs`). */
  subjectAltNames: SubjectAltNames;
  /** Every requested extension, raw and in order (Go's `csr.Extensions`; `copy_extensions` copies these). */
  extensions: CertificateExtension[];
  /** The requested extensions certsmith decodes. */
  requestedExtensions: RequestedExtensions;
  /** Requested basic constraints (CFSSL refuses CA requests for non-CA profiles: 5300), `null` when absent. */
  basicConstraints: BasicConstraints | null;
  /** All attributes (challengePassword, extensionRequest…), raw. */
  attributes: CsrAttribute[];
}

/** PEM labels CFSSL accepts for a CSR. */
const CSR_LABELS: ReadonlySet<string> = new Set(['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']);

function decodeRequest(der: Uint8Array): CertificateRequest {
  const top = new DerReader(der);
  const outer = top.sequence('CertificationRequest');
  top.finish('CertificationRequest');
  const infoElement = outer.expect(0x30, 'CertificationRequestInfo');
  const signatureAlgorithm = readSignatureAlgorithm(der, outer.expect(0x30, 'signatureAlgorithm'), outer);
  const signature = readBitString(der, outer.expect(0x03, 'signature'));
  outer.finish('CertificationRequest');

  const info = outer.enter(infoElement);
  const version = readSmallInteger(der, info.expect(0x02, 'version'));
  const subject = readDistinguishedName(der, info.expect(0x30, 'subject'), info);
  const publicKey = readPublicKeyInfo(der, info.expect(0x30, 'subjectPKInfo'), info);
  // RFC 2986 says attributes [0] is required, but Go and OpenSSL accept it missing.
  const attributesElement = info.optional(0xa0);
  info.finish('CertificationRequestInfo');

  const attributes: CsrAttribute[] = [];
  const facts = emptyExtensionFacts();
  let extensions: CertificateExtension[] = [];
  if (attributesElement) {
    const list = info.enter(attributesElement);
    while (list.hasMore()) {
      const attribute = list.sequence('Attribute');
      const oid = readOid(der, attribute.expect(0x06, 'attribute type'));
      const valuesElement = attribute.expect(0x31, 'attribute values');
      attribute.finish('Attribute');
      const values: Uint8Array[] = [];
      const valueReader = attribute.enter(valuesElement);
      while (valueReader.hasMore()) {
        const value = valueReader.read();
        values.push(elementBytes(der, value));
        // PKCS#9 extensionRequest (RFC 2985 5.4.2): its value is an Extensions SEQUENCE.
        if (oid === Oid.extensionRequest && value.tag === 0x30) {
          extensions = extensions.concat(readExtensions(der, valueReader.enter(value), facts));
        }
      }
      attributes.push({ oid, values });
    }
  }

  return {
    der,
    tbs: elementBytes(der, infoElement),
    version,
    subject,
    publicKey,
    signatureAlgorithm,
    signature: signature.bytes,
    subjectAltNames: facts.subjectAltNames,
    extensions,
    requestedExtensions: {
      keyUsage: facts.keyUsage,
      extKeyUsage: facts.extKeyUsage,
      subjectKeyId: facts.subjectKeyId,
      certificatePolicies: facts.certificatePolicies ?? null,
      ocspUrls: facts.ocspUrls,
      caIssuerUrls: facts.caIssuerUrls,
      crlDistributionPoints: facts.crlDistributionPoints,
      unhandledCriticalExtensions: facts.unhandledCriticalExtensions,
    },
    basicConstraints: facts.basicConstraints,
    attributes,
  };
}

/**
 * Parse CSR DER (no PEM, no signature check).
 *
 * @throws CsrParseError (9003) with `x509: malformed certificate request: <reason>`
 */
export function parseCertificateRequestDer(der: Uint8Array): CertificateRequest {
  const owned = der.byteOffset === 0 && der.byteLength === der.buffer.byteLength ? der : new Uint8Array(der);
  try {
    return decodeRequest(owned);
  } catch (error) {
    if (error instanceof DerDecodeError) {
      throw new CsrParseError(`x509: malformed certificate request: ${error.message}`, { cause: error });
    }
    throw error;
  }
}

/** Go's error text for a failed self-signature check, per algorithm (what CFSSL wraps into 9300). */
function signatureFailureMessage(csr: CertificateRequest): string {
  if (!isSignatureAlgorithmSupported(csr.signatureAlgorithm)) return 'x509: cannot verify signature: algorithm unimplemented';
  switch (csr.signatureAlgorithm.keyAlgorithm) {
    case 'RSA':
      return 'crypto/rsa: verification error';
    case 'ECDSA':
      return 'x509: ECDSA verification failure';
    case 'Ed25519':
      return 'x509: Ed25519 verification failure';
    default:
      return 'x509: signature verification failure';
  }
}

/** True when the CSR's self-signature verifies with its own public key (RFC 2986 3, proof of possession). */
export function verifyCertificateRequestSignature(csr: CertificateRequest): boolean {
  return verifySignature(csr.tbs, csr.signature, csr.signatureAlgorithm, csr.publicKey);
}

/** Options of {@link parseCertificateRequest}. */
export interface ParseCertificateRequestOptions {
  /** Check the self-signature (default true, as CFSSL always does before signing). */
  verifySignature?: boolean;
}

/**
 * Parse a PEM CSR the way CFSSL's signer does: the first PEM block must exist (else 9002
 * `CSR Decode failed`) and be labelled `CERTIFICATE REQUEST` or `NEW CERTIFICATE REQUEST` (else 9300
 * `not a csr`); its DER must be a PKCS#10 request (else 9003); its self-signature must verify
 * (else 9300 with Go's message, e.g. `x509: ECDSA verification failure`).
 *
 * @throws CsrDecodeError (9002), CsrBadRequestError (9300), CsrParseError (9003)
 */
export function parseCertificateRequest(pem: string, options: ParseCertificateRequestOptions = {}): CertificateRequest {
  const match = decodePemBlock(pem);
  if (match === null) throw new CsrDecodeError();
  if (!CSR_LABELS.has(match.block.type)) throw new CsrBadRequestError('not a csr');
  const csr = parseCertificateRequestDer(match.block.bytes);
  if (options.verifySignature !== false && !verifyCertificateRequestSignature(csr)) {
    throw new CsrBadRequestError(signatureFailureMessage(csr));
  }
  return csr;
}
