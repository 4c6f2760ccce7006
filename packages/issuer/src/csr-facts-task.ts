/**
 * The `issue.csr-facts` worker task: parse a client's CSR and check its self-signature (CFSSL's
 * `signer.ParseCertificateRequest`, behaviour doc 3.7) off the event loop. A P-521 or RSA-4096
 * signature check costs far more than building the certificate, so `/sign` and `/authsign` keep it
 * out of the main thread, where only the signer call happens.
 */
import { defineTask } from '@certsmith/worker-pool';
import { parseCertificateRequest } from '@certsmith/x509-core';

import type { CsrFacts } from './certificate-template.js';
import { csrFactsOf } from './csr-facts.js';

/** Input of {@link csrFactsTask}. */
export interface CsrFactsTaskInput {
  /** The CSR PEM as the client sent it. */
  csrPem: string;
}

/**
 * Parse and verify one CSR. Errors, as CFSSL: 9002 `CSR Decode failed` (no PEM), 9300 `not a csr`
 * (other PEM label), 9003 (bad DER), 9300 (bad self-signature).
 */
export const csrFactsTask = defineTask({
  name: 'issue.csr-facts',
  module: import.meta.url,
  run(input: CsrFactsTaskInput): CsrFacts {
    return csrFactsOf(parseCertificateRequest(input.csrPem));
  },
});
