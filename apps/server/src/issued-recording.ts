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
 * port: the issuer records only what it signs, and the CA that signs them records them. Certificates
 * a worker signed arrive with what the worker already made for their row (`issued-recording-worker.ts`).
 */
import { authorityKeyIdHex, serialToDecimal } from '@certsmith/cert-store';
import type { IssuedCertificateFields, IssuedOcspResponse, Store } from '@certsmith/cert-store';
import type { RecordIssued, SignerEntry, WorkerIssuedHookSpec } from '@certsmith/issuer';
import type { CertificateStatusRecord, SignedOcspResponse } from '@certsmith/revocation';
import { parseCertificate } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';
import { ISSUED_RECORDING_WORKER_MODULE, createIssuedHook, isIssuedRecordingAttachment } from './issued-recording-worker.js';
import type { IssuedRecordingWorkerData } from './issued-recording-worker.js';
import type { RevocationAuthorities } from './revocation/revocation-authorities.js';

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

/**
 * The issuer's record port on `options.store` (see the module comment). A certificate signed in a
 * worker comes with its row's fields, and usually its first OCSP response, already made there
 * ({@link issuedRecordingWorkerHook}); what is missing is done here.
 */
export function createIssuedRecorder(options: IssuedRecorderOptions): RecordIssued {
  const { store } = options;
  const ocsp = options.ocsp ?? null;
  if (ocsp === null) {
    return async (issued) => {
      const prepared = isIssuedRecordingAttachment(issued.attachment) ? issued.attachment : null;
      await store.recordCertificate({ certificate: prepared?.fields ?? issued.certificateDer, label: issued.label });
    };
  }
  return async (issued) => {
    const prepared = isIssuedRecordingAttachment(issued.attachment) ? issued.attachment : null;
    // Read once: the row's key for the OCSP response, then the row itself from the same values.
    const certificate: Certificate | IssuedCertificateFields = prepared?.fields ?? parseCertificate(issued.certificateDer);
    const { serial, authorityKeyId } = prepared?.fields ?? rowKeyOf(certificate as Certificate);
    let ocspResponse: IssuedOcspResponse | undefined = prepared?.ocspResponse ?? undefined;
    if (ocspResponse === undefined) {
      const signed = await ocsp.signStatus({ serial, authorityKeyId, status: 'good', reason: 0, revokedAt: null });
      if (signed !== null) ocspResponse = { body: signed.body, expiry: signed.expiry };
    }
    await store.recordCertificate({ certificate, label: issued.label, ...(ocspResponse === undefined ? {} : { ocspResponse }) });
    ocsp.recorded?.(serial, authorityKeyId);
  };
}

/** What {@link issuedRecordingWorkerHook} needs. */
export interface IssuedRecordingWorkerHookOptions {
  /** The server's signers: those recreated in the workers (`workerRecipe`) sign there. */
  signers: readonly SignerEntry[];
  /** The CAs this server signs OCSP responses for; `null` when it signs none at issuance (rows only). */
  authorities: Pick<RevocationAuthorities, 'byLabel' | 'byKeyIdentifier'> | null;
  /** The OCSP responses' validity (`--ocsp-interval`). */
  ocspIntervalMs: number;
}

/**
 * The issuer's worker hook for recording (`IssuingWorkerSetup.issuedHook`): the workers read every
 * certificate's row fields, and sign the first OCSP response of the labels whose CA signs its own
 * responses with the very certificate and key the worker holds — the response the revocation
 * service would sign here for that certificate's AKI. A delegated responder, or a CA this server
 * does not sign for, stays with {@link createIssuedRecorder} on the main thread.
 */
export function issuedRecordingWorkerHook(options: IssuedRecordingWorkerHookOptions): WorkerIssuedHookSpec {
  const ocspLabels: string[] = [];
  const { authorities } = options;
  for (const entry of options.signers) {
    if (entry.workerRecipe === undefined || authorities === null) continue;
    const authority = authorities.byLabel(entry.label);
    if (authority === undefined) continue;
    // The identity the revocation service signs with for this CA's certificates (first label of the key).
    const signing = authorities.byKeyIdentifier(authority.keyIdentifier);
    if (signing === undefined || signing.ocsp.delegated) continue;
    if (!Buffer.from(signing.ocsp.signer.certificate.der).equals(authority.ca.certificate.der)) continue;
    ocspLabels.push(entry.label);
  }
  const data: IssuedRecordingWorkerData = { ocspLabels, ocspIntervalMs: options.ocspIntervalMs };
  // With the module's createIssuedHook: the event loop, which holds this module, makes its hook without a second copy.
  return { module: ISSUED_RECORDING_WORKER_MODULE, data, createIssuedHook };
}

/** The store key of an issued certificate: CFSSL's decimal serial and lower-hex AKI. */
function rowKeyOf(certificate: Certificate): { serial: string; authorityKeyId: string } {
  return { serial: serialToDecimal(certificate.serialNumberHex), authorityKeyId: authorityKeyIdHex(certificate) };
}
