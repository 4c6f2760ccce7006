/**
 * CSR facts as plain data: what the certificate is built from (cfssl
 * `signer.ParseCertificateRequest`, behaviour doc 3.7), worked out wherever the CSR was parsed and
 * checked (a worker) and handed, structured-cloned, to wherever the signer lives.
 */
import type { CertificateRequest } from '@certsmith/x509-core';
import { sanListFromParsed } from '@certsmith/x509-core';

import type { CsrFacts } from './certificate-template.js';

/** The {@link CsrFacts} of a parsed (and signature-checked) CSR; structured-clone safe. */
export function csrFactsOf(csr: CertificateRequest): CsrFacts {
  return {
    subjectAttributes: csr.subject.rdns.flat(),
    publicKey: csr.publicKey,
    sans: sanListFromParsed(csr.subjectAltNames),
    extensions: csr.extensions,
  };
}
