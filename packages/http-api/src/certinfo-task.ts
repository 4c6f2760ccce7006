/**
 * The `certinfo` worker task: parse one PEM certificate and describe it in CFSSL's certinfo format.
 * Parsing runs on a worker because a request can carry up to `--max-body` bytes of PEM.
 */
import { CertificateParseError, parseCertificates } from '@certsmith/x509-core';
import { toCertinfoResult } from './certinfo-result.js';
import type { CertinfoResult } from './certinfo-result.js';
import { defineTask } from '@certsmith/worker-pool';

/** Input of {@link certinfoTask}. */
export interface CertinfoTaskInput {
  /** PEM text of exactly one certificate. */
  certificate: string;
}

/**
 * Parse and describe one certificate. Like CFSSL's `helpers.ParseCertificatePEM`: no certificate →
 * 1002 `Failed to decode certificate`; not a certificate → 1003; more than one → 1003
 * `the PEM file should contain only one object`.
 */
export const certinfoTask = defineTask({
  name: 'certinfo',
  module: import.meta.url,
  run(input: CertinfoTaskInput): CertinfoResult {
    const certificates = parseCertificates(input.certificate);
    if (certificates.length > 1) throw new CertificateParseError('the PEM file should contain only one object');
    return toCertinfoResult(certificates[0]!);
  },
});
