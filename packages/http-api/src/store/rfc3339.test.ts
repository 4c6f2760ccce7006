import { describe, expect, it } from 'vitest';
import { parseRfc3339 } from './rfc3339.js';

describe('parseRfc3339', () => {
  it.each<[string, string, boolean, boolean]>([
    ['2027-11-25T23:22:00Z', '2027-11-25T23:22:00.000Z', true, false],
    ['2027-11-25T23:22:00+00:00', '2027-11-25T23:22:00.000Z', false, false],
    ['2027-11-26T01:22:00+02:00', '2027-11-25T23:22:00.000Z', false, false],
    ['2027-11-25T23:22:00.000Z', '2027-11-25T23:22:00.000Z', true, false],
    ['2027-11-25T23:22:00.5Z', '2027-11-25T23:22:00.500Z', true, true],
    ['2027-11-25T23:22:00,250Z', '2027-11-25T23:22:00.250Z', true, true],
    ['2027-11-25T23:22:00.000000001Z', '2027-11-25T23:22:00.000Z', true, true],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z', true, false],
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z', true, false],
  ])('reads %s as Go does', (text, iso, utc, fractional) => {
    const parsed = parseRfc3339(text);
    expect(parsed).not.toBeNull();
    expect(parsed!.date.toISOString()).toBe(iso);
    expect(parsed!.utc).toBe(utc);
    expect(parsed!.fractional).toBe(fractional);
  });

  it.each(['2027-11-25 23:22:00Z', '2027-11-25t23:22:00Z', '2027-11-25T23:22:00z', '2027-11-25T23:22Z', '2027-13-01T00:00:00Z', '2023-02-29T00:00:00Z', '2027-11-25T24:00:00Z', '2027-11-25T23:60:00Z', '2027-11-25T23:22:60Z', '2027-11-25T23:22:00+2400', '27-11-25T23:22:00Z', ''])(
    'refuses %j',
    (text) => {
      expect(parseRfc3339(text)).toBeNull();
    },
  );
});
