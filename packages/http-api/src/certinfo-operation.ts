/**
 * `POST /api/v1/cfssl/certinfo` (CFSSL `api/certinfo/certinfo.go`). The body is a string map tried
 * against parameter sets in order: `certificate`, then `domain`, then `serial` + `authority_key_id`;
 * the first set whose keys are all present wins (`ProcessRequestFirstMatchOf`), and `null` counts as
 * an empty string. Values that are not strings are 400 here (CFSSL: 500, code 0).
 *
 * The handler only picks the parameter set; describing the certificate — or fetching it from the
 * server named by `domain` — is `@certsmith/bundler`'s {@link certinfoTask}, run on a worker. A
 * `serial` + `authority_key_id` lookup reads the certificate store (lifecycle spec §3.6: AKI in either
 * case, colons allowed; decimal serial) and describes the stored PEM; no such row is 404 `no
 * certificate found` (CFSSL: 500, code 0).
 */
import type { Store } from '@certsmith/cert-store';
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import type { CertinfoResult } from '@certsmith/x509-core';
import { certinfoTask } from '@certsmith/bundler';
import { certinfoResultSchema } from './certinfo-result-schema.js';
import { NotFoundError } from './errors.js';
import { defineOperation } from './operation.js';

/** A string-map value as CFSSL decodes it: a string, or `null` meaning `""`. */
const cfsslString = z
  .string()
  .nullable()
  .transform((value) => value ?? '');

/**
 * Body of the certinfo request: CFSSL's `map[string]string`, so every value — of unknown keys too —
 * must be a string (or null); CFSSL answers others 500 code 0, certsmith 400.
 */
export const certinfoRequestSchema = z
  .object({
    certificate: cfsslString.optional().describe('PEM text of one certificate'),
    // A DNS name is at most 253 octets (RFC 1035 2.3.4), plus `:port`: a huge value is never dialled
    // nor echoed back in an error.
    domain: z
      .string()
      .max(253 + 6)
      .nullable()
      .transform((value) => value ?? '')
      .optional()
      .describe('`host` or `host:port` (default port 443): describe the certificate this TLS server presents'),
    serial: cfsslString.optional(),
    authority_key_id: cfsslString.optional(),
  })
  .catchall(cfsslString);

/** Where `domain` requests may connect: the server's SSRF allowance (`--allow-private-networks`, config `allowCidrs`). */
export interface CertinfoOperationOptions {
  /** Let `domain` reach private, loopback and link-local addresses. Default false (public only). */
  allowPrivateNetworks?: boolean | undefined;
  /** Non-public ranges `domain` may reach anyway. */
  allowCidrs?: readonly string[] | undefined;
  /** The certificate store, for lookups by `serial` + `authority_key_id`; absent: CFSSL's "without db access" answer. */
  store?: Store | undefined;
}

/** CFSSL's text when no stored certificate has the serial and AKI (answered 404 here, 500 code 0 by CFSSL). */
export const NO_CERTIFICATE_FOUND = 'no certificate found';

/** The certinfo operation for the given network allowance. */
export function createCertinfoOperation(options: CertinfoOperationOptions = {}) {
  const network =
    options.allowPrivateNetworks || (options.allowCidrs?.length ?? 0) > 0
      ? { allowPrivateNetworks: options.allowPrivateNetworks === true, allowCidrs: [...(options.allowCidrs ?? [])] }
      : undefined;
  return defineOperation({
    name: 'certinfo',
    method: 'POST',
    body: certinfoRequestSchema,
    tasks: [certinfoTask],
    summary: 'Describe a certificate, the certificate a TLS server presents, or a recorded certificate by serial and AKI (subject, issuer, serial, SANs, validity, key identifiers)',
    result: certinfoResultSchema,
    mayAnswerNotFound: options.store !== undefined,
    async handle(request, context): Promise<CertinfoResult> {
      if (request.certificate !== undefined) {
        return context.runTask(certinfoTask, { certificate: request.certificate });
      }
      if (request.domain !== undefined) {
        return context.runTask(certinfoTask, network === undefined ? { domain: request.domain } : { domain: request.domain, network });
      }
      if (request.serial !== undefined && request.authority_key_id !== undefined) {
        // CFSSL's text when it has no certificate database (`--no-store`).
        if (options.store === undefined) throw new BadRequestError('cannot lookup certificate from serial without db access');
        const record = await options.store.findCertificate(request.serial, request.authority_key_id);
        if (record === null) throw new NotFoundError(NO_CERTIFICATE_FOUND);
        return context.runTask(certinfoTask, { certificate: record.pem });
      }
      throw new BadRequestError('no valid parameter sets found');
    },
  });
}

/** The certinfo operation with the default allowance: `domain` may reach public addresses only. */
export const certinfoOperation = createCertinfoOperation();
