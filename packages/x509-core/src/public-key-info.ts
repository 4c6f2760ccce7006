/**
 * SubjectPublicKeyInfo (RFC 5280 4.1.2.7) decoding: the facts CFSSL reports (key type, RSA modulus
 * bits, EC curve bits) and accessors for the key material used to match private keys.
 */
import type { KeyAlgorithm, PublicKeyInfo } from './certificate-model.js';
import {
  DerReader,
  decodeOid,
  elementBytes,
  readBitString,
  readIntegerBytes,
  readOid,
  unsignedBitLength,
} from './der-reader.js';
import type { DerElement } from './der-reader.js';
import { DerDecodeError } from './errors.js';
import { Oid } from './oids.js';

/** Named curves Go supports: OID → [name, bits]. */
const CURVES: ReadonlyMap<string, readonly [string, number]> = new Map([
  [Oid.secp224r1, ['P-224', 224] as const],
  [Oid.prime256v1, ['P-256', 256] as const],
  [Oid.secp384r1, ['P-384', 384] as const],
  [Oid.secp521r1, ['P-521', 521] as const],
]);

/** Curve name (`P-256`…) and bit size for a namedCurve OID, `null` when unknown. */
export function namedCurve(oid: string): { name: string; bits: number } | null {
  const known = CURVES.get(oid);
  return known ? { name: known[0], bits: known[1] } : null;
}

/** Unsigned magnitude of INTEGER content (leading 0x00 sign octets removed). */
function magnitude(content: Uint8Array): Uint8Array {
  let i = 0;
  while (i < content.length - 1 && content[i] === 0) i++;
  return content.subarray(i);
}

/** RSA public key components as unsigned big-endian magnitudes. */
export interface RsaPublicKeyComponents {
  modulus: Uint8Array;
  publicExponent: Uint8Array;
}

/** Parse an RSAPublicKey (RFC 8017 A.1.1) from BIT STRING contents; throws DerDecodeError. */
export function readRsaPublicKey(subjectPublicKey: Uint8Array): RsaPublicKeyComponents {
  const reader = new DerReader(subjectPublicKey).sequence('RSAPublicKey');
  const modulusContent = readIntegerBytes(subjectPublicKey, reader.expect(0x02, 'modulus'));
  const exponentContent = readIntegerBytes(subjectPublicKey, reader.expect(0x02, 'publicExponent'));
  reader.finish('RSAPublicKey');
  // Go rejects non-positive moduli and exponents ("x509: RSA modulus is not a positive number").
  if (modulusContent[0]! & 0x80 || unsignedBitLength(modulusContent) === 0) throw new DerDecodeError('RSA modulus is not positive', 0);
  if (exponentContent[0]! & 0x80 || unsignedBitLength(exponentContent) === 0) throw new DerDecodeError('RSA exponent is not positive', 0);
  return { modulus: magnitude(modulusContent), publicExponent: magnitude(exponentContent) };
}

/**
 * RSA modulus and exponent of an RSA public key (`null` for other algorithms). CFSSL matches RSA
 * private keys to certificates by modulus (behaviour doc 2.3).
 */
export function rsaPublicKeyComponents(publicKey: PublicKeyInfo): RsaPublicKeyComponents | null {
  if (publicKey.algorithmOid !== Oid.rsaEncryption) return null;
  return readRsaPublicKey(publicKey.subjectPublicKey);
}

/**
 * X (and Y, for uncompressed points) coordinate of an EC public key point (SEC 1 2.3.3), `null`
 * for non-EC keys. CFSSL matches ECDSA private keys to certificates by X only (behaviour doc 2.3).
 */
export function ecPublicKeyCoordinates(publicKey: PublicKeyInfo): { x: Uint8Array; y: Uint8Array | null } | null {
  if (publicKey.algorithmOid !== Oid.ecPublicKey) return null;
  return ecPointCoordinates(publicKey.subjectPublicKey);
}

/** Split an encoded EC point (uncompressed `04‖X‖Y` or compressed `02/03‖X`). */
export function ecPointCoordinates(point: Uint8Array): { x: Uint8Array; y: Uint8Array | null } {
  const prefix = point[0];
  if (prefix === 0x04 && point.length >= 3 && point.length % 2 === 1) {
    const size = (point.length - 1) / 2;
    return { x: point.subarray(1, 1 + size), y: point.subarray(1 + size) };
  }
  if ((prefix === 0x02 || prefix === 0x03) && point.length >= 2) return { x: point.subarray(1), y: null };
  throw new DerDecodeError('invalid EC point encoding', 0);
}

/**
 * Decode a SubjectPublicKeyInfo SEQUENCE element. Key material is validated as far as Go does when
 * parsing a certificate (RSA key well-formed and positive, Ed25519 key 32 bytes, EC point encoded
 * sanely); curves Go does not know keep their OID as `curve` instead of failing, and RSA-PSS or
 * other SPKI algorithms parse as `Unknown` (CFSSL's key_type "Unknown").
 */
export function readPublicKeyInfo(bytes: Uint8Array, element: DerElement, parent: DerReader): PublicKeyInfo {
  const reader = parent.enter(element);
  const algorithmElement = reader.expect(0x30, 'SPKI algorithm');
  const algorithmReader = reader.enter(algorithmElement);
  const oidElement = algorithmReader.expect(0x06, 'SPKI algorithm OID');
  const algorithmOid = decodeOid(bytes, oidElement.valueStart, oidElement.end);
  const params = algorithmReader.hasMore() ? algorithmReader.read() : null;
  algorithmReader.finish('SPKI AlgorithmIdentifier');
  const keyBits = readBitString(bytes, reader.expect(0x03, 'subjectPublicKey'));
  reader.finish('SubjectPublicKeyInfo');
  const subjectPublicKey = keyBits.bytes;

  let algorithm: KeyAlgorithm = 'Unknown';
  let bits = 0;
  let curve: string | null = null;
  switch (algorithmOid) {
    case Oid.rsaEncryption: {
      algorithm = 'RSA';
      bits = unsignedBitLength(readRsaPublicKey(subjectPublicKey).modulus);
      break;
    }
    case Oid.ecPublicKey: {
      algorithm = 'ECDSA';
      const point = ecPointCoordinates(subjectPublicKey);
      if (params !== null && params.tag === 0x06) {
        const curveOid = readOid(bytes, params);
        const known = namedCurve(curveOid);
        curve = known ? known.name : curveOid;
        bits = known ? known.bits : point.x.length * 8;
      } else {
        // Explicit curve parameters (RFC 5480 forbids them; Go refuses them): size from the point.
        bits = point.x.length * 8;
      }
      break;
    }
    case Oid.ed25519: {
      algorithm = 'Ed25519';
      if (subjectPublicKey.length !== 32) throw new DerDecodeError('Ed25519 public key must be 32 bytes', element.start);
      bits = 256;
      break;
    }
    case Oid.ed448: {
      algorithm = 'Ed448';
      bits = 456;
      break;
    }
    case Oid.dsa: {
      // CFSSL's key_size for DSA is 0 (helpers.KeyLength has no DSA case); bits stays 0.
      algorithm = 'DSA';
      break;
    }
    default:
      break;
  }
  return {
    algorithm,
    algorithmOid,
    bits,
    curve,
    spki: elementBytes(bytes, element),
    subjectPublicKey,
  };
}
