/** The bundler's own coded errors (the others come from x509-core and chain-builder). */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** The leaf is self-signed (or is itself a trusted root): CFSSL 1100 `Certificate is self signed`. */
export class SelfSignedCertificateError extends CertsmithError {
  constructor() {
    super(ErrorCode.CertificateSelfSigned);
  }
}
