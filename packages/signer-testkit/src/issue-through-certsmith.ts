/**
 * A real issuance through certsmith's issuer — the use case the server and the CLI run — for tests
 * of a signer plugin: a newcert request signed by `signer` under CFSSL's default policy (or the one
 * given), exactly as `certsmith serve` would sign it (here, or on the remote CA for a
 * `signRequest`-only signer).
 */
import type { NewCertificateOutcome, SigningPolicy } from '@certsmith/issuer';
import { DEFAULT_LABEL, createIssuer, createSignerDirectory, decodeNewCertificateRequest, defaultSigningPolicy } from '@certsmith/issuer';
import type { Signer } from '@certsmith/signer-api';

/** What to issue (see {@link issueThroughCertsmith}). */
export interface Issuance {
  /**
   * The `request` member of a CFSSL `newcert` body (default {@link DEFAULT_ISSUANCE_REQUEST}: CN and
   * DNS name `conformance.example`, IP 127.0.0.1, ECDSA P-256 key).
   */
  request?: Record<string, unknown>;
  /** Signing profile (default: the policy's default profile). */
  profile?: string;
  /** `label` of the request, forwarded to `signRequest` signers (default empty). */
  label?: string;
  /** Signing policy (default: `defaultSigningPolicy()`, CFSSL's default). */
  policy?: SigningPolicy;
}

/** The default issuance request: a TLS server certificate request as CFSSL's docs show. */
export const DEFAULT_ISSUANCE_REQUEST: Readonly<Record<string, unknown>> = Object.freeze({
  CN: 'conformance.example',
  hosts: ['conformance.example', '127.0.0.1'],
  key: { algo: 'ecdsa', size: 256 },
});

/**
 * Issue a new certificate (fresh key, CSR, certificate, digests) with `signer` through certsmith's
 * issuer. The signer is the issuer's only entry, labelled `issuance.label` (or `default`); a
 * `signRequest`-only signer gets the request with that label. Rejects with the issuer's coded
 * errors (5400 unknown profile, 2500 signer failures…).
 */
export async function issueThroughCertsmith(signer: Signer, issuance: Issuance = {}): Promise<NewCertificateOutcome> {
  const label = issuance.label ?? '';
  const entry = { label: label || DEFAULT_LABEL, signer, policy: issuance.policy ?? defaultSigningPolicy(), forwardsLabels: typeof signer.sign !== 'function' };
  const issuer = createIssuer({ signers: createSignerDirectory([entry]) });
  const input = decodeNewCertificateRequest({ request: issuance.request ?? DEFAULT_ISSUANCE_REQUEST, profile: issuance.profile ?? '', label });
  // The test holds the policy, as an operator does: profiles with an auth_key are allowed.
  return issuer.newCertificate(input, { authenticated: true });
}
