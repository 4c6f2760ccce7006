/**
 * The `issue.newcert-in-worker` task: all of newcert's CPU work in one worker task — key, CSR,
 * certificate, the CA signature and the digests — for labels whose signer the workers recreate
 * (see `worker-signers.ts`). The main thread decodes the request, checks label and profile, and
 * writes the answer; one thread hop per request instead of a hop plus issuance on the event loop.
 */
import { computeSums, generateKeyAndCsr } from '@certsmith/issuer';
import type { CertificateRequest, Sums } from '@certsmith/issuer';
import { defineTask } from '../task.js';
import { workerKeySource } from './worker-key-pool.js';
import { issueWithWorkerSigner } from './worker-signers.js';
import type { NewcertResult } from './newcert-operation.js';

/** Input of {@link newcertInWorkerTask}. */
export interface NewcertInWorkerInput {
  /** A label the pool has a worker signer spec for. */
  label: string;
  /** The decoded certificate request (defaults merged, `ca` refused). */
  request: CertificateRequest;
  /** Profile name as requested (`''` → default); the main thread already refused unknown ones. */
  profile: string;
}

/** Output of {@link newcertInWorkerTask}. */
export interface NewcertInWorkerOutput {
  privateKeyPem: string;
  csrPem: string;
  csrSums: Sums;
  certificatePem: string;
  certificateSums: Sums;
  /** Time the one CA signature took, for the signer metrics of the main thread. */
  signSeconds: number;
}

/**
 * Issue a certificate for a freshly generated key. Errors keep their CFSSL codes: 2400 key request,
 * 9300 subject/extensions, 5300 policy, 2500 signer.
 */
export const newcertInWorkerTask = defineTask({
  name: 'issue.newcert-in-worker',
  module: import.meta.url,
  run: issueInWorker,
});

/** Output of {@link newcertJsonInWorkerTask}. */
export interface NewcertJsonInWorkerOutput {
  /** The endpoint's `result` (without `bundle`) as JSON text: see {@link newcertResultOf}. */
  resultJson: string;
  /** Time the one CA signature took, for the signer metrics of the main thread. */
  signSeconds: number;
}

/**
 * {@link newcertInWorkerTask} answering with the endpoint's result as JSON text, for requests that
 * do not ask for a bundle: the event loop splices the text into the envelope (`JsonText`) instead of
 * receiving the PEMs and digests as an object and serialising them again.
 */
export const newcertJsonInWorkerTask = defineTask({
  name: 'issue.newcert-in-worker.json',
  module: import.meta.url,
  async run(input: NewcertInWorkerInput): Promise<NewcertJsonInWorkerOutput> {
    const issued = await issueInWorker(input);
    return { resultJson: JSON.stringify(newcertResultOf(issued)), signSeconds: issued.signSeconds };
  },
});

/** newcert's `result` (CFSSL's keys, in its order) for a certificate issued in a worker. */
export function newcertResultOf(issued: NewcertInWorkerOutput): NewcertResult {
  return {
    certificate: issued.certificatePem,
    certificate_request: issued.csrPem,
    private_key: issued.privateKeyPem,
    sums: { certificate: issued.certificateSums, certificate_request: issued.csrSums },
  };
}

async function issueInWorker(input: NewcertInWorkerInput): Promise<NewcertInWorkerOutput> {
  const generated = await generateKeyAndCsr(input.request, { keySource: workerKeySource() });
  const issued = await issueWithWorkerSigner(input.label, input.profile, generated.facts);
  return {
    privateKeyPem: generated.privateKeyPem,
    csrPem: generated.csrPem,
    csrSums: generated.sums.certificate_request,
    certificatePem: issued.pem,
    certificateSums: computeSums(issued.der),
    signSeconds: issued.signSeconds,
  };
}
