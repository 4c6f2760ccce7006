/**
 * The operations a server serves. This is the single place where features are wired in: each
 * feature package exports an operation (or a factory taking what it needs from {@link ServerOptions})
 * and is added to the list here; its worker tasks are registered with the pool automatically.
 *
 * Endpoints are enabled the way `cfssl serve` enables them (behaviour doc 5): `newkey` always;
 * `newcert` and `info` with a signer (certsmith always has one: the development CA at worst);
 * `sign` only when some profile (of any label's policy) has no `auth_key`; `authsign` only when some
 * profile has one. A disabled endpoint is simply not registered (404), and the reason is logged.
 *
 * With a certificate store (the default; `--no-store` turns it off): every certificate newcert, sign
 * and authsign issue is recorded before it is answered; `certadd`, certinfo by serial, and the
 * inventory (`certificates`, `certificate` under `/api/v1/certsmith/`), all reaching the store
 * through {@link ServerServices.store}.
 *
 * Then the operator's controls apply ({@link applyEndpointControls}): `--disable a,b` removes
 * endpoints by bare name, as `cfssl serve -disable` (404; `health` cannot be disabled;
 * `certificates` also removes the single-certificate lookup: the whole inventory), and
 * `--require-auth newcert,sign` makes those answer every request 400 `authentication required`, so
 * the only issuing path left is `authsign` (HMAC token per profile).
 */
import { bundleContextConfig } from '@certsmith/bundler';
import type { CertificateRowInput, Store } from '@certsmith/cert-store';
import {
  createCertaddOperation,
  createGetCertificateOperation,
  createListCertificatesOperation,
  storeForRequests,
  createCertinfoOperation,
  createAuthsignOperation,
  createBundleOperation,
  createHealthOperation,
  createInfoOperation,
  createNewcertOperation,
  createSignOperation,
  newkeyOperation,
} from '@certsmith/http-api';
import type { AnyOperation, HealthContributor, IssueOperationOptions, Logger } from '@certsmith/http-api';
import { createIssuer, policyHasAuthenticatedProfiles, policyHasUnauthenticatedProfiles } from '@certsmith/issuer';
import type { RecordIssued, SignatureSite, SignerDirectory } from '@certsmith/issuer';
import { BadRequestError } from '@certsmith/x509-core';
import { pino } from 'pino';
import { createIssuedRecorder } from './issued-recording.js';
import type { ServerOptions } from './server-options.js';
import { revocationOperations } from './revocation/server-revocation.js';
import type { ServerRevocation } from './revocation/server-revocation.js';

/** Services the operations depend on, built by `startServer`. */
export interface ServerServices {
  /** Signers by label; without it the issuing endpoints (newcert, sign, authsign, info) are not served. */
  signers?: SignerDirectory;
  /**
   * Where signers that can be recreated per worker sign (the issuer's `signatureSite`, default
   * `'here'`): `'worker'` only when the pool running the operations' tasks got the issuer's
   * per-worker setup (`issuingWorkerInits`), as `startServer` does.
   */
  signatureSite?: SignatureSite;
  /**
   * Where issued certificates are recorded (the issuer's `recordIssued` port). Default: in
   * {@link ServerServices.store} with the label of the signer and the first OCSP response of
   * {@link ServerServices.revocation} (`createIssuedRecorder`); without a store, nowhere.
   */
  recordIssued?: RecordIssued;
  /** Extra `/health` contributors (e.g. the signers map). */
  healthContributors?: readonly HealthContributor[];
  /** Where to log which endpoints are disabled and why. */
  logger?: Logger;
  /** Channel the bundling workers post AIA fetch counts on (`ServerMetrics.workerMetricsChannel`); absent = not counted. */
  metricsChannel?: string;
  /**
   * The certificate store as the server opened it; absent (`--no-store`): nothing is recorded and
   * the store endpoints are not served. Operations get it wrapped by `storeForRequests` (an
   * unreachable database answers 503 + `Retry-After` with a fixed message; the driver's text goes to
   * the log).
   */
  store?: Store;
  /** Revocation (CAs, OCSP signers, settings); absent: no revocation endpoints. */
  revocation?: ServerRevocation;
}

/** `--disable` names that stand for several operations. */
const DISABLE_GROUPS: Readonly<Record<string, readonly string[]>> = {
  // The inventory is one feature: the list and the single lookup go together.
  certificates: ['certificates', 'certificate'],
  // One CRL, two forms: CFSSL's JSON and the raw DER.
  crl: ['crl', 'crl_der'],
};

/**
 * The trust files newcert/sign bundle with when asked (`"bundle": true`), or `null`: as `cfssl
 * serve`, a bundler is attached to them only when both `--ca-bundle` and `--int-bundle` are given
 * (behaviour doc 5); otherwise they answer with CFSSL's 5300 no-bundler message.
 */
export function issueBundlerConfig(options: ServerOptions, metricsChannel?: string): NonNullable<IssueOperationOptions['bundler']> | null {
  if (options.caBundleFile === undefined || options.intBundleFile === undefined) return null;
  // The bundle endpoint's own config (same metrics channel too), so each worker loads the trust
  // files once for both.
  return bundleContextConfig({ ...options, metricsChannel });
}

/** Build the operations for `options`, with `--disable` and `--require-auth` applied. */
export async function buildOperations(options: ServerOptions, services: ServerServices = {}): Promise<AnyOperation[]> {
  return applyEndpointControls(await buildServedOperations(options, services), options, services.logger);
}

/** CFSSL's text for an issuing request that needs a token (also `/sign` with an `auth_key` profile). */
export const AUTHENTICATION_REQUIRED = 'authentication required';

/**
 * Apply `--disable` (remove by name; names certsmith does not serve, e.g. CFSSL's `scan`, are
 * accepted and only logged) and `--require-auth` (the named endpoint keeps its path and method but
 * refuses every request with 400 `authentication required` before reading the body).
 */
export function applyEndpointControls(
  operations: readonly AnyOperation[],
  options: Pick<ServerOptions, 'disable' | 'requireAuth'>,
  logger?: Logger,
): AnyOperation[] {
  const disabled = new Set((options.disable ?? []).flatMap((name) => DISABLE_GROUPS[name] ?? [name]));
  const served = new Set(operations.map((operation) => operation.name));
  for (const name of new Set(options.disable ?? [])) {
    if (served.has(name) || DISABLE_GROUPS[name]?.some((member) => served.has(member))) logger?.info({ endpoint: name }, `endpoint '${name}' is explicitly disabled (--disable)`);
    else logger?.info({ endpoint: name }, `--disable ${name}: certsmith does not serve '${name}' here; nothing to disable`);
  }
  const requireAuth = new Set(options.requireAuth ?? []);
  const result: AnyOperation[] = [];
  for (const operation of operations) {
    if (disabled.has(operation.name)) continue;
    if (!requireAuth.has(operation.name)) {
      result.push(operation);
      continue;
    }
    logger?.info({ endpoint: operation.name }, `endpoint '${operation.name}' requires authentication (--require-auth): every request is refused, use authsign`);
    const { body: _body, ...rest } = operation;
    result.push({
      ...rest,
      summary: `${operation.summary ?? operation.name} (refused: --require-auth; use authsign)`,
      handle() {
        throw new BadRequestError(AUTHENTICATION_REQUIRED);
      },
    });
  }
  return result;
}

async function buildServedOperations(options: ServerOptions, services: ServerServices): Promise<AnyOperation[]> {
  const store = services.store === undefined ? undefined : storeForRequests(services.store, services.logger ?? silentLogger());
  const operations: AnyOperation[] = [
    createHealthOperation({ contributors: services.healthContributors ?? [] }),
    createCertinfoOperation({ ...options, store }),
    newkeyOperation,
    createBundleOperation({ ...options, metricsChannel: services.metricsChannel }),
  ];
  if (store !== undefined) {
    const revocation = services.revocation?.service;
    // certadd'ed certificates get their OCSP response at once, as issued ones do.
    const signAdded =
      revocation === undefined || revocation === null
        ? undefined
        : (row: CertificateRowInput) => revocation.signRecorded({ serial: row.serial, authorityKeyId: row.authorityKeyId, status: row.status, reason: row.reason ?? 0, revokedAt: row.revokedAt ?? null });
    operations.push(createCertaddOperation({ store, ...(signAdded === undefined ? {} : { afterInsert: signAdded }) }), createListCertificatesOperation({ store }), createGetCertificateOperation({ store }));
  } else {
    services.logger?.info({ endpoints: ['certadd', 'certificates', 'certificate'] }, 'no certificate store: certadd, the certificate inventory and certinfo by serial are not available');
  }
  operations.push(...revocationOperations(services.revocation, services.logger));
  const signers = services.signers;
  if (signers === undefined) return operations;

  // Every certificate signed here is recorded (with its first OCSP response) before it is answered.
  const recordIssued = services.recordIssued ?? (store === undefined ? undefined : createIssuedRecorder({ store, ocsp: services.revocation?.service }));
  const issuer = createIssuer({
    signers,
    signerTimeoutMs: options.signerTimeoutMs,
    ...(services.signatureSite === undefined ? {} : { signatureSite: services.signatureSite }),
    ...(recordIssued === undefined ? {} : { recordIssued }),
  });
  const issue: IssueOperationOptions = { issuer, bundler: issueBundlerConfig(options, services.metricsChannel) };
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

function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
