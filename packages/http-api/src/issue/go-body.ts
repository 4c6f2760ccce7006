/**
 * Small Go-`encoding/json` decoders for the bodies the issuer package does not decode itself
 * (`/info`'s `info.Req`, and a first look at `/authsign`'s inner label). Go matches object keys to
 * struct fields case-insensitively and lets the last matching key win (behaviour doc 1.4).
 */
import { decodeSignRequest, jsonKind } from '@certsmith/issuer';
import { BadRequestError } from '@certsmith/x509-core';

/** The value of the last key of `body` that matches `field` case-insensitively, as Go's decoder picks it. */
export function goField(body: Record<string, unknown>, field: string): unknown {
  const folded = field.toLowerCase();
  let value: unknown;
  for (const [key, candidate] of Object.entries(body)) {
    if (key === field || key.toLowerCase() === folded) value = candidate;
  }
  return value;
}


/** CFSSL `info.Req` (`{"label", "profile"}`). */
export interface InfoRequest {
  label: string;
  profile: string;
}

/**
 * Decode an `/info` body as Go decodes `info.Req`: unknown keys ignored, `null` leaves the field
 * empty, other types → 400 with Go's text (`json: cannot unmarshal number into Go struct field
 * Req.label of type string`).
 */
export function decodeInfoRequest(body: Record<string, unknown>): InfoRequest {
  const request: InfoRequest = { label: '', profile: '' };
  for (const field of ['label', 'profile'] as const) {
    const value = goField(body, field);
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') {
      throw new BadRequestError(`json: cannot unmarshal ${jsonKind(value)} into Go struct field Req.${field} of type string`);
    }
    request[field] = value;
  }
  return request;
}

/**
 * The `label` inside an `/authsign` body's base64 `request`, read before the token is checked so
 * the token can be checked against that label's policy (a key of one label must not sign for
 * another, CFSSL issue #950). Anything unreadable gives `''`: the full decoding that follows
 * reports the problem with CFSSL's text.
 */
export function peekAuthenticatedLabel(body: Record<string, unknown>): string {
  const encoded = goField(body, 'request');
  if (typeof encoded !== 'string') return '';
  try {
    const inner: unknown = JSON.parse(Buffer.from(encoded, 'base64').toString('utf8'));
    return decodeSignRequest(inner, { requireCsr: false }).label ?? '';
  } catch {
    return '';
  }
}
