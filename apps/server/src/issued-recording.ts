/**
 * Recording at issuance in `serve`: the issuer's `recordIssued` port on the certificate store.
 *
 * Every certificate this server signs (newcert, sign, authsign — here or in a worker) is written
 * with the label of the signer that signed it, and — when this server signs OCSP responses for that
 * CA — with its first OCSP response ("good"), in the same transaction: the row and the response
 * exist from the moment the certificate is handed out, never one without the other. The store
 * groups the records of one event-loop turn into one transaction (`recordCertificate`), and the
 * request waits for that commit. A store that cannot be reached fails the request with the store's
 * 503 + `Retry-After` (the request store's fixed message), so no certificate leaves unrecorded.
 *
 * Certificates a remote CA signed (a forwarding `@certsmith/signer-multiroot`) never reach this
 * port: the issuer records only what it signs, and the CA that signs them records them.
 */
import { authorityKeyIdHex, serialToDecimal } from '@certsmith/cert-store';
import type { IssuedOcspResponse, Store } from '@certsmith/cert-store';
import type { RecordIssued } from '@certsmith/issuer';
import type { CertificateStatusRecord, SignedOcspResponse } from '@certsmith/revocation';
import { parseCertificate } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';

/** Signs the OCSP response of a certificate being recorded (the revocation service's `signStatus`). */
export interface IssuanceOcspSigner {
  /** The response stating `record`'s status; `null` when this server does not sign for its CA. */
  signStatus(record: CertificateStatusRecord): Promise<SignedOcspResponse | null>;
  /** Called once the row and its response are committed (drops a cached "unknown" answer). */
  recorded?(serial: string, authorityKeyId: string): void;
}

/** What {@link createIssuedRecorder} needs. */
export interface IssuedRecorderOptions {
  /** The store as requests use it (`storeForRequests`: an unreachable database is a 503 with `Retry-After`). */
  store: Store;
  /** Who signs the first OCSP response; absent: rows only (the OCSP refresh signs them later). */
  ocsp?: IssuanceOcspSigner | null;
}

/** The issuer's record port on `options.store` (see the module comment). */
export function createIssuedRecorder(options: IssuedRecorderOptions): RecordIssued {
  const { store } = options;
  const ocsp = options.ocsp ?? null;
  if (ocsp === null) {
    return async (issued) => {
      await store.recordCertificate({ certificate: issued.certificateDer, label: issued.label });
    };
  }
  return async (issued) => {
    // Parsed once: the row's key for the OCSP response, then the row itself from the same parse.
    const certificate = parseCertificate(issued.certificateDer);
    const { serial, authorityKeyId } = rowKeyOf(certificate);
    const signed = await ocsp.signStatus({ serial, authorityKeyId, status: 'good', reason: 0, revokedAt: null });
    const ocspResponse: IssuedOcspResponse | undefined = signed === null ? undefined : { body: signed.body, expiry: signed.expiry };
    await store.recordCertificate({ certificate, label: issued.label, ...(ocspResponse === undefined ? {} : { ocspResponse }) });
    ocsp.recorded?.(serial, authorityKeyId);
  };
}

/** The store key of an issued certificate: CFSSL's decimal serial and lower-hex AKI. */
function rowKeyOf(certificate: Certificate): { serial: string; authorityKeyId: string } {
  return { serial: serialToDecimal(certificate.serialNumberHex), authorityKeyId: authorityKeyIdHex(certificate) };
}
