import { describe, expect, it } from 'vitest';

import { GoRegexpSyntaxError, compileGoRegexp, matchGoRegexp } from './go-regexp.js';

describe('compileGoRegexp', () => {
  it.each([
    ['a(?=b)', 'invalid or unsupported Perl syntax: `(?=`'],
    ['a(?<!b)', 'invalid named capture: `(?<!b)`'],
    ['(a)\\1', 'invalid escape sequence: `\\1`'],
    ['a*+', 'invalid nested repetition operator: `*+`'],
    ['a{1001}', 'invalid repeat count: `{1001}`'],
    ['(', 'missing closing ): `(`'],
  ])('refuses %s as Go does', (pattern, reason) => {
    expect(() => compileGoRegexp(pattern)).toThrow(GoRegexpSyntaxError);
    expect(() => compileGoRegexp(pattern)).toThrow(`error parsing regexp: ${reason}`);
  });

  it('is plain data that survives a structured clone (policies travel to worker threads)', () => {
    const cloned = structuredClone(compileGoRegexp('^www\\.'));
    expect(matchGoRegexp(cloned, 'www.example.com')).toBe(true);
  });
});

describe('matchGoRegexp', () => {
  it.each([
    ['\\.example\\.com$', 'www.example.com', true],
    ['\\.example\\.com$', 'www.example.com.evil', false],
    ['example', 'www.example.com', true],
    ['(?i)^WWW\\.', 'www.example.com', true],
    ['(?P<host>[a-z]+)\\.example', 'www.example', true],
    ['\\Awww\\z', 'www', true],
    ['\\Awww\\z', 'www\n', false],
    ['^[[:alpha:]]+$', 'abc', true],
    ['^[[:alpha:]]+$', 'ab1', false],
    ['^\\pL+$', 'héllo', true],
    ['\\Q*.example\\E$', 'a*.example', true],
  ])('%s on %j is %s (unanchored search, as Go)', (pattern, text, expected) => {
    expect(matchGoRegexp(compileGoRegexp(pattern), text)).toBe(expected);
  });

  it('runs in linear time on a pattern that backtracks exponentially in JavaScript', () => {
    // (a+)+$ on "aaaa…b" takes 2^n steps with a backtracking engine; RE2 answers at once. The
    // bound is on work, not time: a single call must finish, a backtracking engine would not.
    expect(matchGoRegexp(compileGoRegexp('^(a+)+$'), `${'a'.repeat(10_000)}b`)).toBe(false);
  });
});
