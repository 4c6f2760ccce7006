/**
 * The signing step shared by newcert, sign and authsign: choose the profile (5400 when unknown,
 * `authentication required` when it needs a token the caller did not give), then either build the
 * certificate here and make the one signer call on the main thread (signers with `sign`: local
 * keys, HSMs), or hand the whole request to a remote signer (`signRequest`).
 *
 * Signers never move to a worker: an HSM session or a remote connection pool belongs to the main
 * thread. The CPU-heavy parts (key generation, CSR parsing and signature checks) run in worker
 * tasks before this step and arrive here as plain facts.
 */
import { getIssuerContext, issueCertificate, selectProfile, signCertificateRequest, signOverridesOf } from '@certsmith/issuer';
import type { CsrFacts, SigningProfile } from '@certsmith/issuer';
import type { SignRequest } from '@certsmith/signer-api';
import { BadRequestError, ErrorCode } from '@certsmith/x509-core';
import { SignerTimeoutError } from './errors.js';
import { DEFAULT_SIGNER_TIMEOUT_MS } from './issue-options.js';
import type { SignerRoute } from './signer-directory.js';

/** True when the route's signer signs raw TBS bytes here (local key, HSM) rather than whole requests. */
export function signsLocally(route: SignerRoute): boolean {
  return typeof route.signer.sign === 'function';
}

/**
 * The profile a request is signed under. For a local signer: `profile` from the route's policy
 * (empty → default; unknown → 5400). For a remote signer the remote applies its own policy, so a
 * name the local policy does not know is passed on (`null` here). Either way, a profile of the
 * local policy that has an `auth_key` refuses unauthenticated callers with CFSSL's `/sign` text,
 * `authentication required` (behaviour doc 4.5) — also for newcert, which CFSSL lets bypass the
 * auth keys (CFSSL issue #788).
 */
export function selectSigningProfile(route: SignerRoute, name: string | undefined, authenticated: boolean): SigningProfile | null {
  let profile: SigningProfile | null;
  if (signsLocally(route)) {
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

/** What {@link signOnRoute} signs. */
export interface SigningInput {
  /** The sign request as CFSSL would send it to a remote (`certificate_request`, `profile`, overrides). */
  request: SignRequest;
  /** The CSR's facts (required for local signers; computed in a worker task). */
  facts?: CsrFacts;
  /** The profile from {@link selectSigningProfile}. */
  profile: SigningProfile | null;
  /** Signer timeout (see {@link withSignerTimeout}); default {@link DEFAULT_SIGNER_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Run `call` (the signer calls of one request) but give up after `timeoutMs`: reject with
 * {@link SignerTimeoutError} (2500) naming the route's label. The call cannot be cancelled; a late
 * answer or failure is dropped.
 */
export async function withSignerTimeout<T>(route: Pick<SignerRoute, 'label'>, timeoutMs: number | undefined, call: () => Promise<T>): Promise<T> {
  const limit = timeoutMs ?? DEFAULT_SIGNER_TIMEOUT_MS;
  const pending = call();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SignerTimeoutError(route.label, limit)), limit);
  });
  try {
    return await Promise.race([pending, expired]);
  } finally {
    clearTimeout(timer);
    // After a timeout nobody awaits `pending` any more; its rejection must not go unhandled.
    pending.catch(() => undefined);
  }
}

/**
 * Sign on the main thread: a local signer gets the certificate built from `facts` and signs its
 * TBS bytes (issuer `issueCertificate`: whitelist, overrides, validity, extensions, one signature);
 * a remote signer gets the request with the route's `forwardLabel`. Bounded by `input.timeoutMs`
 * ({@link withSignerTimeout}).
 */
export async function signOnRoute(route: SignerRoute, input: SigningInput): Promise<SignedCertificate> {
  return withSignerTimeout(route, input.timeoutMs, () => signOnRouteUnbounded(route, input));
}

async function signOnRouteUnbounded(route: SignerRoute, input: SigningInput): Promise<SignedCertificate> {
  if (!signsLocally(route)) {
    const forwarded: SignRequest = { ...input.request, label: route.forwardLabel };
    const result = await signCertificateRequest(forwarded, route.signer, route.policy);
    return { certificatePem: result.certificatePem, certificateDer: result.certificateDer };
  }
  if (input.facts === undefined || input.profile === null) throw new TypeError('a local signer needs the CSR facts and a profile');
  const context = await getIssuerContext(route.signer);
  const issued = await issueCertificate(context, route.policy, input.profile, input.facts, signOverridesOf(input.request));
  return { certificatePem: issued.pem, certificateDer: issued.der };
}

/** True when the route's signer is recreated in the workers, so a whole issuance can run there. */
export function signsInWorkers(route: SignerRoute): boolean {
  return route.workerRecipe !== undefined && signsLocally(route);
}

/**
 * Run a worker task that signs with the route's worker copy, and count its signature in the signer
 * metrics (the main-thread signer, which the metrics wrap, never sees it). A failed task counts as a
 * failed signature only when the signer failed (2500).
 */
export async function runCountingWorkerSign<T extends { signSeconds: number }>(route: SignerRoute, run: () => Promise<T>): Promise<T> {
  try {
    const output = await run();
    route.observeWorkerSign?.(output.signSeconds, true);
    return output;
  } catch (error) {
    if ((error as { code?: unknown }).code === ErrorCode.PrivateKeyUnavailable) route.observeWorkerSign?.(0, false);
    throw error;
  }
}
