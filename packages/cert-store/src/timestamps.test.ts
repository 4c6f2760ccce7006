import { describe, expect, it } from 'vitest';
import { formatSqliteTime, parseStoredTime } from './timestamps.js';

describe('formatSqliteTime', () => {
  it("writes go-sqlite3's layout in UTC, a fraction only when not zero, Go's zero time for null", () => {
    expect(formatSqliteTime(new Date('2027-02-23T23:21:00Z'))).toBe('2027-02-23 23:21:00+00:00');
    expect(formatSqliteTime(new Date('2026-11-25T23:26:16.300Z'))).toBe('2026-11-25 23:26:16.3+00:00');
    expect(formatSqliteTime(null)).toBe('0001-01-01 00:00:00+00:00');
  });
});

describe('parseStoredTime', () => {
  it('reads the forms CFSSL, SQLite and PostgreSQL write', () => {
    expect(parseStoredTime('2026-11-25 23:26:16.305318995+00:00')!.toISOString()).toBe('2026-11-25T23:26:16.305Z');
    expect(parseStoredTime('2026-11-25 23:26:23')!.toISOString()).toBe('2026-11-25T23:26:23.000Z');
    expect(parseStoredTime('2026-11-25 23:28:25.417161+00')!.toISOString()).toBe('2026-11-25T23:28:25.417Z');
    expect(parseStoredTime('2026-11-26 01:28:25+02:00')!.toISOString()).toBe('2026-11-25T23:28:25.000Z');
    expect(parseStoredTime('2026-11-25T23:28:25Z')!.toISOString()).toBe('2026-11-25T23:28:25.000Z');
    expect(parseStoredTime(1_800_000_000)!.toISOString()).toBe('2027-01-15T08:00:00.000Z');
  });

  it("gives null for Go's zero time, NULL and text that is not a time", () => {
    expect(parseStoredTime('0001-01-01 00:00:00+00:00')).toBeNull();
    expect(parseStoredTime('0001-01-01 00:00:00+00')).toBeNull();
    expect(parseStoredTime(null)).toBeNull();
    expect(parseStoredTime('yesterday')).toBeNull();
  });
});
