/**
 * The operations a server serves. This is the single place where features are wired in: each
 * feature package exports an operation (or a factory taking what it needs from {@link ServerOptions})
 * and is added to the list here; its worker tasks are registered with the pool automatically.
 *
 * Endpoints are enabled the way `cfssl serve` enables them (behaviour doc 5): `newkey` always;
 * `newcert` and `info` with a signer (certsmith always has one: the development CA at worst);
 * `sign` only when some profile (of any label's policy) has no `auth_key`; `authsign` only when some
 * profile has one. A disabled endpoint is simply not registered (404), and the reason is logged.
 */
import {
  bundleContextConfig,
  certinfoOperation,
  createAuthsignOperation,
  createBundleOperation,
  createHealthOperation,
  createInfoOperation,
  createNewcertOperation,
  createSignOperation,
  newkeyOperation,
} from '@certsmith/http-api';
import type { AnyOperation, HealthContributor, IssueOperationOptions, Logger, SignerDirectory } from '@certsmith/http-api';
import { policyHasAuthenticatedProfiles, policyHasUnauthenticatedProfiles } from '@certsmith/issuer';
import type { ServerOptions } from './server-options.js';

/** Services the operations depend on, built by `startServer`. */
export interface ServerServices {
  /** Signers by label; without it the issuing endpoints (newcert, sign, authsign, info) are not served. */
  signers?: SignerDirectory;
  /** Extra `/health` contributors (e.g. the signers map). */
  healthContributors?: readonly HealthContributor[];
  /** Where to log which endpoints are disabled and why. */
  logger?: Logger;
}

/**
 * The trust files newcert/sign bundle with when asked (`"bundle": true`), or `null`: as `cfssl
 * serve`, a bundler is attached to them only when both `--ca-bundle` and `--int-bundle` are given
 * (behaviour doc 5); otherwise they answer with CFSSL's 5300 no-bundler message.
 */
export function issueBundlerConfig(options: ServerOptions): NonNullable<IssueOperationOptions['bundler']> | null {
  if (options.caBundleFile === undefined || options.intBundleFile === undefined) return null;
  // The bundle endpoint's own config, so each worker loads the trust files once for both.
  return bundleContextConfig(options);
}

/** Build the operations for `options`. */
export async function buildOperations(options: ServerOptions, services: ServerServices = {}): Promise<AnyOperation[]> {
  const operations: AnyOperation[] = [
    createHealthOperation({ contributors: services.healthContributors ?? [] }),
    certinfoOperation,
    newkeyOperation,
    createBundleOperation(options),
  ];
  const signers = services.signers;
  if (signers === undefined) return operations;

  const issue = { signers, bundler: issueBundlerConfig(options) };
  operations.push(createNewcertOperation(issue), createInfoOperation(issue));
  const policies = signers.entries.map((entry) => entry.policy);
  if (policies.some(policyHasUnauthenticatedProfiles)) {
    operations.push(createSignOperation(issue));
  } else {
    services.logger?.warn({ endpoint: 'sign' }, "endpoint 'sign' is disabled: every signing profile has an auth_key (use authsign)");
  }
  if (policies.some(policyHasAuthenticatedProfiles)) {
    operations.push(createAuthsignOperation(issue));
  } else {
    services.logger?.info({ endpoint: 'authsign' }, "endpoint 'authsign' is disabled: no signing profile has an auth_key");
  }
  return operations;
}
