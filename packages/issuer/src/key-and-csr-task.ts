/**
 * The `issue.key-and-csr` worker task: newkey's and newcert's CPU work (key generation, CSR
 * encoding and self-signature, digests) off the event loop. For newcert it also returns the CSR's
 * facts, so the main thread only builds the certificate and makes the one signer call.
 */
import { defineTask } from '@certsmith/worker-pool';

import type { CertificateRequest } from './certificate-request.js';
import type { CsrFacts } from './certificate-template.js';
import { generateKeyAndCsr } from './key-and-csr.js';
import type { Sums } from './sums.js';
import { workerKeySource } from './worker-key-pool.js';

/** Input of {@link keyAndCsrTask}. */
export interface KeyAndCsrTaskInput {
  /** The decoded certificate request (defaults merged, `ca` refused). */
  request: CertificateRequest;
  /** Also return the CSR's facts (newcert with a local signer). */
  withFacts: boolean;
}

/** Output of {@link keyAndCsrTask}. */
export interface KeyAndCsrTaskOutput {
  /** Private key PEM in CFSSL's format, trailing newline. */
  privateKeyPem: string;
  /** `CERTIFICATE REQUEST` PEM, trailing newline. */
  csrPem: string;
  /** Digests of the CSR DER. */
  csrSums: Sums;
  /** Present when `withFacts` was set. */
  facts?: CsrFacts;
}

/**
 * Generate a key and a CSR (behaviour doc 3.3–3.5). Errors: 2400 key request, 9300 subject or
 * extension problems; they keep their code across the thread boundary.
 */
export const keyAndCsrTask = defineTask({
  name: 'issue.key-and-csr',
  module: import.meta.url,
  async run(input: KeyAndCsrTaskInput): Promise<KeyAndCsrTaskOutput> {
    // A worker runs one task at a time: generate EC/Ed25519 keys right here (no thread-pool hop).
    const generated = await generateKeyAndCsr(input.request, { keySource: workerKeySource() });
    const output: KeyAndCsrTaskOutput = {
      privateKeyPem: generated.privateKeyPem,
      csrPem: generated.csrPem,
      csrSums: generated.sums.certificate_request,
    };
    // The CSR was built a moment ago by this very code: its facts come from the generator (no
    // re-parse, no signature check), with the subject and SAN encodings the certificate reuses.
    if (input.withFacts) output.facts = generated.facts;
    return output;
  },
});
