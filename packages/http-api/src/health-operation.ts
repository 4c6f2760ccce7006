/**
 * `GET /api/v1/cfssl/health`. CFSSL always answers `{"healthy":true}`; certsmith gives the same body
 * until contributors are added (e.g. a signer-health map keyed by label), whose details appear as
 * extra keys of `result` and whose failures turn `healthy` to false.
 */
import * as z from 'zod';
import { defineOperation } from './operation.js';
import type { OperationDefinition } from './operation.js';

/** The outcome of one health check. */
export interface HealthCheckResult {
  healthy: boolean;
  /** Shown under the contributor's key in `result`; omit to contribute only to `healthy`. */
  detail?: unknown;
}

/** Something that reports on its own health (a signer, the worker pool, a trust store…). */
export interface HealthContributor {
  /** Key of `detail` in the health result, e.g. `signers`. Must not be `healthy`. */
  readonly key: string;
  check(signal: AbortSignal): Promise<HealthCheckResult>;
}

/** The health `result`: `healthy` plus one key per contributor that gave a detail. */
export interface HealthResult {
  healthy: boolean;
  [key: string]: unknown;
}

/** Schema of {@link HealthResult} for the OpenAPI document: `healthy` plus the contributors' keys. */
export const healthResultSchema = z.looseObject({
  healthy: z.boolean().describe('false when any contributor (e.g. a signer) is unhealthy'),
});

/** Options of {@link createHealthOperation}. */
export interface HealthOperationOptions {
  contributors?: readonly HealthContributor[];
}

/**
 * Build the health operation. A contributor that throws counts as unhealthy (its error stays in the
 * log). The HTTP status stays 200 either way, as a CFSSL client expects an envelope it can parse.
 */
export function createHealthOperation(
  options: HealthOperationOptions = {},
): OperationDefinition<undefined, HealthResult> {
  const contributors = options.contributors ?? [];
  for (const contributor of contributors) {
    if (contributor.key === 'healthy') throw new TypeError('a health contributor cannot use the key "healthy"');
  }
  return defineOperation({
    name: 'health',
    method: 'GET',
    summary: 'Report whether the server is healthy',
    result: healthResultSchema,
    async handle(_request, context): Promise<HealthResult> {
      const result: HealthResult = { healthy: true };
      const outcomes = await Promise.all(
        contributors.map(async (contributor) => {
          try {
            return await contributor.check(context.signal);
          } catch (error) {
            context.log.warn({ err: error, contributor: contributor.key }, 'health check failed');
            return { healthy: false } satisfies HealthCheckResult;
          }
        }),
      );
      outcomes.forEach((outcome, index) => {
        if (!outcome.healthy) result.healthy = false;
        if (outcome.detail !== undefined) result[contributors[index]!.key] = outcome.detail;
      });
      return result;
    },
  });
}
