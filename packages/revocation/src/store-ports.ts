/**
 * What revocation needs from the certificate store, as narrow ports (style guide: CRL and OCSP stand
 * on x509-core, the store and the signer contract). Keys are CFSSL's certdb keys (lifecycle spec
 * §2.1): `serialNumber` is decimal text, `authorityKeyId` lower-case hex without separators (the
 * issuing CA's key identifier). `@certsmith/cert-store` implements them; tests use in-memory ones.
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
   * sharing the store (RFC 5280 5.2.3: monotonically increasing).
   */
  nextCrlNumber(authorityKeyId: string): Promise<bigint>;
}

/** Stored OCSP responses, per certificate. */
export interface OcspResponseStore {
  /** The stored response DER of (serial, CA), or `null`. */
  findOcspResponse(serialNumber: string, authorityKeyId: string): Promise<Uint8Array | null>;
}

/** The revocation state of one certificate (a `certificates` row). */
export interface CertificateStatusRecord {
  serialNumber: string;
  authorityKeyId: string;
  /** `good`, `revoked` or `unknown` (CFSSL's status strings). */
  status: string;
  /** CRLReason code (meaningful for `revoked`). */
  reason: number;
  /** When revoked; `null` (or Go's zero time) otherwise. */
  revokedAt: Date | null;
  /** The certificate's notAfter. */
  expiry: Date;
}

/** A signed OCSP response to store (an `ocsp_responses` row). */
export interface OcspResponseRecord {
  serialNumber: string;
  authorityKeyId: string;
  der: Uint8Array;
  /** The response's nextUpdate (CFSSL writes run time + interval, up to an hour later, §0 item 8). */
  expiry: Date;
}
