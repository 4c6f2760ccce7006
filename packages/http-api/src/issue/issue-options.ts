/**
 * What the issuing operations depend on, and the optional-bundle step they share.
 */
import { NO_BUNDLER_MESSAGE } from '@certsmith/issuer';
import { ErrorCode } from '@certsmith/x509-core';
import { bundleTask } from '@certsmith/bundler';
import type { BundleContextConfig, BundleResult } from '@certsmith/bundler';
import type { OperationContext } from '../operation.js';
import type { SignerDirectory } from './signer-directory.js';

/** Dependencies of newcert, sign, authsign and info. */
export interface IssueOperationOptions {
  /** Signers by label. */
  signers: SignerDirectory;
  /**
   * Trust files for `"bundle": true`, or `null`/absent when the server has no bundler: the request
   * then succeeds without a bundle and with CFSSL's 5300 no-bundler message (behaviour doc 3.1
   * step 8). `cfssl serve` attaches a bundler only when both `-ca-bundle` and `-int-bundle` are set.
   * Give the same config the bundle endpoint uses (`bundleContextConfig`) so workers load the trust
   * files once for both.
   */
  bundler?: BundleContextConfig | null;
  /**
   * Longest a signer call may take before the request fails with 2500 `signer "<label>" did not
   * answer within N ms` ({@link DEFAULT_SIGNER_TIMEOUT_MS} when absent).
   */
  signerTimeoutMs?: number;
}

/** Default of {@link IssueOperationOptions.signerTimeoutMs}: 30 s. */
export const DEFAULT_SIGNER_TIMEOUT_MS = 30_000;

/**
 * The `"bundle": true` step (behaviour doc 3.1 step 8, 4.5): the optimal bundle of the issued
 * certificate, or `null` after adding the no-bundler message when there is no bundler. A bundling
 * failure rejects, failing the whole request as CFSSL does.
 */
export async function bundleIssuedCertificate(
  certificatePem: string,
  options: IssueOperationOptions,
  context: OperationContext,
): Promise<BundleResult | null> {
  if (!options.bundler) {
    context.addMessage({ code: ErrorCode.PolicyInvalidRequest, message: NO_BUNDLER_MESSAGE });
    return null;
  }
  // CFSSL `BundleFromPEMorDER(cert, nil, bundler.Optimal, "")`, run by the bundle use case's task.
  return context.runTask(bundleTask, { context: options.bundler, request: { certificatePem, flavor: 'optimal' } });
}
