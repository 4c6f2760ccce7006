/**
 * Timestamps as CFSSL's drivers store them. go-sqlite3 writes `time.Time` as text in the layout
 * `2006-01-02 15:04:05.999999999-07:00` (CFSSL converts to UTC first, so `+00:00`); SQLite's own
 * `CURRENT_TIMESTAMP` (CFSSL's revoke) writes `2026-11-25 23:26:23`. PostgreSQL `timestamptz` is
 * read as text in the session time zone (certsmith sets UTC). "Not set" is Go's zero time
 * `0001-01-01 00:00:00+00:00`, never NULL, in rows CFSSL writes (lifecycle spec §2.1, §2.3).
 */

/** Go's zero `time.Time` in go-sqlite3's layout. */
export const GO_ZERO_TIME_SQLITE = '0001-01-01 00:00:00+00:00';
/** Go's zero `time.Time` as lib/pq sends it to a `timestamptz`. */
export const GO_ZERO_TIME_POSTGRES = '0001-01-01 00:00:00+00';

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/**
 * A time in go-sqlite3's layout, UTC: `2027-02-23 23:21:00+00:00`, with a fraction only when it is
 * not zero (Go's `.999999999` drops trailing zeros). `null` → Go's zero time.
 *
 * Cut from `toISOString()` (one native string) for years 0–9999, where its fields are the same
 * zero-padded numbers: every recorded certificate writes four of these, and building each field
 * with `padStart` made ≈10 short strings a time (docs/performance.md, "Store-on allocation pass").
 */
export function formatSqliteTime(date: Date | null): string {
  if (date === null) return GO_ZERO_TIME_SQLITE;
  const year = date.getUTCFullYear();
  // NaN (an invalid date) fails the test too and keeps the field-by-field text.
  if (!(year >= 0 && year <= 9999)) return formatSqliteTimeByFields(date);
  const iso = date.toISOString(); // YYYY-MM-DDTHH:mm:ss.sssZ
  const ms = date.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : iso.slice(19, ms % 100 === 0 ? 21 : ms % 10 === 0 ? 22 : 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction}+00:00`;
}

/** {@link formatSqliteTime} field by field: years outside 0–9999, which `toISOString` writes with a sign and six digits. */
export function formatSqliteTimeByFields(date: Date): string {
  const base =
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  const ms = date.getUTCMilliseconds();
  const fraction = ms === 0 ? '' : `.${pad(ms, 3).replace(/0+$/, '')}`;
  return `${base}${fraction}+00:00`;
}

/** A time for a PostgreSQL `timestamptz` parameter; `null` → Go's zero time. */
export function formatPostgresTime(date: Date | null): string {
  return date === null ? GO_ZERO_TIME_POSTGRES : date.toISOString();
}

const TIME_PATTERN =
  /^(\d{4,})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?(\s*BC)?$/i;

/**
 * Read a stored timestamp: the text forms above (and ISO 8601 with `T`), integers as Unix seconds
 * (go-sqlite3 reads those too), `Date`s. Go's zero time, BC dates, NULL and text that is not a time
 * give `null`.
 */
export function parseStoredTime(value: unknown): Date | null {
  if (typeof value === 'string') {
    const read = parseUtcStoredTime(value);
    if (read !== undefined) return read;
  }
  return parseStoredTimeByPattern(value);
}

/** The value of the `count` decimal digits at `start`, or -1 when one of them is not a digit. */
function digitsAt(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index += 1) {
    const digit = text.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * The UTC layouts certsmith and CFSSL write, read by character: go-sqlite3's
 * `2026-11-25 23:26:23.123456789+00:00` and PostgreSQL's `2026-11-25 23:26:23.123456+00` (the
 * fraction optional in both). Every row holds four times and a page of 100 rows reads 400 of them:
 * {@link TIME_PATTERN} took a third of the store thread's time for such a page (docs/performance.md,
 * "Inventory pages without their PEMs"). The same result as {@link parseStoredTimeByPattern} for
 * these layouts (its test compares them); `undefined` for any other text, which that reads.
 */
function parseUtcStoredTime(text: string): Date | null | undefined {
  const length = text.length;
  let end: number;
  if (text.endsWith('+00:00')) end = length - 6;
  else if (text.endsWith('+00')) end = length - 3;
  else return undefined;
  if (end < 19 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45 || text.charCodeAt(10) !== 32 || text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) {
    return undefined;
  }
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  // Fields out of range (the pattern lets Date roll them over, from the year 2000) are the pattern's too.
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  // Go's zero time; years 2–99 need the pattern's setUTCFullYear (Date.UTC maps them to 1900–1999).
  if (year <= 1) return null;
  if (year < 100) return undefined;
  let ms = 0;
  if (end > 19) {
    const digits = end - 20;
    if (text.charCodeAt(19) !== 46 || digits < 1 || digitsAt(text, 20, digits) < 0) return undefined;
    ms = digitsAt(text, 20, Math.min(3, digits)) * (digits === 1 ? 100 : digits === 2 ? 10 : 1);
  }
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms));
  // A day past the month's end (30 February).
  return date.getUTCDate() === day ? date : undefined;
}

/** {@link parseStoredTime} by {@link TIME_PATTERN}: every form it reads. */
export function parseStoredTimeByPattern(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) || value.getUTCFullYear() <= 1 ? null : value;
  if (typeof value === 'number' || typeof value === 'bigint') return new Date(Number(value) * 1000);
  const text = (Buffer.isBuffer(value) ? value.toString('utf8') : String(value)).trim();
  const match = TIME_PATTERN.exec(text);
  if (match === null) return null;
  const [, y, mo, d, h, mi, s, fraction, zone, bc] = match;
  const year = Number(y);
  if (bc !== undefined || year <= 1) return null;
  const ms = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  let time = Date.UTC(2000, Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0), ms);
  const date = new Date(time);
  date.setUTCFullYear(year); // Date.UTC maps years 0–99 to 1900–1999
  time = date.getTime();
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replaceAll(':', '');
    const offsetSeconds = Number(digits.slice(0, 2)) * 3600 + Number(digits.slice(2, 4) || 0) * 60 + Number(digits.slice(4, 6) || 0);
    time -= sign * offsetSeconds * 1000;
  }
  return Number.isNaN(time) ? null : new Date(time);
}
