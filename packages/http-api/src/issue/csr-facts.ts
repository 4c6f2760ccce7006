/**
 * CSR facts as plain data, so they can be worked out on a worker thread and handed to the issuer on
 * the main thread (where the signer lives). The facts are exactly what `signCertificateRequest`
 * of `@certsmith/issuer` derives from a parsed CSR; CFSSL's newcert and sign both go through that
 * parse (behaviour doc 3.1 step 6, 3.7), so certificates are identical either way.
 */
import type { CsrFacts } from '@certsmith/issuer';
import type { CertificateRequest } from '@certsmith/x509-core';
import { sanListFromParsed } from '@certsmith/x509-core';

/** The issuer's {@link CsrFacts} of a parsed CSR; structured-clone safe. */
export function csrFactsOf(csr: CertificateRequest): CsrFacts {
  return {
    subjectAttributes: csr.subject.rdns.flat(),
    publicKey: csr.publicKey,
    sans: sanListFromParsed(csr.subjectAltNames),
    extensions: csr.extensions,
  };
}
