/**
 * certadd's request (CFSSL `api/certadd/insert.go`, lifecycle spec §3.5): decoded as Go's
 * `encoding/json` decodes it into `AddRequest`, then checked in CFSSL's order with CFSSL's messages,
 * and turned into the row to insert with the values as given (nothing canonicalised, as CFSSL).
 */
import type { CertificateRowInput } from '@certsmith/cert-store';
import { serialToDecimal } from '@certsmith/cert-store';
import { JsonNumberLiteral } from '@certsmith/issuer';
import { BadRequestError, decodePemBlock, parseCertificates, toHex } from '@certsmith/x509-core';
import type { Certificate } from '@certsmith/x509-core';
import { parseRfc3339 } from './rfc3339.js';
import type { Rfc3339Time } from './rfc3339.js';

/** CFSSL's message for a body Go cannot decode into `AddRequest` (any type or syntax error). */
export const CERTADD_PARSE_MESSAGE = 'Unable to parse certificate addition request';

/** A decoded `AddRequest`: Go's zero values for what the body does not set. */
interface AddRequest {
  serial: string;
  authorityKeyId: string;
  label: string;
  status: string;
  reason: number;
  /** `null`: Go's zero time. */
  expiry: Rfc3339Time | null;
  revokedAt: Rfc3339Time | null;
  pem: string;
  /** `*time.Time`: `null` when absent or JSON null. */
  issuedAt: Rfc3339Time | null;
  notBefore: Rfc3339Time | null;
  /** `types.JSONText`: any JSON value; `undefined` when absent (the store then writes `{}`, as CFSSL). */
  metadata: unknown;
  sans: unknown;
  commonName: string;
}

type FieldKind = 'string' | 'int' | 'time' | 'timePointer' | 'json';

/** `AddRequest`'s fields: JSON name (the Go tag), kind, property. */
const FIELDS: ReadonlyArray<readonly [string, FieldKind, keyof AddRequest]> = [
  ['serial_number', 'string', 'serial'],
  ['authority_key_identifier', 'string', 'authorityKeyId'],
  ['ca_label', 'string', 'label'],
  ['status', 'string', 'status'],
  ['reason', 'int', 'reason'],
  ['expiry', 'time', 'expiry'],
  ['revoked_at', 'time', 'revokedAt'],
  ['pem', 'string', 'pem'],
  ['issued_at', 'timePointer', 'issuedAt'],
  ['not_before', 'timePointer', 'notBefore'],
  ['metadata', 'json', 'metadata'],
  ['sans', 'json', 'sans'],
  ['common_name', 'string', 'commonName'],
];

/** Go's case-insensitive key match (ASCII, plus the two runes that fold to letters of these names). */
function foldKey(key: string): string {
  return key.replace(/[A-Z]/g, (c) => c.toLowerCase()).replace(/\u017f/g, 's').replace(/\u212a/g, 'k');
}

function fieldFor(key: string): (typeof FIELDS)[number] | undefined {
  return FIELDS.find(([json]) => json === key) ?? FIELDS.find(([json]) => json === foldKey(key));
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Go's zero `time.Time` (`0001-01-01T00:00:00Z`), in milliseconds since the epoch. */
const GO_ZERO_TIME_MS = (() => {
  const zero = new Date(0);
  zero.setUTCFullYear(1, 0, 1);
  return zero.getTime();
})();

/** True for Go's zero time written with `Z`: CFSSL's `== time.Time{}` and `IsZero()` hold for it. */
function isZeroTime(time: Rfc3339Time): boolean {
  return time.utc && !time.fractional && time.date.getTime() === GO_ZERO_TIME_MS;
}

/** JSON null for a field Go leaves untouched (strings, ints, `time.Time`). */
const UNCHANGED = Symbol('unchanged');

/** One value decoded as Go would into a field of `kind` (`null` for nil pointers, zero times and JSON null in JSONText). */
function decodeField(value: unknown, kind: FieldKind): unknown {
  if (value === null) {
    // Go: null sets pointers and JSONText's bytes, and leaves strings, ints and time.Time alone.
    return kind === 'timePointer' || kind === 'json' ? null : UNCHANGED;
  }
  switch (kind) {
    case 'string':
      if (typeof value !== 'string') throw new BadRequestError(CERTADD_PARSE_MESSAGE);
      return value;
    case 'int':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
      if (typeof value === 'bigint' && value >= INT64_MIN && value <= INT64_MAX) return Number(value);
      throw new BadRequestError(CERTADD_PARSE_MESSAGE);
    case 'time':
    case 'timePointer': {
      const parsed = typeof value === 'string' ? parseRfc3339(value) : null;
      if (parsed === null) throw new BadRequestError(CERTADD_PARSE_MESSAGE);
      return kind === 'time' && isZeroTime(parsed) ? null : parsed;
    }
    case 'json':
      return plainJson(value);
  }
}

/**
 * A JSON value as the store marshals it: exact integer literals beyond 2^53 and number literals
 * such as `1.50` become JavaScript numbers (the stored JSON keeps their value, not their spelling).
 */
function plainJson(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof JsonNumberLiteral) return Number(value.literal);
  if (Array.isArray(value)) return value.map(plainJson);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [key, plainJson(item)]));
  }
  return value;
}

/** Decode the body as Go decodes it into `AddRequest`; any type error is CFSSL's parse message. */
export function decodeAddRequest(body: Record<string, unknown>): AddRequest {
  const request: AddRequest = {
    serial: '',
    authorityKeyId: '',
    label: '',
    status: '',
    reason: 0,
    expiry: null,
    revokedAt: null,
    pem: '',
    issuedAt: null,
    notBefore: null,
    metadata: undefined,
    sans: undefined,
    commonName: '',
  };
  for (const [key, value] of Object.entries(body)) {
    const field = fieldFor(key);
    if (field === undefined) continue; // Go ignores unknown keys
    const decoded = decodeField(value, field[1]);
    if (decoded !== UNCHANGED) (request as unknown as Record<string, unknown>)[field[2]] = decoded;
  }
  return request;
}

/** Statuses CFSSL knows (`ocsp.StatusCode`). */
const STATUSES = new Set(['good', 'revoked', 'unknown']);

/** CRLReason codes certadd accepts (CFSSL's `validReasons`: 0–6 and 8–10; 7 is unused in RFC 5280). */
const VALID_REASONS = new Set([0, 1, 2, 3, 4, 5, 6, 8, 9, 10]);

const bad = (message: string): BadRequestError => new BadRequestError(message);

/** CFSSL's `helpers.ParseCertificatePEM`: one PEM block (a certificate, or PKCS#7 holding one), nothing after it. */
function parseOneCertificatePem(pem: string): Certificate | null {
  const trimmed = pem.trim();
  const match = decodePemBlock(trimmed);
  if (match === null || trimmed.slice(match.end) !== '') return null;
  try {
    const certificates = parseCertificates(trimmed.slice(match.start, match.end));
    return certificates.length === 1 ? certificates[0]! : null;
  } catch {
    return null;
  }
}

/**
 * Check a decoded request in CFSSL's order (lifecycle spec §3.5) and return the row to insert.
 * @throws BadRequestError (400) with CFSSL's message for the first check that fails
 */
export function checkAddRequest(request: AddRequest): CertificateRowInput {
  if (request.serial === '') throw bad('Serial number is required but not provided');
  if (request.authorityKeyId === '') throw bad('Authority key identifier is required but not provided');
  if (!STATUSES.has(request.status)) throw bad('Invalid certificate status');
  if (request.status === 'revoked') {
    if (request.revokedAt === null) throw bad('Revoked certificate should specify when it was revoked');
    if (!VALID_REASONS.has(request.reason)) throw bad('Invalid certificate status reason code');
  }
  if (request.pem === '') throw bad('The provided certificate is empty');
  if (request.expiry === null) throw bad('Expiry is required but not provided');
  const certificate = parseOneCertificatePem(request.pem);
  if (certificate === null) throw bad('Unable to parse PEM encoded certificates');
  // Go's big.Int.SetString(s, 10): an optional sign, then decimal digits.
  if (!/^[+-]?\d+$/.test(request.serial)) throw bad('Unable to parse serial key of request');
  if (BigInt(request.serial) !== BigInt(serialToDecimal(certificate.serialNumberHex))) throw bad('Serial key of request and certificate do not match');
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(request.authorityKeyId)) throw bad('Unable to decode authority key identifier');
  if (certificate.authorityKeyId === null || request.authorityKeyId.toLowerCase() !== toHex(certificate.authorityKeyId)) {
    throw bad('Authority key identifier of request and certificate do not match');
  }
  // CFSSL compares the time.Time values with `!=`: the same instant written with `+00:00` has
  // another location than the certificate's UTC and does not match (lifecycle spec §0 item 13).
  const expiry = request.expiry;
  if (!expiry.utc || expiry.fractional || expiry.date.getTime() !== certificate.notAfter.getTime()) {
    throw bad('Expiry of request and certificate do not match');
  }
  const row: CertificateRowInput = {
    serial: request.serial,
    authorityKeyId: request.authorityKeyId,
    label: request.label,
    status: request.status,
    reason: request.reason,
    expiry: expiry.date,
    revokedAt: request.revokedAt?.date ?? null,
    pem: request.pem,
    issuedAt: request.issuedAt?.date ?? null,
    notBefore: request.notBefore?.date ?? null,
    // CFSSL: sql.NullString{Valid: CommonName != ""}.
    commonName: request.commonName === '' ? null : request.commonName,
  };
  if (request.metadata !== undefined) row.metadata = request.metadata;
  if (request.sans !== undefined) row.sans = request.sans;
  return row;
}
