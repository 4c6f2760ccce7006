/**
 * What revocation needs from the certificate store, as narrow ports (style guide: CRL and OCSP stand
 * on x509-core, the store and the signer contract). Keys are CFSSL's certdb keys (lifecycle spec
 * §2.1): `serial` is decimal text, `authorityKeyId` lower-case hex without separators (the issuing
 * CA's key identifier). The shapes follow `@certsmith/cert-store`'s `Store` so that it satisfies
 * {@link OcspResponseStore} as is, its `CertificateRecord` rows are valid
 * {@link CertificateStatusRecord}s and CRL entries, and a {@link SignedOcspResponse} is a valid
 * `upsertOcspResponse` argument; only {@link CrlStore.revokedCertificates} needs an adapter (pages of
 * `listCertificates({ status: 'revoked', authorityKeyId, expiresAfter: now })`).
 */
import type { RevokedCertificate } from './crl-builder.js';

/** Revoked certificates and CRL numbers, per CA. */
export interface CrlStore {
  /**
   * Revoked certificates of the CA `authorityKeyId` that have not expired at `now` (expired ones drop
   * off the CRL, as in CFSSL), in a stable order. May stream (a cursor): the CRL builder reads one
   * entry at a time.
   */
  revokedCertificates(authorityKeyId: string, now: Date): Iterable<RevokedCertificate> | AsyncIterable<RevokedCertificate>;
  /**
   * The next CRL number of the CA: greater than every number handed out before, by any instance
   * sharing the store (RFC 5280 5.2.3: monotonically increasing). `Store.nextCrlNumber`.
   */
  nextCrlNumber(authorityKeyId: string): Promise<bigint>;
}

/** Stored OCSP responses, per certificate (`Store.getOcspResponse`). */
export interface OcspResponseStore {
  /** The stored response of (serial, CA) — its DER in `body` — or `null`. */
  getOcspResponse(serial: string, authorityKeyId: string): Promise<{ body: Uint8Array } | null>;
}

/** The revocation state of one certificate (a `certificates` row, e.g. a store `CertificateRecord`). */
export interface CertificateStatusRecord {
  serial: string;
  authorityKeyId: string;
  /** `good`, `revoked` or `unknown` (CFSSL's status strings). */
  status: string;
  /** CRLReason code (meaningful for `revoked`). */
  reason: number;
  /** When revoked; `null` otherwise. */
  revokedAt: Date | null;
}

/** A signed OCSP response to store (an `ocsp_responses` row; `Store.upsertOcspResponse`'s argument). */
export interface SignedOcspResponse {
  serial: string;
  authorityKeyId: string;
  /** The DER OCSPResponse. */
  body: Uint8Array;
  /** The response's nextUpdate (CFSSL writes run time + interval, up to an hour later, §0 item 8). */
  expiry: Date;
}
