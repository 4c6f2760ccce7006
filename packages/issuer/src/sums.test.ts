import { execFileSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { computeSums } from './sums.js';

describe('computeSums', () => {
  it('returns upper-case md5, sha-1 and sha-256 in CFSSL key order when given DER bytes', () => {
    const der = Uint8Array.from({ length: 300 }, (_, i) => i & 0xff);
    const sums = computeSums(der);
    expect(Object.keys(sums)).toEqual(['md5', 'sha-1', 'sha-256']);
    for (const [name, algorithm] of [['md5', 'md5'], ['sha-1', 'sha1'], ['sha-256', 'sha256']] as const) {
      const expected = execFileSync('openssl', ['dgst', `-${algorithm}`, '-r'], { input: der }).toString().split(' ')[0]!.toUpperCase();
      expect(sums[name]).toBe(expected);
    }
  });
});
