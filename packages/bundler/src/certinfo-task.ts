/**
 * The `certinfo` worker task: describe one PEM certificate, or the leaf certificate a TLS server
 * presents, in CFSSL's certinfo format. Parsing runs on a worker because a request can carry up to
 * `--max-body` bytes of PEM; the remote fetch too, as the bundle task's does, so the event loop
 * only reads requests and writes responses.
 */
import { createNetworkGuard } from '@certsmith/chain-builder';
import type { NetworkGuard, NetworkGuardOptions } from '@certsmith/chain-builder';
import { defineTask } from '@certsmith/worker-pool';
import type { CertinfoResult } from '@certsmith/x509-core';
import { describeCertificatePem, describeServerCertificate } from './certinfo.js';

/** Input of {@link certinfoTask}: a certificate, or a server to fetch one from. */
export type CertinfoTaskInput =
  | {
      /** PEM text of exactly one certificate. */
      certificate: string;
    }
  | {
      /** `host` or `host:port` (port 443 by default). */
      domain: string;
      /**
       * Which addresses the dial may reach: the server's SSRF guard (public addresses only unless
       * `--allow-private-networks` or `allowCidrs`). Absent = public only.
       */
      network?: NetworkGuardOptions;
    };

/** One guard per distinct network allowance in this thread (they are plain data, the guard is not). */
const guards = new Map<string, NetworkGuard>();

function guardFor(network: NetworkGuardOptions | undefined): NetworkGuard {
  const key = JSON.stringify(network ?? {});
  let guard = guards.get(key);
  if (guard === undefined) {
    guard = createNetworkGuard(network ?? {});
    guards.set(key, guard);
  }
  return guard;
}

/**
 * Describe a certificate ({@link describeCertificatePem}: 1002 without a certificate, 1003 for
 * something else or for more than one) or a server's leaf ({@link describeServerCertificate}: 6000
 * with Go's dial text when it cannot be fetched, or when the guard refuses the address).
 */
export const certinfoTask = defineTask({
  name: 'certinfo',
  module: import.meta.url,
  run(input: CertinfoTaskInput): CertinfoResult | Promise<CertinfoResult> {
    if ('certificate' in input) return describeCertificatePem(input.certificate);
    return describeServerCertificate(input.domain, { guard: guardFor(input.network) });
  },
});
