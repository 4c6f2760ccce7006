/**
 * Opaque keyset-pagination cursors: the sort key of the last row of a page plus a fingerprint of
 * the filters, so a cursor replayed with other filters is refused instead of skipping rows.
 */
import { createHash } from 'node:crypto';
import { InvalidStoreRequestError } from './errors.js';

/** The sort key a page ended at; the first element is the raw stored expiry (or `null`) for certificate lists. */
export type CursorKey = ReadonlyArray<string | null>;

/** Page-size bounds shared by the list calls. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** Fingerprint of a filter object (its defined values in key order). */
export function filterFingerprint(filters: Record<string, unknown>): string {
  const defined = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]);
  return createHash('sha256').update(JSON.stringify(defined)).digest('base64url').slice(0, 12);
}

export function encodeCursor(key: CursorKey, fingerprint: string): string {
  return Buffer.from(JSON.stringify({ k: key, f: fingerprint }), 'utf8').toString('base64url');
}

/** @throws InvalidStoreRequestError for a cursor that is not one of ours or was made with other filters. */
export function decodeCursor(cursor: string, fingerprint: string, keyLength: number): CursorKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidStoreRequestError('invalid cursor');
  }
  const { k, f } = (parsed ?? {}) as { k?: unknown; f?: unknown };
  if (!Array.isArray(k) || k.length !== keyLength || !k.every((v) => v === null || typeof v === 'string')) {
    throw new InvalidStoreRequestError('invalid cursor');
  }
  if (f !== fingerprint) throw new InvalidStoreRequestError('the cursor belongs to a listing with other filters');
  return k as CursorKey;
}

/** Validate a page size: an integer 1–1000, default 100. */
export function pageSize(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new InvalidStoreRequestError(`limit must be an integer from 1 to ${MAX_PAGE_SIZE}, got ${String(limit)}`);
  }
  return limit;
}

/** Validate an optional Date filter. */
export function checkDate(name: string, value: Date | undefined): void {
  if (value !== undefined && (!(value instanceof Date) || Number.isNaN(value.getTime()))) {
    throw new InvalidStoreRequestError(`${name} must be a valid time`);
  }
}

/** Validate a listing's expiry window (`expiresAfter`, `expiresBefore`), each optional. */
export function checkExpiryWindow(options: { expiresAfter?: Date; expiresBefore?: Date }): void {
  checkDate('expiresAfter', options.expiresAfter);
  checkDate('expiresBefore', options.expiresBefore);
}
