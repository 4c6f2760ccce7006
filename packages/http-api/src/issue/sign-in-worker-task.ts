/**
 * The `issue.sign-in-worker` task: `/sign` and `/authsign` for labels whose signer the workers
 * recreate (see `worker-signers.ts`) — parse and verify the client's CSR, build the certificate
 * with the request's overrides, sign it — in one worker task. The main thread only decodes the
 * request and checks label, profile and token.
 */
import { issueCertificate, selectProfile } from '@certsmith/issuer';
import type { SignRequest } from '@certsmith/signer-api';
import { parseCertificateRequest } from '@certsmith/x509-core';
import { defineTask } from '../task.js';
import { csrFactsOf } from './csr-facts.js';
import { signOverridesOf } from './signing.js';
import { timedSigner, workerSigning } from './worker-signers.js';

/** Input of {@link signInWorkerTask}. */
export interface SignInWorkerInput {
  /** A label the pool has a worker signer spec for. */
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
  /** Time the one CA signature took, for the signer metrics of the main thread. */
  signSeconds: number;
}

/**
 * Sign a client's CSR. Errors keep their CFSSL codes: 9002/9003/9300 CSR, 5300 policy, 2500 signer.
 */
export const signInWorkerTask = defineTask({
  name: 'issue.sign-in-worker',
  module: import.meta.url,
  async run(input: SignInWorkerInput): Promise<SignInWorkerOutput> {
    const signing = await workerSigning(input.label);
    const profile = selectProfile(signing.policy, input.profile);
    const facts = csrFactsOf(parseCertificateRequest(input.request.certificate_request));
    const timing = { seconds: 0 };
    const context = { ...signing.context, signer: timedSigner(signing.signer, timing) };
    const issued = await issueCertificate(context, signing.policy, profile, facts, signOverridesOf(input.request));
    return { certificatePem: issued.pem, signSeconds: timing.seconds };
  },
});
