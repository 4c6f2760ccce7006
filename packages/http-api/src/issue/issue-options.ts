/**
 * What the issuing operations depend on, and how they hand the issuer its per-request ports: the
 * request's task runner and the optional bundle step.
 */
import type { IssueCall, Issuer } from '@certsmith/issuer';
import { bundleTask } from '@certsmith/bundler';
import type { BundleContextConfig, BundleResult } from '@certsmith/bundler';
import type { OperationContext } from '../operation.js';

/** Dependencies of newcert, sign, authsign and info. */
export interface IssueOperationOptions {
  /** The issuing use case (signers by label, where signatures are made, the record port). */
  issuer: Issuer;
  /**
   * Trust files for `"bundle": true`, or `null`/absent when the server has no bundler: the request
   * then succeeds without a bundle and with CFSSL's 5300 no-bundler message (behaviour doc 3.1
   * step 8). `cfssl serve` attaches a bundler only when both `-ca-bundle` and `-int-bundle` are set.
   * Give the same config the bundle endpoint uses (`bundleContextConfig`) so workers load the trust
   * files once for both.
   */
  bundler?: BundleContextConfig | null;
}

/**
 * The issuer's ports for one request: its tasks run on the request's runner (the pool), and
 * `"bundle": true` runs the bundle use case's task for the optimal bundle (CFSSL
 * `BundleFromPEMorDER(cert, nil, bundler.Optimal, "")`).
 */
export function issueCall(options: IssueOperationOptions, context: OperationContext): IssueCall<BundleResult> {
  const bundler = options.bundler;
  if (!bundler) return { tasks: context, bundle: null };
  return { tasks: context, bundle: (certificatePem) => context.runTask(bundleTask, { context: bundler, request: { certificatePem, flavor: 'optimal' } }) };
}
