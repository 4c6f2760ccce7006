/**
 * The signing step of newcert, sign and authsign on a route (the signer and policy of a label):
 * choose the profile, then sign where the issuer's configuration says —
 * - `'here'`: build the certificate on this thread and make the one signer call (local keys,
 *   HSMs: an HSM session belongs to the thread that opened it), bounded by the signer timeout;
 * - `'worker'`: the worker task that built the certificate signed it with its own copy of the
 *   signer (`worker-signers.ts`); here its signature is only counted for the signer metrics;
 * - `'remote'`: a signer without `sign` (a remote CA) gets the whole sign request.
 */
import type { SignRequest } from '@certsmith/signer-api';
import { BadRequestError, CertsmithError, ErrorCode, decodePemBlock } from '@certsmith/x509-core';

import { issueCertificate } from './certificate-template.js';
import type { CsrFacts, SignOverrides } from './certificate-template.js';
import { getIssuerContext } from './issuer-context.js';
import type { SignerRoute } from './signer-directory.js';
import { selectProfile } from './signing-policy.js';
import type { SigningProfile } from './signing-policy.js';
import { withSignerTimeout } from './signer-timeout.js';

/**
 * Where signers that can be recreated per worker make their signatures (see `IssuerOptions`):
 * `'worker'`, in the worker task that builds the certificate, or `'here'`, on the calling thread.
 */
export type SignatureSite = 'here' | 'worker';

/** Where one request's signature is made. */
export type RouteSignatureSite = SignatureSite | 'remote';

/** Where the route's signature is made under the issuer's configured {@link SignatureSite}. */
export function routeSignatureSite(route: SignerRoute, configured: SignatureSite): RouteSignatureSite {
  if (typeof route.signer.sign !== 'function') return 'remote';
  return configured === 'worker' && route.workerRecipe !== undefined ? 'worker' : 'here';
}

/**
 * The profile a request is signed under. For a signer that signs here or in a worker: `name` from
 * the route's policy (empty → default; unknown → 5400). For a remote signer the remote applies its
 * own policy, so a name the local policy does not know is passed on (`null` here). Either way, a
 * profile of the local policy that has an `auth_key` refuses unauthenticated callers with CFSSL's
 * `/sign` text, `authentication required` (behaviour doc 4.5) — also for newcert, which CFSSL lets
 * bypass the auth keys (CFSSL issue #788).
 */
export function selectRouteProfile(route: SignerRoute, site: RouteSignatureSite, name: string | undefined, authenticated: boolean): SigningProfile | null {
  let profile: SigningProfile | null;
  if (site !== 'remote') {
    profile = selectProfile(route.policy, name);
  } else {
    const known = name === undefined || name === '' || name === 'default' || route.policy.profiles.has(name);
    profile = known ? selectProfile(route.policy, name) : null;
  }
  if (!authenticated && profile?.authKey) throw new BadRequestError('authentication required');
  return profile;
}

/** A certificate just issued. */
export interface SignedCertificate {
  /** PEM with trailing newline. */
  certificatePem: string;
  certificateDer: Uint8Array;
}

/**
 * Build the certificate for `facts` under `profile` and sign it with the route's signer on this
 * thread (whitelist, overrides, validity, extensions, one signature), within `timeoutMs`.
 */
export function signHere(route: SignerRoute, profile: SigningProfile, facts: CsrFacts, overrides: SignOverrides, timeoutMs: number | undefined): Promise<SignedCertificate> {
  return withSignerTimeout(route.label, timeoutMs, async () => {
    const context = await getIssuerContext(route.signer);
    const issued = await issueCertificate(context, route.policy, profile, facts, overrides);
    return { certificatePem: issued.pem, certificateDer: issued.der };
  });
}

/**
 * Hand the whole request to the route's remote signer, with the route's `forwardLabel`, within
 * `timeoutMs`. A signer with neither `sign` nor `signRequest` fails with 2500.
 */
export function signRemotely(route: SignerRoute, request: SignRequest, timeoutMs: number | undefined): Promise<SignedCertificate> {
  return withSignerTimeout(route.label, timeoutMs, async () => {
    if (typeof route.signer.signRequest !== 'function') throw new CertsmithError(ErrorCode.PrivateKeyUnavailable);
    const { certificatePem } = await route.signer.signRequest({ ...request, label: route.forwardLabel });
    const match = decodePemBlock(certificatePem);
    if (match === null) throw new CertsmithError(ErrorCode.CertificateDecodeFailed);
    return { certificatePem, certificateDer: match.block.bytes };
  });
}

/**
 * Run a worker task that signs with the route's worker copy, and count its signatures in the signer
 * metrics (the signer of this thread, which the metrics wrap, never sees it). A failed task counts
 * as a failed signature only when the signer failed (2500).
 */
export async function countWorkerSignature<T extends { signSeconds: number; hookSignSeconds?: readonly number[] }>(route: SignerRoute, run: () => Promise<T>): Promise<T> {
  try {
    const output = await run();
    route.observeWorkerSign?.(output.signSeconds, true);
    // Signatures of the worker's issued hook (a first OCSP response signed with the CA key).
    for (const seconds of output.hookSignSeconds ?? []) route.observeWorkerSign?.(seconds, true);
    return output;
  } catch (error) {
    if ((error as { code?: unknown }).code === ErrorCode.PrivateKeyUnavailable) route.observeWorkerSign?.(0, false);
    throw error;
  }
}
