/**
 * The issuing worker's half of recording at issuance (`issued-recording.ts` is the main thread's):
 * the issuer's worker hook (`@certsmith/issuer`'s `WorkerIssuedHook`) that, for every certificate a
 * worker signs, reads the fields of its store row and — when the CA signs its own OCSP responses —
 * signs its first OCSP response ("good") with the worker's copy of the CA key. Both used to run on
 * the event loop, the server's busiest thread with the store on; there only the batching of rows and
 * the commit's answer remain (docs/performance.md, "Store-on speed pass 2").
 *
 * The main thread decides which labels the worker signs for ({@link issuedRecordingWorkerData}):
 * those whose CA signs its own responses with the same certificate the worker holds. Certificates of
 * other labels (a delegated responder, an HSM, whose key the worker does not hold) get their row
 * fields only, and the record port signs their response on the main thread as before.
 */
import { performance } from 'node:perf_hooks';
import type { IssuedCertificateFields, IssuedOcspResponse } from '@certsmith/cert-store';
import type { WorkerIssuedCertificate, WorkerIssuedHook, WorkerIssuedHookResult } from '@certsmith/issuer';
import type { OcspSigningIdentity } from '@certsmith/revocation';
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
type HookModules = [typeof import('@certsmith/cert-store'), typeof import('@certsmith/revocation')];
let modules: Promise<HookModules> | null = null;
const loadModules = (): Promise<HookModules> => (modules ??= Promise.all([import('@certsmith/cert-store'), import('@certsmith/revocation')]));

interface PreparedOcsp {
  identity: OcspSigningIdentity;
  /** The CA's key identifier (lower-case hex): the AKI of the certificates it signs for. */
  keyIdentifierHex: string;
}

/**
 * The issuer's `createIssuedHook` (named by {@link issuedRecordingWorkerData}'s spec in
 * `issued-recording.ts`): one hook per worker thread.
 */
export function createIssuedHook(data: unknown): WorkerIssuedHook {
  const { ocspLabels, ocspIntervalMs } = data as IssuedRecordingWorkerData;
  const signsFor = new Set(ocspLabels);
  // Per signer object: the worker keeps one copy per label (`worker-signers.ts`).
  const prepared = new WeakMap<Signer, Promise<PreparedOcsp>>();
  const prepare = async (signer: Signer, label: string): Promise<PreparedOcsp> => {
    const [, revocation] = await loadModules();
    const ca = await revocation.createRevocationSigner(signer, { label });
    return { identity: revocation.createOcspSigningIdentity({ signer: ca }), keyIdentifierHex: ca.keyIdentifierHex };
  };
  return async (issued: WorkerIssuedCertificate): Promise<WorkerIssuedHookResult> => {
    const [store, revocation] = await loadModules();
    const fields = store.issuedCertificateFields(issued.certificateDer);
    if (!signsFor.has(issued.label)) return { attachment: attachment(fields, null), signSeconds: [] };
    let ocsp = prepared.get(issued.signer);
    if (ocsp === undefined) {
      ocsp = prepare(issued.signer, issued.label);
      prepared.set(issued.signer, ocsp);
      ocsp.catch(() => prepared.delete(issued.signer));
    }
    const { identity, keyIdentifierHex } = await ocsp;
    // The main thread picks the OCSP signer by the certificate's AKI; any other AKI is its to sign.
    if (fields.authorityKeyId !== keyIdentifierHex) return { attachment: attachment(fields, null), signSeconds: [] };
    const timing = { seconds: 0 };
    const signed = await revocation.signOcspForRecord(
      timedIdentity(identity, timing),
      { serial: fields.serial, authorityKeyId: fields.authorityKeyId, status: 'good', reason: 0, revokedAt: null },
      { intervalMs: ocspIntervalMs },
    );
    return { attachment: attachment(fields, { body: signed.body, expiry: signed.expiry }), signSeconds: [timing.seconds] };
  };
}

function attachment(fields: IssuedCertificateFields, ocspResponse: IssuedOcspResponse | null): IssuedRecordingAttachment {
  return { kind: 'issued-recording', fields, ocspResponse };
}

/** `identity` whose signature's duration lands in `timing` (for the signer metrics). */
function timedIdentity(identity: OcspSigningIdentity, timing: { seconds: number }): OcspSigningIdentity {
  const signer = identity.signer;
  return {
    ...identity,
    issuerHashes: (algorithm) => identity.issuerHashes(algorithm),
    signer: {
      ...signer,
      async sign(tbs: Uint8Array): Promise<Uint8Array> {
        const started = performance.now();
        try {
          return await signer.sign(tbs);
        } finally {
          timing.seconds = (performance.now() - started) / 1000;
        }
      },
    },
  };
}
