/** Logic the two store implementations share above SQL. */
import { decodePemBlock, parseCertificate } from '@certsmith/x509-core';
import { authorityKeyIdHex, normaliseAuthorityKeyId } from './certificate-row.js';
import { InvalidStoreRequestError } from './errors.js';
import type { CertificateRecord, CountExpiringOptions, TidyOptions } from './model.js';

const HOUR_MS = 3_600_000;
/** Tidy's default safety buffer after expiry. */
export const DEFAULT_TIDY_BUFFER_MS = 72 * HOUR_MS;
/** How long change-feed entries are kept by default. */
export const DEFAULT_CHANGE_RETENTION_MS = 24 * HOUR_MS;
/** The metrics' "expiring soon" window. */
export const DEFAULT_EXPIRING_WINDOW_MS = 30 * 24 * HOUR_MS;

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new InvalidStoreRequestError(`${name} must be a non-negative number of milliseconds, got ${value}`);
  return value;
}

/** Tidy's cut-off times; the buffer is never negative, so no certificate goes before its expiry. */
export function tidyWindow(options: TidyOptions, now: Date): { cutoff: Date; changesCutoff: Date; batchSize: number } {
  const at = options.now ?? now;
  const buffer = nonNegative('bufferMs', options.bufferMs, DEFAULT_TIDY_BUFFER_MS);
  const retention = nonNegative('changeRetentionMs', options.changeRetentionMs, DEFAULT_CHANGE_RETENTION_MS);
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new InvalidStoreRequestError(`batchSize must be a positive integer, got ${batchSize}`);
  return { cutoff: new Date(at.getTime() - buffer), changesCutoff: new Date(at.getTime() - retention), batchSize };
}

/** The metrics window `(now, now + within]`. */
export function expiringWindow(options: CountExpiringOptions, now: Date): { from: Date; to: Date } {
  const from = options.now ?? now;
  return { from, to: new Date(from.getTime() + nonNegative('withinMs', options.withinMs, DEFAULT_EXPIRING_WINDOW_MS)) };
}

/** A revocation reason must be an integer (RFC 5280 CRLReason; the caller checks CFSSL's allowed set). */
export function checkReason(reason: number): void {
  if (!Number.isInteger(reason) || reason < 0 || reason > 2_147_483_647) throw new InvalidStoreRequestError(`reason must be a CRLReason code, got ${reason}`);
}

function pemAuthorityKeyId(pem: string): string | null {
  try {
    const match = decodePemBlock(pem);
    return match === null ? null : authorityKeyIdHex(parseCertificate(match.block.bytes));
  } catch {
    return null;
  }
}

/**
 * certinfo's lookup (lifecycle spec §3.6): normalised AKI, exact serial. When nothing matches, a
 * row CFSSL 1.2.0 wrote with an empty AKI (§2.4) is accepted if its certificate's AKI is the one asked.
 */
export async function findWithFallback(
  serial: string,
  authorityKeyId: string,
  get: (serial: string, aki: string) => Promise<CertificateRecord | null>,
  emptyAkiRows: (serial: string) => Promise<CertificateRecord[]>,
): Promise<CertificateRecord | null> {
  const aki = normaliseAuthorityKeyId(authorityKeyId);
  const exact = await get(serial, aki);
  if (exact !== null || aki === '') return exact;
  return (await emptyAkiRows(serial)).find((row) => pemAuthorityKeyId(row.pem) === aki) ?? null;
}
