/**
 * The CAs a responder answers for, indexed by their CertID hashes under every supported algorithm.
 * This is what lets certsmith answer SHA-256 CertIDs (CFSSL's DB lookup keys on hex(issuerKeyHash),
 * which only matches SHA-1 and only when the CA's SKI is the SHA-1 of its key, lifecycle spec §5.4),
 * and what turns a request into the store's key: (decimal serial, the CA's key identifier).
 */
import type { Certificate } from '@certsmith/x509-core';
import { computeSubjectKeyId, parseCertificate } from '@certsmith/x509-core';

import type { CertId, CertIdHashAlgorithm, IssuerHashes } from './cert-id.js';
import { CERT_ID_HASH_ALGORITHMS, hex, issuerHashes } from './cert-id.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';

/** A CA known to the responder. */
export interface OcspIssuer {
  readonly certificate: Certificate;
  /** The CA's key identifier (SKI, or SHA-1 of its key bits), lower-case hex: the store's `authority_key_identifier`. */
  readonly keyIdentifier: string;
  /** Signs fresh responses for this CA (nonces, other CertID hashes); `null` when only stored ones are served. */
  readonly identity: OcspSigningIdentity | null;
  /** The CA's CertID hashes under `algorithm`. */
  hashes(algorithm: CertIdHashAlgorithm): IssuerHashes;
}

/** Describe a CA for the responder: its certificate (parsed or DER), or a signing identity (which can also sign). */
export function createOcspIssuer(source: Certificate | Uint8Array | OcspSigningIdentity): OcspIssuer {
  const identity = 'signer' in source && 'issuerHashes' in source ? source : null;
  const certificate = identity ? identity.issuer : source instanceof Uint8Array ? parseCertificate(source) : (source as Certificate);
  const ski = certificate.subjectKeyId;
  const all = new Map<CertIdHashAlgorithm, IssuerHashes>(CERT_ID_HASH_ALGORITHMS.map((algorithm) => [algorithm, issuerHashes(certificate, algorithm)]));
  return {
    certificate,
    keyIdentifier: hex(ski && ski.length > 0 ? ski : computeSubjectKeyId(certificate.publicKey)),
    identity,
    hashes: (algorithm) => all.get(algorithm)!,
  };
}

/** Finds the issuer of a CertID by (hash algorithm, issuerKeyHash). */
export class OcspIssuerDirectory {
  private readonly byKeyHash = new Map<string, OcspIssuer>();

  constructor(issuers: Iterable<OcspIssuer>) {
    for (const issuer of issuers) {
      for (const algorithm of CERT_ID_HASH_ALGORITHMS) this.byKeyHash.set(`${algorithm}:${hex(issuer.hashes(algorithm).keyHash)}`, issuer);
    }
  }

  /** Number of distinct lookup keys (4 per issuer). */
  get size(): number {
    return this.byKeyHash.size;
  }

  /**
   * The issuer a CertID names, or `null`. Matched on the key hash, as CFSSL's store lookup does; the
   * name hash is not compared (a re-issued CA keeps its key and its certificates).
   */
  find(certId: CertId): OcspIssuer | null {
    // No -ca: nothing to find, and no key to build per request.
    if (this.byKeyHash.size === 0) return null;
    return this.byKeyHash.get(`${certId.hashAlgorithm}:${hex(certId.issuerKeyHash)}`) ?? null;
  }
}
