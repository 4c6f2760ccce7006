/**
 * Pre-signing OCSP responses from store rows: at issuance, at revocation and on refresh (CFSSL's
 * `ocsprefresh`, lifecycle spec §5.2). Where CFSSL's refresh signs every row with one CA and aborts
 * the whole run at the first certificate of another CA (cfssl #1105, #1152, #746), this picks the
 * signing identity by each row's AKI, skips rows of CAs it does not sign for, records failures and
 * carries on. The stored expiry is the response's nextUpdate (CFSSL's is up to an hour later, §0 item 8).
 */
import type { ErrorPayload } from '@certsmith/x509-core';
import { toErrorPayload } from '@certsmith/x509-core';

import type { OcspCertStatus } from './ocsp-response-builder.js';
import { DEFAULT_OCSP_INTERVAL_MS, ocspValidity } from './ocsp-response-builder.js';
import { ocspResponseTemplate } from './ocsp-response-template.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { RevocationReason } from './revocation-reason.js';
import type { CertificateStatusRecord, SignedOcspResponse } from './store-ports.js';

/** Validity options shared by the signing functions. */
export interface OcspSigningOptions {
  /** CFSSL `-interval`; default 96 hours. */
  intervalMs?: number;
  /** Default now. */
  now?: Date;
}

/**
 * The OCSP status a row stands for: `revoked` with its reason and time; a row revoked with
 * removeFromCRL is `good` again (RFC 5280 5.3.1: released from hold); CFSSL's `unknown` stays.
 */
export function ocspStatusOf(record: CertificateStatusRecord): { status: OcspCertStatus; reason: number; revokedAt: Date | undefined } {
  if (record.status === 'revoked' && record.reason !== RevocationReason.removeFromCRL) {
    return { status: 'revoked', reason: record.reason, revokedAt: record.revokedAt ?? undefined };
  }
  return { status: record.status === 'unknown' ? 'unknown' : 'good', reason: 0, revokedAt: undefined };
}

/**
 * Sign the response for one row and return the `ocsp_responses` row to upsert: `buildOcspResponse`'s
 * bytes, written with the identity's {@link ocspResponseTemplate} (one per row adds up in a refresh).
 */
export async function signOcspForRecord(identity: OcspSigningIdentity, record: CertificateStatusRecord, options: OcspSigningOptions = {}): Promise<SignedOcspResponse> {
  const { status, reason, revokedAt } = ocspStatusOf(record);
  const validity = ocspValidity(options.now ?? new Date(), options.intervalMs ?? DEFAULT_OCSP_INTERVAL_MS, revokedAt);
  const template = ocspResponseTemplate(identity);
  const data = template.responseData({ serialNumber: record.serial, status, reason, revokedAt, ...validity });
  const body = template.response(data, await identity.signer.sign(data));
  return { serial: record.serial, authorityKeyId: record.authorityKeyId, body, expiry: validity.nextUpdate };
}

/** Options of {@link refreshOcspResponses}. */
export interface OcspRefreshOptions extends OcspSigningOptions {
  /** The rows to sign for (CFSSL: every unexpired certificate). */
  certificates: Iterable<CertificateStatusRecord> | AsyncIterable<CertificateStatusRecord>;
  /** The identity that signs for a CA (by lower-case hex AKI), `undefined` when this instance does not. */
  identityFor(authorityKeyId: string): OcspSigningIdentity | undefined;
  /** Store one signed response (upsert: `(response) => store.upsertOcspResponse(response)`). */
  save(response: SignedOcspResponse): Promise<void>;
}

/** What a refresh did. */
export interface OcspRefreshResult {
  signed: number;
  /** Rows of CAs no identity signs for. */
  skipped: Array<{ serial: string; authorityKeyId: string }>;
  /** Rows whose signing or saving failed (the run went on). */
  failed: Array<{ serial: string; authorityKeyId: string; error: ErrorPayload }>;
}

/** CFSSL's ocsprefresh as a function, over any number of CAs. */
export async function refreshOcspResponses(options: OcspRefreshOptions): Promise<OcspRefreshResult> {
  const result: OcspRefreshResult = { signed: 0, skipped: [], failed: [] };
  const now = options.now ?? new Date();
  for await (const record of options.certificates) {
    const identity = options.identityFor(record.authorityKeyId.toLowerCase());
    if (identity === undefined) {
      result.skipped.push({ serial: record.serial, authorityKeyId: record.authorityKeyId });
      continue;
    }
    try {
      await options.save(await signOcspForRecord(identity, record, { now, intervalMs: options.intervalMs }));
      result.signed++;
    } catch (error) {
      result.failed.push({ serial: record.serial, authorityKeyId: record.authorityKeyId, error: toErrorPayload(error) });
    }
  }
  return result;
}
