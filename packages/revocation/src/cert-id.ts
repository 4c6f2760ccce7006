/**
 * OCSP CertIDs (RFC 6960 4.1.1): the hash algorithm, the hash of the issuer's Name DER, the hash of
 * the issuer's public key bits (the subjectPublicKey BIT STRING contents, without the SPKI wrapper)
 * and the serial. CFSSL answers SHA-1 CertIDs only (lifecycle spec §5.4); certsmith reads and writes
 * SHA-1, SHA-256, SHA-384 and SHA-512.
 */
import { createHash } from 'node:crypto';

import type { Certificate } from '@certsmith/x509-core';
import { derNull, derOctetString, derOid, derSequence, derTlv, Tag } from '@certsmith/x509-core';

/** Hash algorithms of a CertID. */
export type CertIdHashAlgorithm = 'SHA1' | 'SHA256' | 'SHA384' | 'SHA512';

/** Every CertID hash algorithm, the default (SHA-1, what clients send) first. */
export const CERT_ID_HASH_ALGORITHMS: readonly CertIdHashAlgorithm[] = ['SHA1', 'SHA256', 'SHA384', 'SHA512'];

const OIDS: Readonly<Record<CertIdHashAlgorithm, string>> = {
  SHA1: '1.3.14.3.2.26',
  SHA256: '2.16.840.1.101.3.4.2.1',
  SHA384: '2.16.840.1.101.3.4.2.2',
  SHA512: '2.16.840.1.101.3.4.2.3',
};
const NODE_NAMES: Readonly<Record<CertIdHashAlgorithm, string>> = { SHA1: 'sha1', SHA256: 'sha256', SHA384: 'sha384', SHA512: 'sha512' };
const BY_OID = new Map<string, CertIdHashAlgorithm>(Object.entries(OIDS).map(([name, oid]) => [oid, name as CertIdHashAlgorithm]));

/** The CertID hash algorithm of an OID, `null` when unsupported. */
export function certIdHashFromOid(oid: string): CertIdHashAlgorithm | null {
  return BY_OID.get(oid) ?? null;
}

/** The AlgorithmIdentifier of a CertID hash, with NULL parameters as Go and OpenSSL write it. */
export function certIdHashIdentifier(algorithm: CertIdHashAlgorithm): Uint8Array {
  return derSequence(derOid(OIDS[algorithm]), derNull());
}

/** Hash `data` with a CertID hash algorithm. */
export function certIdHash(algorithm: CertIdHashAlgorithm, data: Uint8Array): Uint8Array {
  return new Uint8Array(createHash(NODE_NAMES[algorithm]).update(data).digest());
}

/** A CertID as read from a request or response. */
export interface CertId {
  hashAlgorithm: CertIdHashAlgorithm;
  issuerNameHash: Uint8Array;
  issuerKeyHash: Uint8Array;
  /** DER INTEGER content octets of the serial. */
  serialNumber: Uint8Array;
}

/** The issuer half of a CertID for one hash algorithm. */
export interface IssuerHashes {
  nameHash: Uint8Array;
  keyHash: Uint8Array;
}

/** The issuer's name and key hashes under `algorithm`. */
export function issuerHashes(issuer: Certificate, algorithm: CertIdHashAlgorithm): IssuerHashes {
  return { nameHash: certIdHash(algorithm, issuer.subject.der), keyHash: certIdHash(algorithm, issuer.publicKey.subjectPublicKey) };
}

/** DER of a CertID. */
export function encodeCertId(algorithm: CertIdHashAlgorithm, hashes: IssuerHashes, serialContent: Uint8Array): Uint8Array {
  return derSequence(
    certIdHashIdentifier(algorithm),
    derOctetString(hashes.nameHash),
    derOctetString(hashes.keyHash),
    derTlv(Tag.Integer, serialContent),
  );
}

/** Lower-case hex, the form CFSSL's store and lookups use for key hashes and AKIs. */
export function hex(bytes: Uint8Array): string {
  // Native encoding: the responder computes these per request.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}
