/**
 * The `issue.newcert-in-worker` task: all of newcert's CPU work in one worker task — key, CSR,
 * certificate, the CA signature and the digests — for labels whose signer the workers recreate
 * (see `worker-signers.ts`). The main thread decodes the request, checks label and profile, and
 * writes the answer; one thread hop per request instead of a hop plus issuance on the event loop.
 */
import { defineTask } from '@certsmith/worker-pool';

import type { CertificateRequest } from './certificate-request.js';
import { generateKeyAndCsr } from './key-and-csr.js';
import type { Sums } from './sums.js';
import { computeSums } from './sums.js';
import { workerKeySource } from './worker-key-pool.js';
import { issueWithWorkerSigner } from './worker-signers.js';

/** Input of {@link newcertInWorkerTask}. */
export interface NewcertInWorkerInput {
  /** A label the workers hold a signer for (`issuingWorkerInits`). */
  label: string;
  /** The decoded certificate request (defaults merged, `ca` refused). */
  request: CertificateRequest;
  /** Profile name as requested (`''` → default); the main thread already refused unknown ones. */
  profile: string;
  /** Hosts replacing the CSR's in the certificate (`gencert -hostname`); absent or null: the CSR's. */
  hosts?: string[] | null;
}

/** Output of {@link newcertInWorkerTask}. */
export interface NewcertInWorkerOutput {
  privateKeyPem: string;
  csrPem: string;
  csrSums: Sums;
  certificatePem: string;
  certificateDer: Uint8Array;
  certificateSums: Sums;
  /** Time the one CA signature took, for the signer metrics of the main thread. */
  signSeconds: number;
  /** What the worker's issued hook gave for the certificate (`worker-issued-hook.ts`), for the record port. */
  attachment?: unknown;
  /** Times of the signatures the hook made with the signer. */
  hookSignSeconds?: readonly number[];
}

/**
 * Issue a certificate for a freshly generated key. Errors keep their CFSSL codes: 2400 key request,
 * 9300 subject/extensions, 5300 policy, 2500 signer.
 */
export const newcertInWorkerTask = defineTask({
  name: 'issue.newcert-in-worker',
  module: import.meta.url,
  async run(input: NewcertInWorkerInput): Promise<NewcertInWorkerOutput> {
    const generated = await generateKeyAndCsr(input.request, { keySource: workerKeySource() });
    const overrides = input.hosts === undefined || input.hosts === null ? {} : { hosts: input.hosts };
    const issued = await issueWithWorkerSigner(input.label, input.profile, generated.facts, overrides);
    return {
      privateKeyPem: generated.privateKeyPem,
      csrPem: generated.csrPem,
      csrSums: generated.sums.certificate_request,
      certificatePem: issued.pem,
      certificateDer: issued.der,
      certificateSums: computeSums(issued.der),
      signSeconds: issued.signSeconds,
      ...(issued.hookSignSeconds === undefined ? {} : { attachment: issued.attachment, hookSignSeconds: issued.hookSignSeconds }),
    };
  },
});
