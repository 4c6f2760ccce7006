/**
 * The issuing worker's half of recording at issuance (`issued-recording.ts` is the main thread's):
 * the issuer's worker hook (`@certsmith/issuer`'s `WorkerIssuedHook`) that, for every certificate a
 * worker signs, reads the fields of its store row and — when the CA signs its own OCSP responses —
 * signs its first OCSP response ("good") with the worker's copy of the CA key. Both used to run on
 * the event loop, the server's busiest thread with the store on; there only the batching of rows and
 * the commit's answer remain (docs/performance.md, "Store-on speed pass 2"). With `--processes N`
 * the serving processes have no threads and the hook runs on the event loop, so it reads only the
 * row's fields and writes the response from the CA's template (docs/performance.md, "Recording at
 * issuance: the hook's own work").
 *
 * The main thread decides which labels the worker signs for ({@link issuedRecordingWorkerData}):
 * those whose CA signs its own responses with the same certificate the worker holds. Certificates of
 * other labels (a delegated responder, an HSM, whose key the worker does not hold) get their row
 * fields only, and the record port signs their response on the main thread as before.
 */
import { performance } from 'node:perf_hooks';
import type { IssuedCertificateFields, IssuedOcspResponse } from '@certsmith/cert-store';
import type { WorkerIssuedCertificate, WorkerIssuedHook, WorkerIssuedHookResult } from '@certsmith/issuer';
import type { OcspResponseTemplate, RevocationSigner } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';

/** What the hook gives the record port for one certificate (the issuer's `attachment`). */
export interface IssuedRecordingAttachment {
  readonly kind: 'issued-recording';
  /** The row's values read from the certificate. */
  readonly fields: IssuedCertificateFields;
  /** Its first OCSP response, signed in the worker; `null` when the worker does not sign for its CA. */
  readonly ocspResponse: IssuedOcspResponse | null;
}

/** The hook's data (cloned into every worker). */
export interface IssuedRecordingWorkerData {
  /** Labels whose certificates' first OCSP response the worker signs with its copy of the label's signer. */
  readonly ocspLabels: readonly string[];
  /** The OCSP responses' validity (`--ocsp-interval`). */
  readonly ocspIntervalMs: number;
}

/** This module, for the issuer's hook spec (`issued-recording.ts`). */
export const ISSUED_RECORDING_WORKER_MODULE: string = import.meta.url;

/** True when `value` is what {@link createIssuedHook}'s hook attached. */
export function isIssuedRecordingAttachment(value: unknown): value is IssuedRecordingAttachment {
  return typeof value === 'object' && value !== null && (value as Partial<IssuedRecordingAttachment>).kind === 'issued-recording';
}

/** The modules the hook needs, imported on the first certificate: a worker that never records does not load them. */
interface HookModules {
  readonly x509: typeof import('@certsmith/x509-core');
  readonly store: typeof import('@certsmith/cert-store');
  readonly revocation: typeof import('@certsmith/revocation');
}
/** Set once the imports are done: from then on a certificate's hook awaits nothing but its OCSP signature. */
let loaded: HookModules | null = null;
let loading: Promise<HookModules> | null = null;
const loadModules = (): Promise<HookModules> =>
  (loading ??= Promise.all([import('@certsmith/x509-core'), import('@certsmith/cert-store'), import('@certsmith/revocation')]).then(([x509, store, revocation]) => (loaded = { x509, store, revocation })));

/** What signing the first OCSP responses of one label's signer needs, prepared once per signer object. */
interface PreparedOcsp {
  /** The CA key as a revocation signer (its signature algorithm chosen once). */
  signer: RevocationSigner;
  /** The constant parts of the CA's responses, encoded once. */
  template: OcspResponseTemplate;
  /** The CA's key identifier (lower-case hex): the AKI of the certificates it signs for. */
  keyIdentifierHex: string;
}

/** `signSeconds` of a certificate whose hook signed nothing. */
const NO_SIGNATURES: readonly number[] = Object.freeze([]);

/**
 * The issuer's `createIssuedHook` (named by {@link issuedRecordingWorkerData}'s spec in
 * `issued-recording.ts`): one hook per worker thread.
 */
export function createIssuedHook(data: unknown): WorkerIssuedHook {
  const { ocspLabels, ocspIntervalMs } = data as IssuedRecordingWorkerData;
  const signsFor = new Set(ocspLabels);
  // Per signer object: the worker keeps one copy per label (`worker-signers.ts`).
  const prepared = new WeakMap<Signer, PreparedOcsp>();
  const preparing = new WeakMap<Signer, Promise<PreparedOcsp>>();
  const prepare = (signer: Signer, label: string): Promise<PreparedOcsp> => {
    let promise = preparing.get(signer);
    if (promise === undefined) {
      promise = (async () => {
        const { revocation } = loaded ?? (await loadModules());
        const ca = await revocation.createRevocationSigner(signer, { label });
        const made = { signer: ca, template: revocation.ocspResponseTemplate(revocation.createOcspSigningIdentity({ signer: ca })), keyIdentifierHex: ca.keyIdentifierHex };
        prepared.set(signer, made);
        return made;
      })();
      preparing.set(signer, promise);
      // A failure is not kept: the next certificate tries again (and this one fails with the error).
      promise.catch(() => preparing.delete(signer));
    }
    return promise;
  };

  /** A certificate's first OCSP response ("good"): the only await of the hook, its signature. */
  const signFirstResponse = async (fields: IssuedCertificateFields, serialContent: Uint8Array, ocsp: PreparedOcsp): Promise<WorkerIssuedHookResult> => {
    const { revocation } = loaded!;
    const validity = revocation.ocspValidity(new Date(), ocspIntervalMs);
    const responseData = ocsp.template.responseData({ serialNumber: serialContent, status: 'good', ...validity });
    const started = performance.now();
    const signature = await ocsp.signer.sign(responseData);
    // For the signer metrics, as the certificate's own signature is timed.
    const seconds = (performance.now() - started) / 1000;
    return { attachment: attachment(fields, { body: ocsp.template.response(responseData, signature), expiry: validity.nextUpdate }), signSeconds: [seconds] };
  };

  const hook: WorkerIssuedHook = (issued) => {
    // The first certificates of a thread (or of a signer) wait for the imports and the preparation.
    if (loaded === null) return loadModules().then(() => hook(issued));
    const signs = signsFor.has(issued.label);
    const ocsp = signs ? prepared.get(issued.signer) : undefined;
    if (signs && ocsp === undefined) return prepare(issued.signer, issued.label).then(() => hook(issued));
    const read = loaded.x509.readCertificateStoreFields(issued.certificateDer);
    const fields = loaded.store.signedCertificateFields(read, issued.certificatePem);
    // The main thread picks the OCSP signer by the certificate's AKI; any other AKI is its to sign.
    if (ocsp === undefined || fields.authorityKeyId !== ocsp.keyIdentifierHex) return { attachment: attachment(fields, null), signSeconds: NO_SIGNATURES };
    return signFirstResponse(fields, read.serialNumber, ocsp);
  };
  return hook;
}

function attachment(fields: IssuedCertificateFields, ocspResponse: IssuedOcspResponse | null): IssuedRecordingAttachment {
  return { kind: 'issued-recording', fields, ocspResponse };
}
