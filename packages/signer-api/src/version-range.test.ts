import { describe, expect, it } from 'vitest';

import { satisfiesVersionRange } from './version-range.js';

describe('satisfiesVersionRange', () => {
  it.each([
    ['1.0.0', '^1.0.0', true],
    ['1.4.2', '^1.0.0', true],
    ['2.0.0', '^1.0.0', false],
    ['0.9.0', '^1.0.0', false],
    ['0.2.5', '^0.2.3', true],
    ['0.3.0', '^0.2.3', false],
    ['0.0.4', '^0.0.3', false],
    ['1.2.9', '~1.2.3', true],
    ['1.3.0', '~1.2.3', false],
    ['1.9.0', '~1', true],
    ['1.5.0', '>=1.0.0 <2.0.0', true],
    ['2.0.0', '>=1.0.0 <2.0.0', false],
    ['2.1.0', '1.x || 2.x', true],
    ['3.0.0', '1.x || 2.x', false],
    ['7.1.0', '*', true],
    ['1.0.0', '1.0.0', true],
    ['1.0.1', '1.0.0', false],
    ['1.2.0', '>= 1.2', true],
    ['1.0.0-beta.1', '^1.0.0', false],
    ['1.0.0', '<=1', true],
    ['2.0.0', '>1', true],
    ['1.9.9', '>1', false],
    // npm's pre-release rule: a pre-release satisfies a range only when a comparator of the range
    // names a pre-release of the same major.minor.patch (the hand-written check said yes to all three).
    ['1.1.0-rc.1', '^1.0.0', false],
    ['2.0.0-alpha.1', '>=1.0.0', false],
    ['1.1.0-rc.1', '*', false],
    ['1.1.0-rc.2', '>=1.1.0-rc.1', true],
    ['1.1.0', '>=1.1.0-rc.1', true],
    ['1.2.0-rc.1', '>=1.1.0-rc.1', false],
  ])('returns %s in %s = %s when compared', (version, range, expected) => {
    expect(satisfiesVersionRange(version, range)).toBe(expected);
  });

  it('throws a RangeError when the range is malformed', () => {
    expect(() => satisfiesVersionRange('1.0.0', '^one')).toThrow(RangeError);
  });

  it('throws a RangeError when the version is malformed', () => {
    expect(() => satisfiesVersionRange('1.0', '^1.0.0')).toThrow(RangeError);
  });
});
