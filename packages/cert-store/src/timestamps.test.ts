import { describe, expect, it } from 'vitest';
import { dateWalk } from './test-support/date-walk.js';
import { formatSqliteTime, formatSqliteTimeByFields, parseStoredTime, parseStoredTimeByPattern } from './timestamps.js';

describe('formatSqliteTime', () => {
  it("writes go-sqlite3's layout in UTC, a fraction only when not zero, Go's zero time for null", () => {
    expect(formatSqliteTime(new Date('2027-02-23T23:21:00Z'))).toBe('2027-02-23 23:21:00+00:00');
    expect(formatSqliteTime(new Date('2026-11-25T23:26:16.300Z'))).toBe('2026-11-25 23:26:16.3+00:00');
    expect(formatSqliteTime(null)).toBe('0001-01-01 00:00:00+00:00');
  });

  it('writes every fraction with its trailing zeros dropped', () => {
    const at = (ms: number) => formatSqliteTime(new Date(Date.UTC(2026, 10, 26, 19, 5, 7, ms)));
    expect([0, 1, 5, 10, 50, 100, 120, 123, 990, 999].map(at)).toEqual([
      '2026-11-26 19:05:07+00:00',
      '2026-11-26 19:05:07.001+00:00',
      '2026-11-26 19:05:07.005+00:00',
      '2026-11-26 19:05:07.01+00:00',
      '2026-11-26 19:05:07.05+00:00',
      '2026-11-26 19:05:07.1+00:00',
      '2026-11-26 19:05:07.12+00:00',
      '2026-11-26 19:05:07.123+00:00',
      '2026-11-26 19:05:07.99+00:00',
      '2026-11-26 19:05:07.999+00:00',
    ]);
  });

  it('writes the same text as the field-by-field layout for any time, the years toISOString cannot write included', () => {
    const years = [-1, 0, 1, 99, 100, 999, 1000, 1969, 1970, 2038, 9999, 10_000, 275_000];
    for (const year of years) {
      const date = new Date(Date.UTC(2000, 0, 1, 0, 0, 0, 0));
      date.setUTCFullYear(year);
      expect(formatSqliteTime(date)).toBe(formatSqliteTimeByFields(date));
    }
    expect(formatSqliteTime(new Date(Date.UTC(10_000, 0, 1)))).toBe('10000-01-01 00:00:00+00:00');
    for (const date of dateWalk(0x2545f491, 20_000)) expect(formatSqliteTime(date)).toBe(formatSqliteTimeByFields(date));
    const invalid = new Date(Number.NaN);
    expect(formatSqliteTime(invalid)).toBe(formatSqliteTimeByFields(invalid));
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

describe('parseStoredTime on the UTC layouts it reads by character', () => {
  const same = (text: string) => expect([text, parseStoredTime(text)?.getTime() ?? null]).toEqual([text, parseStoredTimeByPattern(text)?.getTime() ?? null]);

  it('reads every fraction length, both suffixes and the edges of the layout as the pattern does', () => {
    const base = '2026-11-25 23:26:16';
    for (const fraction of ['', '.3', '.30', '.305', '.3053', '.305318995', '.000', '.999999999999']) {
      for (const zone of ['+00:00', '+00']) same(`${base}${fraction}${zone}`);
    }
    for (const text of [
      '0001-01-01 00:00:00+00:00',
      '0001-01-01 00:00:00+00',
      '0002-03-04 05:06:07+00:00',
      '0099-12-31 23:59:59.5+00:00',
      '0100-01-01 00:00:00+00:00',
      '9999-12-31 23:59:59.999+00:00',
      '2026-02-30 25:61:61+00:00',
      '2026-11-25 23:26:16.+00:00',
      '2026-11-25 23:26:16.3x+00:00',
      '2026-11-25 23:26:1x+00:00',
      '2026-11-25T23:26:16+00:00',
      '2026-11-25 23:26:16+01:00',
      '2026-11-25 23:26:16 +00:00',
      ' 2026-11-25 23:26:16+00:00',
      '2026-11-25 23:26:16-00:00',
      '12026-11-25 23:26:16+00:00',
      '2026-11-25 23:26+00:00',
      '+00:00',
    ]) {
      same(text);
    }
    expect(parseStoredTime('2026-11-25 23:26:16.3+00')!.toISOString()).toBe('2026-11-25T23:26:16.300Z');
    expect(parseStoredTime('0001-01-01 00:00:00+00:00')).toBeNull();
  });

  it('reads what formatSqliteTime writes, and the PostgreSQL form of it, as the pattern does', () => {
    for (const date of dateWalk(0x1b873593, 20_000)) {
      const written = formatSqliteTime(date);
      same(written);
      same(written.replace('+00:00', '+00'));
      if (date.getUTCFullYear() >= 100) expect(parseStoredTime(written)!.getTime()).toBe(date.getTime());
    }
  });
});

