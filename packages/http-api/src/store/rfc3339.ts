/**
 * RFC 3339 timestamps as Go reads them: CFSSL's certadd decodes its time fields with
 * `time.Time.UnmarshalJSON` (layout `2006-01-02T15:04:05Z07:00`), and the inventory's filters take
 * the same form.
 */

/** A parsed timestamp. */
export interface Rfc3339Time {
  /** The instant (JavaScript keeps milliseconds). */
  date: Date;
  /** Written with `Z` (Go gives the time the UTC location) rather than a numeric offset. */
  utc: boolean;
  /** The fraction of a second is non-zero (Go keeps nanoseconds: `…:00.5Z` is not `…:00Z`). */
  fractional: boolean;
}

const PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}:\d{2})$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeapYear(year: number): boolean {
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

/**
 * Parse `text` as Go's `time.Parse(time.RFC3339, …)` does: four-digit year, each field in range
 * (day within its month, hour < 24, minute and second < 60), an optional fraction after `.` or `,`,
 * then `Z` or `±hh:mm`. Returns `null` for anything else.
 */
export function parseRfc3339(text: string): Rfc3339Time | null {
  const match = PATTERN.exec(text);
  if (match === null) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12) return null;
  const days = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
  if (day < 1 || day > days || hour > 23 || minute > 59 || second > 59) return null;
  const fraction = match[7] ?? '';
  const zone = match[8]!;
  let offsetMinutes = 0;
  if (zone !== 'Z') {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(4, 6));
    if (hours > 23 || minutes > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
  }
  const milliseconds = fraction === '' ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const utcMillis = Date.UTC(year, month - 1, day, hour, minute, second, milliseconds) - offsetMinutes * 60_000;
  // Date.UTC maps years 0–99 to 1900–1999; set the year explicitly.
  const date = new Date(utcMillis);
  if (year < 100) {
    const exact = new Date(0);
    exact.setUTCFullYear(year, month - 1, day);
    exact.setUTCHours(hour, minute, second, milliseconds);
    date.setTime(exact.getTime() - offsetMinutes * 60_000);
  }
  return { date, utc: zone === 'Z', fractional: /[1-9]/.test(fraction) };
}
