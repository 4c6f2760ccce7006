/**
 * SubjectPublicKeyInfo of a key that lives on a token, rebuilt from its public attributes
 * (CKA_MODULUS/CKA_PUBLIC_EXPONENT for RSA, CKA_EC_PARAMS/CKA_EC_POINT for EC) with x509-core's DER
 * writer. Needed to put the key into a self-signed certificate or a CSR without the key leaving
 * the token.
 */
import { KeyType, ObjectClass } from 'graphene-pk11';
import type { Session, SessionObject } from 'graphene-pk11';
import pkcs11js from 'pkcs11js';

import {
  DerReader,
  UnsupportedKeyAlgorithmError,
  derBitString,
  derInteger,
  derNull,
  derOid,
  derSequence,
  elementContent,
  readOid,
  readPublicKeyInfo,
} from '@certsmith/x509-core';
import type { PublicKeyInfo } from '@certsmith/x509-core';

import { findObjects } from './token-selector.js';

const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
const EC_PUBLIC_KEY = '1.2.840.10045.2.1';

/** Named curves the plugin generates keys on: name → namedCurve OID. */
export const CURVE_OIDS = {
  'P-256': '1.2.840.10045.3.1.7',
  'P-384': '1.3.132.0.34',
  'P-521': '1.3.132.0.35',
} as const;

/** Field size in bytes per curve OID: an uncompressed point is `04 || X || Y`. */
const FIELD_BYTES: Readonly<Record<string, number>> = {
  [CURVE_OIDS['P-256']]: 32,
  [CURVE_OIDS['P-384']]: 48,
  [CURVE_OIDS['P-521']]: 66,
};

/**
 * A byte-string attribute read by its CKA_ number. Needed for CKA_EC_PARAMS: graphene maps it back
 * to its older alias `paramsECDSA` (same CKA value), so the `paramsEC` name reads as undefined.
 */
export function bytesAttribute(object: SessionObject, type: number): Buffer {
  return object.getAttribute(type) as Buffer;
}

/** CKA_EC_PARAMS and CKA_EC_POINT of an EC public key object. */
export function ecPublicKeyAttributes(object: SessionObject): { params: Buffer; point: Buffer } {
  return { params: bytesAttribute(object, pkcs11js.CKA_EC_PARAMS), point: bytesAttribute(object, pkcs11js.CKA_EC_POINT) };
}

/** Parse a SubjectPublicKeyInfo DER into the x509-core model. */
export function publicKeyInfoFromSpki(spki: Uint8Array): PublicKeyInfo {
  const reader = new DerReader(spki);
  return readPublicKeyInfo(spki, reader.expect(0x30, 'SubjectPublicKeyInfo'), reader);
}

/** SPKI of an RSA key from its modulus and public exponent (unsigned big-endian). */
export function rsaSpki(modulus: Uint8Array, publicExponent: Uint8Array): Uint8Array {
  return derSequence(derSequence(derOid(RSA_ENCRYPTION), derNull()), derBitString(derSequence(derInteger(modulus), derInteger(publicExponent))));
}

/**
 * SPKI of an EC key. `ecParams` is CKA_EC_PARAMS (the DER namedCurve OID, placed as it is);
 * `ecPoint` is CKA_EC_POINT, which PKCS#11 v2.40 §2.3.3 defines as a DER OCTET STRING around the
 * point but which some tokens return bare — both are accepted.
 */
export function ecSpki(ecParams: Uint8Array, ecPoint: Uint8Array): Uint8Array {
  if (ecParams[0] !== 0x06) throw new UnsupportedKeyAlgorithmError('EC key uses explicit curve parameters; only named curves are supported');
  const curveOid = readOid(ecParams, new DerReader(ecParams).expect(0x06, 'CKA_EC_PARAMS'));
  const fieldBytes = FIELD_BYTES[curveOid];
  let point = ecPoint;
  const bareLength = fieldBytes === undefined ? -1 : 2 * fieldBytes + 1;
  if (!(point.length === bareLength && point[0] === 0x04)) {
    // DER OCTET STRING wrapping: unwrap it.
    point = elementContent(ecPoint, new DerReader(ecPoint).expect(0x04, 'CKA_EC_POINT'));
  }
  return derSequence(derSequence(derOid(EC_PUBLIC_KEY), ecParams), derBitString(point));
}

/**
 * SPKI of the key pair around `privateKey`: read from the private key itself for RSA (CKA_MODULUS
 * and CKA_PUBLIC_EXPONENT are public attributes of RSA private keys), and from the matching public
 * key object for EC (EC private keys do not carry the point). The public object is found by the
 * private key's CKA_ID, then by its CKA_LABEL.
 */
export function readKeySpki(session: Session, privateKey: SessionObject): Uint8Array {
  const { keyType, id, label } = privateKey.getAttribute({ keyType: null, id: null, label: null }) as { keyType: number; id: Buffer; label: string };
  if (keyType === KeyType.RSA) {
    const { modulus, publicExponent } = privateKey.getAttribute({ modulus: null, publicExponent: null }) as { modulus: Buffer; publicExponent: Buffer };
    return rsaSpki(modulus, publicExponent);
  }
  if (keyType === KeyType.EC) {
    const candidates = [
      ...(id && id.length > 0 ? findObjects(session, ObjectClass.PUBLIC_KEY, { keyId: id.toString('hex') }) : []),
      ...findObjects(session, ObjectClass.PUBLIC_KEY, { keyLabel: label }),
    ];
    const publicKey = candidates[0];
    if (publicKey === undefined) {
      throw new UnsupportedKeyAlgorithmError(`EC private key "${label}" has no public key object (same CKA_ID or CKA_LABEL) to read the point from`);
    }
    const { params, point } = ecPublicKeyAttributes(publicKey);
    return ecSpki(params, point);
  }
  throw new UnsupportedKeyAlgorithmError(`key type ${keyType} is not supported; use RSA or EC keys`);
}
