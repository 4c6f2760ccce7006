/**
 * The `certinfo` worker task: parse one PEM certificate and describe it in CFSSL's certinfo format.
 * Parsing runs on a worker because a request can carry up to `--max-body` bytes of PEM.
 */
import { defineTask } from '@certsmith/worker-pool';
import type { CertinfoResult } from '@certsmith/x509-core';
import { describeCertificatePem } from './certinfo.js';

/** Input of {@link certinfoTask}. */
export interface CertinfoTaskInput {
  /** PEM text of exactly one certificate. */
  certificate: string;
}

/**
 * Parse and describe one certificate ({@link describeCertificatePem}): 1002 without a certificate,
 * 1003 for something else or for more than one.
 */
export const certinfoTask = defineTask({
  name: 'certinfo',
  module: import.meta.url,
  run(input: CertinfoTaskInput): CertinfoResult {
    return describeCertificatePem(input.certificate);
  },
});
