/**
 * AlgorithmIdentifier (RFC 5280 4.1.1.2) decoding for signature algorithms, with CFSSL's names
 * (`helpers.SignatureString`, behaviour doc 2.9): everything Go does not name — and RSA-PSS, which
 * CFSSL's switch omits — is `Unknown Signature`.
 */
import type { HashAlgorithm, KeyAlgorithm, PssParameters, SignatureAlgorithmInfo } from './certificate-model.js';
import { DerReader, decodeOid, readOid, readSmallInteger } from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { DerDecodeError } from './errors.js';
import { Oid } from './oids.js';

/** CFSSL's name for signature algorithms it does not know (and for RSA-PSS). */
export const UNKNOWN_SIGNATURE = 'Unknown Signature';

interface SignatureEntry {
  name: string;
  hash: HashAlgorithm | null;
  keyAlgorithm: KeyAlgorithm;
}

function entry(name: string, hash: HashAlgorithm | null, keyAlgorithm: KeyAlgorithm): SignatureEntry {
  return { name, hash, keyAlgorithm };
}

/** Signature OIDs → CFSSL name, hash and key family (Go's `signatureAlgorithmDetails`). */
const SIGNATURE_ALGORITHMS: ReadonlyMap<string, SignatureEntry> = new Map([
  ['1.2.840.113549.1.1.2', entry('MD2WithRSA', 'MD2', 'RSA')],
  ['1.2.840.113549.1.1.4', entry('MD5WithRSA', 'MD5', 'RSA')],
  ['1.2.840.113549.1.1.5', entry('SHA1WithRSA', 'SHA1', 'RSA')],
  // OIW sha1WithRSASignature: Go maps it to SHA1WithRSA as well.
  ['1.3.14.3.2.29', entry('SHA1WithRSA', 'SHA1', 'RSA')],
  ['1.2.840.113549.1.1.11', entry('SHA256WithRSA', 'SHA256', 'RSA')],
  ['1.2.840.113549.1.1.12', entry('SHA384WithRSA', 'SHA384', 'RSA')],
  ['1.2.840.113549.1.1.13', entry('SHA512WithRSA', 'SHA512', 'RSA')],
  // sha224WithRSA is verifiable but unnamed by Go/CFSSL.
  ['1.2.840.113549.1.1.14', entry(UNKNOWN_SIGNATURE, 'SHA224', 'RSA')],
  ['1.2.840.10040.4.3', entry('DSAWithSHA1', 'SHA1', 'DSA')],
  ['2.16.840.1.101.3.4.3.2', entry('DSAWithSHA256', 'SHA256', 'DSA')],
  ['1.2.840.10045.4.1', entry('ECDSAWithSHA1', 'SHA1', 'ECDSA')],
  ['1.2.840.10045.4.3.1', entry(UNKNOWN_SIGNATURE, 'SHA224', 'ECDSA')],
  ['1.2.840.10045.4.3.2', entry('ECDSAWithSHA256', 'SHA256', 'ECDSA')],
  ['1.2.840.10045.4.3.3', entry('ECDSAWithSHA384', 'SHA384', 'ECDSA')],
  ['1.2.840.10045.4.3.4', entry('ECDSAWithSHA512', 'SHA512', 'ECDSA')],
  [Oid.ed25519, entry('Ed25519', null, 'Ed25519')],
  [Oid.ed448, entry(UNKNOWN_SIGNATURE, null, 'Ed448')],
]);

/** Hash OIDs (RFC 3279, RFC 5754) → hash names. */
const HASH_ALGORITHMS: ReadonlyMap<string, HashAlgorithm> = new Map([
  [Oid.md2, 'MD2'],
  [Oid.md5, 'MD5'],
  [Oid.sha1, 'SHA1'],
  [Oid.sha224, 'SHA224'],
  [Oid.sha256, 'SHA256'],
  [Oid.sha384, 'SHA384'],
  [Oid.sha512, 'SHA512'],
]);

/** Hash name for a hash OID, `null` when unknown. */
export function hashAlgorithmFromOid(oid: string): HashAlgorithm | null {
  return HASH_ALGORITHMS.get(oid) ?? null;
}

/** Hash of an AlgorithmIdentifier SEQUENCE element (parameters ignored). */
function readHashIdentifier(bytes: Uint8Array, element: DerElement, parent: DerReader): HashAlgorithm {
  const reader = parent.enter(element);
  const hash = hashAlgorithmFromOid(readOid(bytes, reader.read()));
  if (hash === null) throw new DerDecodeError('unknown hash in RSASSA-PSS parameters', element.start);
  return hash;
}

/**
 * RSASSA-PSS-params (RFC 4055 3.1) with DEFAULTs (SHA-1, MGF1 with SHA-1, salt 20). Throws on
 * malformed or unsupported parameters; the caller turns that into "unknown algorithm", as Go does.
 */
function readPssParameters(bytes: Uint8Array, element: DerElement, parent: DerReader): PssParameters {
  const params: PssParameters = { hash: 'SHA1', mgf1Hash: 'SHA1', saltLength: 20 };
  const reader = parent.enter(element);
  const hashField = reader.optional(0xa0);
  if (hashField) {
    const inner = reader.enter(hashField);
    params.hash = readHashIdentifier(bytes, inner.expect(0x30, 'hashAlgorithm'), inner);
  }
  const mgfField = reader.optional(0xa1);
  if (mgfField) {
    const inner = reader.enter(mgfField);
    const mgf = inner.sequence('maskGenAlgorithm');
    if (readOid(bytes, mgf.read()) !== Oid.mgf1) throw new DerDecodeError('unsupported mask generation function', mgfField.start);
    params.mgf1Hash = readHashIdentifier(bytes, mgf.expect(0x30, 'MGF1 hash'), mgf);
  }
  const saltField = reader.optional(0xa2);
  if (saltField) {
    const inner = reader.enter(saltField);
    params.saltLength = readSmallInteger(bytes, inner.expect(0x02, 'saltLength'));
    if (params.saltLength < 0) throw new DerDecodeError('negative PSS salt length', saltField.start);
  }
  const trailerField = reader.optional(0xa3);
  if (trailerField) {
    const inner = reader.enter(trailerField);
    // Only trailerFieldBC (1) is defined.
    if (readSmallInteger(bytes, inner.expect(0x02, 'trailerField')) !== 1) throw new DerDecodeError('unsupported PSS trailer', trailerField.start);
  }
  reader.finish('RSASSA-PSS-params');
  return params;
}

/**
 * Decode a signature AlgorithmIdentifier SEQUENCE element (`parent` is the reader it was read
 * from, for depth accounting). Unknown algorithms are not an error: certificates signed with them
 * still parse (their signatures just cannot be verified), as in Go.
 */
export function readSignatureAlgorithm(bytes: Uint8Array, element: DerElement, parent: DerReader): SignatureAlgorithmInfo {
  const reader = parent.enter(element);
  const oidElement = reader.expect(0x06, 'algorithm OID');
  const oid = decodeOid(bytes, oidElement.valueStart, oidElement.end);
  const params = reader.hasMore() ? reader.read() : null;
  reader.finish('AlgorithmIdentifier');

  if (oid === Oid.rsassaPss) {
    let pssParameters: PssParameters | null = null;
    if (params !== null && params.tag === 0x30) {
      try {
        pssParameters = readPssParameters(bytes, params, reader);
      } catch (error) {
        if (!(error instanceof DerDecodeError)) throw error;
      }
    }
    return {
      oid,
      name: UNKNOWN_SIGNATURE,
      hash: pssParameters?.hash ?? null,
      keyAlgorithm: 'RSA',
      pss: true,
      pssParameters,
    };
  }

  const known = SIGNATURE_ALGORITHMS.get(oid);
  if (known === undefined) {
    return { oid, name: UNKNOWN_SIGNATURE, hash: null, keyAlgorithm: 'Unknown', pss: false };
  }
  // RFC 8410 3: Ed25519 parameters MUST be absent; Go names such an identifier Unknown.
  if (known.keyAlgorithm === 'Ed25519' && params !== null) {
    return { oid, name: UNKNOWN_SIGNATURE, hash: null, keyAlgorithm: 'Ed25519', pss: false };
  }
  return { oid, name: known.name, hash: known.hash, keyAlgorithm: known.keyAlgorithm, pss: false };
}
