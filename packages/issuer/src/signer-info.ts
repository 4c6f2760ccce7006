/**
 * info (CFSSL `api/info/info.go`, behaviour doc 4.1, 4.2, 7.10): the signer's CA certificate with
 * the `usages` and `expiry` of a profile, and the Go decoding of its `info.Req` body.
 */
import type { InfoResult, Signer } from '@certsmith/signer-api';
import { BadRequestError } from '@certsmith/x509-core';

import { jsonKind } from './go-json.js';
import type { SigningPolicy } from './signing-policy.js';
import { selectProfile } from './signing-policy.js';

/** CFSSL `info.Req` (`{"label", "profile"}`). */
export interface InfoRequest {
  label: string;
  profile: string;
}

/**
 * Decode an `/info` body as Go decodes `info.Req`: keys matched case-insensitively (the last one
 * wins), unknown keys ignored, `null` leaves the field empty, other types → 400 with Go's text
 * (`json: cannot unmarshal number into Go struct field Req.label of type string`).
 */
export function decodeInfoRequest(body: Record<string, unknown>): InfoRequest {
  const request: InfoRequest = { label: '', profile: '' };
  for (const field of ['label', 'profile'] as const) {
    let value: unknown;
    for (const [key, candidate] of Object.entries(body)) {
      if (key === field || key.toLowerCase() === field) value = candidate;
    }
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') {
      throw new BadRequestError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field Req.${field} of type string`);
    }
    request[field] = value;
  }
  return request;
}

/**
 * info: the CA certificate (PEM, trimmed as CFSSL does), the profile's `usages` and `expiry` string
 * (behaviour doc 4.2, 7.10). Signers with their own {@link Signer.info} (remote) answer themselves.
 */
export async function signerInfo(signer: Signer, policy: SigningPolicy, profileName?: string, label?: string): Promise<InfoResult> {
  if (typeof signer.info === 'function') return signer.info({ profile: profileName ?? '', label: label ?? '' });
  const profile = selectProfile(policy, profileName);
  const certificate = await signer.getCertificate();
  return { certificate: certificate.pem.trim(), usages: [...profile.usages], expiry: profile.expiryString };
}
