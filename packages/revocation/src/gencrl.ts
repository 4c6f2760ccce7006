/**
 * CFSSL's `gencrl` (lifecycle spec §3.3, §4): a CRL from a list of decimal serials, every entry revoked
 * "now" with no reason, nextUpdate = now + `expireTime` seconds. Used by `certsmith gencrl` (a serial
 * file, the CA certificate and a key or a signer label).
 *
 * Deliberate differences: a serial that is not a decimal integer is an error (CFSSL silently lists
 * serial 0 for `abc` or `0x10`); a bad or negative `expireTime` is a 400 with a clear message (CFSSL:
 * 500, code 0, Go's `strconv.ParseInt` text; negative values give nextUpdate before thisUpdate); the
 * CRL has a CRL Number (CFSSL's has none): the caller's, or thisUpdate in Unix seconds, which grows
 * between runs of a one-shot command.
 */
import { RevocationRequestError } from './errors.js';
import type { Crl } from './crl-builder.js';
import { buildCrl } from './crl-builder.js';
import type { RevocationSigner } from './revocation-signer.js';
import { parseDecimalSerial } from './serial-number.js';
import { wholeSeconds } from './time-encoding.js';

/** CFSSL's default CRL lifetime: one week. */
export const DEFAULT_GENCRL_SECONDS = 604_800;

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/** Digits allowed for each Go base prefix. */
const BASE_DIGITS: Record<number, RegExp> = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^\d+$/, 16: /^[0-9a-f]+$/i };

/** Go's `underscoreOK`: `_` only between digits or right after a base prefix (`0x_1F`, `1_000`). */
function underscoresOk(digits: string, prefixed: boolean): boolean {
  if (!digits.includes('_')) return true;
  if (digits.startsWith('_') && !prefixed) return false;
  return !/__|_$/.test(digits);
}

/**
 * `strconv.ParseInt(strings.TrimSpace(text), 0, 32)`: an optional sign, then `0x`/`0X` hex, `0o`/`0O`
 * or a leading `0` octal, `0b`/`0B` binary, or decimal; underscores as in Go literals. `0x20` is 32,
 * `010` is 8. Returns `null` when Go would fail (syntax or 32-bit range).
 */
export function parseGoInt32(text: string): number | null {
  let rest = text.trim();
  let sign = 1;
  if (rest.startsWith('+') || rest.startsWith('-')) {
    if (rest.startsWith('-')) sign = -1;
    rest = rest.slice(1);
  }
  let base = 10;
  let prefixed = false;
  if (/^0[xX]/.test(rest)) [base, rest, prefixed] = [16, rest.slice(2), true];
  else if (/^0[oO]/.test(rest)) [base, rest, prefixed] = [8, rest.slice(2), true];
  else if (/^0[bB]/.test(rest)) [base, rest, prefixed] = [2, rest.slice(2), true];
  else if (rest.length > 1 && rest.startsWith('0')) [base, rest, prefixed] = [8, rest.slice(1), true];
  if (!underscoresOk(rest, prefixed)) return null;
  const digits = rest.replace(/_/g, '');
  if (digits === '' || !BASE_DIGITS[base]!.test(digits)) return null;
  const value = sign * parseInt(digits, base);
  if (!Number.isSafeInteger(value) || value < INT32_MIN || value > INT32_MAX) return null;
  return value;
}

/**
 * The `expireTime` of a gencrl request: absent or `""` → one week; otherwise Go integer syntax
 * ({@link parseGoInt32}) in seconds, not negative.
 *
 * @throws RevocationRequestError (400) naming the value.
 */
export function parseGencrlExpireTime(expireTime: string | undefined | null): number {
  if (expireTime === undefined || expireTime === null || expireTime === '') return DEFAULT_GENCRL_SECONDS;
  const seconds = parseGoInt32(expireTime);
  if (seconds === null) {
    throw new RevocationRequestError(`expireTime must be a whole number of seconds (e.g. "604800", "0x20"), got ${JSON.stringify(expireTime)}`);
  }
  if (seconds < 0) throw new RevocationRequestError(`expireTime must not be negative, got ${JSON.stringify(expireTime)}`);
  return seconds;
}

/**
 * The serial file of `cfssl gencrl SERIALFILE CERT KEY [SECONDS]`: one decimal serial per line,
 * surrounding whitespace ignored, blank lines skipped.
 *
 * @throws RevocationRequestError naming the line of a serial that is not a decimal integer.
 */
export function parseSerialNumberList(text: string): bigint[] {
  const serials: bigint[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    serials.push(parseDecimalSerial(line, `serial number on line ${i + 1}`));
  }
  return serials;
}

/** Options of {@link generateCrl}. */
export interface GenerateCrlOptions {
  /** The CA signer. */
  issuer: RevocationSigner;
  /** Serials to list: bigints, or decimal strings (the API's `serialNumber` array). */
  serialNumbers: ReadonlyArray<bigint | string>;
  /** `expireTime` as CFSSL takes it (seconds, Go integer syntax, default one week). */
  expireTime?: string | null;
  /** Default now. */
  now?: Date;
  /** CRL Number; default thisUpdate in Unix seconds. */
  crlNumber?: bigint;
}

/**
 * CFSSL's gencrl as a function: every serial revoked at `now`, no reason codes.
 *
 * @throws RevocationRequestError (400) for a bad `expireTime` or serial (the message names it).
 */
export async function generateCrl(options: GenerateCrlOptions): Promise<Crl> {
  const seconds = parseGencrlExpireTime(options.expireTime);
  const now = wholeSeconds(options.now ?? new Date());
  const serials = options.serialNumbers.map((serial, index) =>
    typeof serial === 'bigint' ? serial : parseDecimalSerial(serial, `serialNumber[${index}]`),
  );
  return buildCrl({
    issuer: options.issuer,
    crlNumber: options.crlNumber ?? BigInt(Math.floor(now.getTime() / 1000)),
    thisUpdate: now,
    nextUpdate: new Date(now.getTime() + seconds * 1000),
    revoked: serials.map((serial) => ({ serial, revokedAt: now })),
  });
}
