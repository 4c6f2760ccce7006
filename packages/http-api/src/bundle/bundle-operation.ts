/**
 * `POST /api/v1/cfssl/bundle` (CFSSL `api/bundle/bundle.go:Handle`, behaviour doc 2.1): build the
 * bundle of a PEM certificate (certificate mode) or of the chain a TLS server presents (remote mode).
 *
 * The body is CFSSL's string map: every field is a string, `null` counts as `""`, unknown keys are
 * ignored. Parameter sets are tried in order — `certificate`, then `domain` — and the first whose key
 * is present wins (presence only; `""` counts), so certificate mode wins when both are sent. A value
 * of another JSON type is 400 naming the field (CFSSL: 500, code 0, Go's decoder text).
 *
 * The handler only checks the parameter sets; everything else — the use case of `@certsmith/bundler`
 * — runs in the {@link bundleJsonTask} worker.
 */
import { BadRequestError } from '@certsmith/x509-core';
import * as z from 'zod';
import { defineOperation } from '../operation.js';
import { bundleContextConfig, bundleContextKey, bundleJsonTask } from '@certsmith/bundler';
import type { BundleCertificateInput, BundleTrustOptions } from '@certsmith/bundler';
import { bundleResultSchema } from './bundle-result-schema.js';
import { JsonText } from '../envelope.js';

/** A string-map value as CFSSL decodes it: a string, or `null` meaning `""`. */
const cfsslString = z
  .string()
  .nullable()
  .transform((value) => value ?? '');

/**
 * A host field: a DNS name is at most 253 octets (RFC 1035 2.3.4), plus `:port`; an IPv6 text form
 * at most 45. Bounding it keeps a huge value from being dialled or echoed back in an error.
 */
const hostString = (max: number) =>
  z
    .string()
    .max(max)
    .nullable()
    .transform((value) => value ?? '');

/**
 * Body of the bundle request. CFSSL decodes it into a `map[string]string`, so every value — of
 * unknown keys too — must be a string (or null); CFSSL answers others 500 code 0, certsmith 400.
 */
export const bundleRequestSchema = z.object({
  certificate: cfsslString.optional().describe('PEM certificate, optionally followed by intermediates; selects certificate mode'),
  domain: hostString(253 + 6)
    .optional()
    .describe('without `certificate`: host (optionally `host:port`) whose TLS chain is bundled; with it: hostname the leaf must match'),
  private_key: cfsslString.optional().describe('PEM private key of the leaf (certificate mode); returned re-encoded as `key`'),
  flavor: cfsslString.optional().describe('`ubiquitous` (default, also for unknown values), `optimal` or `force`'),
  ip: hostString(45)
    .optional()
    .describe('with `certificate`: IP the leaf must match; with only `domain`: address to dial instead of resolving the domain'),
}).catchall(cfsslString);

/** The request after validation. */
export type BundleRequest = z.output<typeof bundleRequestSchema>;

/** Trust data of the bundle endpoint: the server's `--ca-bundle`, `--int-bundle`, `--metadata`, … */
export type BundleOperationOptions = BundleTrustOptions;

/** The use-case input for a validated request (field names of `bundleCertificate`). */
export function toBundleInput(request: BundleRequest): BundleCertificateInput {
  const input: BundleCertificateInput = {};
  if (request.certificate !== undefined) input.certificatePem = request.certificate;
  if (request.private_key !== undefined) input.privateKeyPem = request.private_key;
  if (request.flavor !== undefined) input.flavor = request.flavor;
  if (request.domain !== undefined) input.domain = request.domain;
  if (request.ip !== undefined) input.ip = request.ip;
  return input;
}

/**
 * Build the bundle operation for the given trust data. Always enabled, as in `cfssl serve`. Trust
 * files are read by each worker on its first bundle request (servers load them earlier, in every
 * worker before listening: `bundle.warm-up`, see `warmUpBundleWorkers`); a file that fails to load answers that
 * request with its code (4001/4003 roots, 3001/3003 intermediates, metadata errors).
 */
export function createBundleOperation(options: BundleOperationOptions = {}) {
  const context = bundleContextConfig(options);
  const contextKey = bundleContextKey(context);
  return defineOperation({
    name: 'bundle',
    method: 'POST',
    body: bundleRequestSchema,
    tasks: [bundleJsonTask],
    summary: 'Build a certificate bundle (chain to a trusted root) with expiry and ubiquity status',
    result: bundleResultSchema,
    async handle(request, operation): Promise<JsonText> {
      // CFSSL's parameter sets (`ProcessRequestFirstMatchOf`): checked here so a request without
      // either never costs a worker round trip.
      if (request.certificate === undefined && request.domain === undefined) {
        throw new BadRequestError('no valid parameter sets found');
      }
      // No client abort signal: a task already sent runs to its end on its worker anyway (the pool
      // would only drop its outcome). Every step of the task is bounded (AIA, dial) instead.
      // The worker answers with the result's JSON text: the event loop neither clones nor
      // serialises the PEM-laden result object (see docs/performance.md#the-bundle-result-travels-as-json-text).
      return new JsonText(await operation.runTask(bundleJsonTask, { context, contextKey, request: toBundleInput(request) }));
    },
  });
}
