/**
 * `POST /api/v1/cfssl/certinfo` (CFSSL `api/certinfo/certinfo.go`). The body is a string map tried
 * against parameter sets in order: `certificate`, then `domain`, then `serial` + `authority_key_id`;
 * the first set whose keys are all present wins (`ProcessRequestFirstMatchOf`), and `null` counts as
 * an empty string. Values that are not strings are 400 here (CFSSL: 500, code 0).
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

/** Body of the certinfo request. */
export const certinfoRequestSchema = z.object({
  certificate: cfsslString.optional(),
  domain: cfsslString.optional(),
  serial: cfsslString.optional(),
  authority_key_id: cfsslString.optional(),
});

/** The certinfo operation; parsing runs on the worker pool (`@certsmith/bundler`'s {@link certinfoTask}). */
export const certinfoOperation = defineOperation({
  name: 'certinfo',
  method: 'POST',
  body: certinfoRequestSchema,
  tasks: [certinfoTask],
  summary: 'Describe a certificate (subject, issuer, serial, SANs, validity, key identifiers)',
  result: certinfoResultSchema,
  async handle(request, context): Promise<CertinfoResult> {
    if (request.certificate !== undefined) {
      return context.runTask(certinfoTask, { certificate: request.certificate });
    }
    if (request.domain !== undefined) {
      // CFSSL dials the domain and describes the served certificate; not available in certsmith yet.
      throw new BadRequestError('certinfo by domain is not supported yet; send the certificate PEM');
    }
    if (request.serial !== undefined && request.authority_key_id !== undefined) {
      // CFSSL's text when it has no certificate database (which is always the case in certsmith).
      throw new BadRequestError('cannot lookup certificate from serial without db access');
    }
    throw new BadRequestError('no valid parameter sets found');
  },
});
