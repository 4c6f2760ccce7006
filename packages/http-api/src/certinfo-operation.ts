/**
 * `POST /api/v1/cfssl/certinfo` (CFSSL `api/certinfo/certinfo.go`). The body is a string map tried
 * against parameter sets in order: `certificate`, then `domain`, then `serial` + `authority_key_id`;
 * the first set whose keys are all present wins (`ProcessRequestFirstMatchOf`), and `null` counts as
 * an empty string. Values that are not strings are 400 here (CFSSL: 500, code 0).
 *
 * The handler only picks the parameter set; describing the certificate — or fetching it from the
 * server named by `domain` — is `@certsmith/bundler`'s {@link certinfoTask}, run on a worker.
 */
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import type { CertinfoResult } from '@certsmith/x509-core';
import { certinfoTask } from '@certsmith/bundler';
import { certinfoResultSchema } from './certinfo-result-schema.js';
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
}

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
    summary: 'Describe a certificate, or the certificate a TLS server presents (subject, issuer, serial, SANs, validity, key identifiers)',
    result: certinfoResultSchema,
    async handle(request, context): Promise<CertinfoResult> {
      if (request.certificate !== undefined) {
        return context.runTask(certinfoTask, { certificate: request.certificate });
      }
      if (request.domain !== undefined) {
        return context.runTask(certinfoTask, network === undefined ? { domain: request.domain } : { domain: request.domain, network });
      }
      if (request.serial !== undefined && request.authority_key_id !== undefined) {
        // CFSSL's text when it has no certificate database (which is always the case in certsmith).
        throw new BadRequestError('cannot lookup certificate from serial without db access');
      }
      throw new BadRequestError('no valid parameter sets found');
    },
  });
}

/** The certinfo operation with the default allowance: `domain` may reach public addresses only. */
export const certinfoOperation = createCertinfoOperation();
