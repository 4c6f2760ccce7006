// @ts-check
/**
 * What is fuzzed: x509-core's public parse functions, each with the CFSSL codes it may answer. A
 * target throws nothing but those codes; any other throw — a RangeError, a TypeError, an uncoded
 * error, a coded error with another code — is a finding. After a successful parse the functions
 * that report on the result (certinfo/bundle facts, key matching and re-encoding) run too, since a
 * parse that succeeds with odd content must not make them throw either.
 */
import {
  DerDecodeError,
  DerReader,
  assertKeyMatchesCertificate,
  certificateHostnames,
  certificateIndexFields,
  decodePemBlocks,
  encodePrivateKeyCfssl,
  formatDistinguishedName,
  formatExpiry,
  isCodedError,
  keySize,
  keyTypeString,
  ocspServers,
  parseCertificate,
  parseCertificateRequest,
  parseCertificateRequestDer,
  parseCertificates,
  parseCertificatesLazily,
  parsePkcs7Certificates,
  parsePrivateKey,
  parsePrivateKeyDer,
  readBitString,
  readBoolean,
  readIntegerBytes,
  readOctetString,
  readOid,
  readSmallInteger,
  readString,
  readTime,
  signatureString,
  spkiSha1Hex,
  subjectKeyIdHex,
  verifyCertificateRequestSignature,
  verifySignature,
  isStringTag,
} from '@certsmith/x509-core';
import { compareWithNode } from './node-agreement.mjs';

/** @typedef {import('./seeds.mjs').SeedKind} SeedKind */
/** @typedef {import('./node-agreement.mjs').AgreementResult} AgreementResult */

/**
 * @typedef {object} Target
 * @property {string} name
 * @property {'der' | 'pem'} input
 * @property {SeedKind[]} seeds seed kinds most inputs are made from (10% come from any kind)
 * @property {number} weight share of the inputs
 * @property {readonly number[]} codes the CFSSL codes a refusal may carry
 * @property {(input: Uint8Array | string, context: RunContext) => void} run
 */

/**
 * @typedef {{ anyCertificate: import('@certsmith/x509-core').Certificate, compareWithNode: boolean, verify: boolean, agreement: AgreementResult | null }} RunContext
 * `agreement` is set by targets that compare with Node, whether they accept or refuse.
 */

/** Report functions used by certinfo and bundle on a parsed certificate. @param {import('@certsmith/x509-core').Certificate} cert */
function reportFacts(cert) {
  formatDistinguishedName(cert.subject);
  formatDistinguishedName(cert.issuer);
  keyTypeString(cert);
  keySize(cert);
  signatureString(cert);
  formatExpiry(cert.notBefore);
  formatExpiry(cert.notAfter);
  certificateHostnames(cert);
  subjectKeyIdHex(cert);
  ocspServers(cert);
  spkiSha1Hex(cert);
  certificateIndexFields(cert);
}

/** Walk every element of a DER blob, decoding each primitive by its tag. @param {Uint8Array} bytes @param {DerReader} reader */
function walk(bytes, reader) {
  while (reader.hasMore()) {
    const element = reader.read();
    if ((element.tag & 0x20) !== 0) {
      walk(bytes, reader.enter(element));
      continue;
    }
    try {
      switch (element.tag) {
        case 0x01:
          readBoolean(bytes, element);
          break;
        case 0x02:
          readIntegerBytes(bytes, element);
          readSmallInteger(bytes, element);
          break;
        case 0x03:
          readBitString(bytes, element);
          break;
        case 0x04:
          readOctetString(bytes, element);
          break;
        case 0x06:
          readOid(bytes, element);
          break;
        case 0x17:
        case 0x18:
          readTime(bytes, element);
          break;
        default:
          if (isStringTag(element.tag)) readString(bytes, element);
          break;
      }
    } catch (error) {
      // A refused primitive is the expected outcome; keep walking the rest.
      if (!(error instanceof DerDecodeError)) throw error;
    }
  }
}

/** @type {Target[]} */
export const TARGETS = [
  {
    name: 'der-reader',
    input: 'der',
    seeds: ['certificate', 'csr', 'private-key', 'pkcs7'],
    weight: 8,
    // The reader's refusals are uncoded by design (the parse functions code them): DerDecodeError only.
    codes: [],
    run(input) {
      const bytes = /** @type {Uint8Array} */ (input);
      walk(bytes, new DerReader(bytes));
    },
  },
  {
    name: 'certificate',
    input: 'der',
    seeds: ['certificate'],
    weight: 30,
    codes: [1003],
    run(input, context) {
      const der = /** @type {Uint8Array} */ (input);
      let cert = null;
      let failure = null;
      try {
        cert = parseCertificate(der);
      } catch (error) {
        failure = error;
      }
      if (context.compareWithNode) context.agreement = compareWithNode(der, cert, failure);
      if (cert === null) throw failure;
      reportFacts(cert);
      if (context.verify) verifySignature(cert.tbs, cert.signature, cert.signatureAlgorithm, cert.publicKey);
    },
  },
  {
    name: 'certificates-pem',
    input: 'pem',
    seeds: ['certificate', 'pkcs7'],
    weight: 10,
    codes: [1002, 1003],
    run(input) {
      for (const cert of parseCertificates(/** @type {string} */ (input))) reportFacts(cert);
      parseCertificatesLazily(/** @type {string} */ (input));
    },
  },
  {
    name: 'certificates-der-input',
    input: 'der',
    seeds: ['certificate', 'pkcs7'],
    weight: 5,
    codes: [1002, 1003],
    run(input) {
      for (const cert of parseCertificates(/** @type {Uint8Array} */ (input))) reportFacts(cert);
    },
  },
  {
    name: 'pkcs7',
    input: 'der',
    seeds: ['pkcs7'],
    weight: 6,
    codes: [1003],
    run(input) {
      parsePkcs7Certificates(/** @type {Uint8Array} */ (input));
    },
  },
  {
    name: 'csr',
    input: 'der',
    seeds: ['csr'],
    weight: 10,
    codes: [9003],
    run(input, context) {
      const csr = parseCertificateRequestDer(/** @type {Uint8Array} */ (input));
      if (context.verify) verifyCertificateRequestSignature(csr);
    },
  },
  {
    name: 'csr-pem',
    input: 'pem',
    seeds: ['csr'],
    weight: 7,
    codes: [9002, 9003, 9300],
    run(input) {
      parseCertificateRequest(/** @type {string} */ (input));
    },
  },
  {
    name: 'private-key',
    input: 'der',
    seeds: ['private-key'],
    weight: 8,
    codes: [2003],
    run(input, context) {
      const key = parsePrivateKeyDer(/** @type {Uint8Array} */ (input));
      encodePrivateKeyCfssl(key);
      try {
        assertKeyMatchesCertificate(key, context.anyCertificate);
      } catch (error) {
        // A key that does not match the certificate is the expected answer here.
        if (!isCodedError(error) || (error.code !== 2200 && error.code !== 2300)) throw error;
      }
    },
  },
  {
    name: 'private-key-pem',
    input: 'pem',
    seeds: ['private-key'],
    weight: 6,
    codes: [2002, 2003, 2100],
    run(input) {
      parsePrivateKey(/** @type {string} */ (input));
    },
  },
  {
    name: 'pem',
    input: 'pem',
    seeds: ['certificate', 'csr', 'private-key', 'pkcs7'],
    weight: 4,
    codes: [],
    run(input) {
      decodePemBlocks(/** @type {string} */ (input));
    },
  },
];

/**
 * Is a throw acceptable for this target? Coded errors with one of its codes are; for the DER reader,
 * DerDecodeError is (it is uncoded by design).
 * @param {Target} target @param {unknown} error
 */
export function isExpectedRefusal(target, error) {
  if (target.name === 'der-reader') return error instanceof DerDecodeError;
  return isCodedError(error) && target.codes.includes(error.code);
}
