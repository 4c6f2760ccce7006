/**
 * The `issue.sign-in-worker` task: `/sign` and `/authsign` for labels whose signer the workers
 * recreate (see `worker-signers.ts`) — parse and verify the client's CSR, build the certificate
 * with the request's overrides, sign it — in one worker task. The main thread only decodes the
 * request and checks label, profile and token.
 */
import type { SignRequest } from '@certsmith/signer-api';
import { defineTask } from '@certsmith/worker-pool';
import { parseCertificateRequest } from '@certsmith/x509-core';

import { signOverridesOf } from './certificate-template.js';
import { csrFactsOf } from './csr-facts.js';
import { issueWithWorkerSigner } from './worker-signers.js';

/** Input of {@link signInWorkerTask}. */
export interface SignInWorkerInput {
  /** A label the workers hold a signer for (`issuingWorkerInits`). */
  label: string;
  /** The decoded sign request (CSR PEM and overrides). */
  request: SignRequest;
  /** Profile name as requested (`''` → default); the main thread already refused unknown ones. */
  profile: string;
}

/** Output of {@link signInWorkerTask}. */
export interface SignInWorkerOutput {
  /** PEM with trailing newline. */
  certificatePem: string;
  certificateDer: Uint8Array;
  /** Time the one CA signature took, for the signer metrics of the main thread. */
  signSeconds: number;
  /** What the worker's issued hook gave for the certificate (`worker-issued-hook.ts`), for the record port. */
  attachment?: unknown;
  /** Times of the signatures the hook made with the signer. */
  hookSignSeconds?: readonly number[];
}

/**
 * Sign a client's CSR. Errors keep their CFSSL codes: 9002/9003/9300 CSR, 5300 policy, 2500 signer.
 */
export const signInWorkerTask = defineTask({
  name: 'issue.sign-in-worker',
  module: import.meta.url,
  async run(input: SignInWorkerInput): Promise<SignInWorkerOutput> {
    const facts = csrFactsOf(parseCertificateRequest(input.request.certificate_request));
    const issued = await issueWithWorkerSigner(input.label, input.profile, facts, signOverridesOf(input.request));
    return {
      certificatePem: issued.pem,
      certificateDer: issued.der,
      signSeconds: issued.signSeconds,
      ...(issued.hookSignSeconds === undefined ? {} : { attachment: issued.attachment, hookSignSeconds: issued.hookSignSeconds }),
    };
  },
});
