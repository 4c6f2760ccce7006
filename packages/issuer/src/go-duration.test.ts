import { describe, expect, it } from 'vitest';

import { parseGoDuration, parseGoDurationNanoseconds } from './go-duration.js';

describe('parseGoDuration', () => {
  it.each([
    ['8760h', 8760 * 3_600_000],
    ['90m', 90 * 60_000],
    ['1h30m', 90 * 60_000],
    ['1.5h', 90 * 60_000],
    ['2h45m30.5s', (2 * 3600 + 45 * 60 + 30.5) * 1000],
    ['0', 0],
    ['-5m', -300_000],
    ['+1s', 1000],
    ['300ms', 300],
    ['1500us', 1.5],
    ['1µs', 0.001],
  ])('parses %s when the syntax is Go duration syntax', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 6);
  });

  it('keeps nanosecond precision when asked for nanoseconds', () => {
    expect(parseGoDurationNanoseconds('1h0.000000001s')).toBe(3_600_000_000_001n);
  });

  it.each([
    ['1d', 'time: unknown unit "d" in duration "1d"'],
    ['1', 'time: missing unit in duration "1"'],
    ['abc', 'time: invalid duration "abc"'],
    ['', 'time: invalid duration ""'],
    ['.h', 'time: invalid duration ".h"'],
    ['9999999999999h', 'time: invalid duration "9999999999999h"'],
  ])('throws Go\'s message when given %j', (text, message) => {
    expect(() => parseGoDuration(text)).toThrow(message);
  });
});
