import { describe, expect, it } from 'vitest';

import { parseSigningPolicy } from './signing-policy-loader.js';
import { resolveUsages, selectProfile } from './signing-policy.js';

describe('selectProfile', () => {
  const policy = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['signing'] }, profiles: { web: { usages: ['server auth'], expiry: '2h' } } } });

  it('returns the default profile when the name is empty or default', () => {
    expect(selectProfile(policy, '')).toBe(policy.default);
    expect(selectProfile(policy, undefined)).toBe(policy.default);
    expect(selectProfile(policy, 'default')).toBe(policy.default);
  });

  it('throws 5400 when the profile is unknown', () => {
    expect(() => selectProfile(policy, 'nosuchprofile')).toThrow(expect.objectContaining({ code: 5400, message: 'Unknown policy profile' }) as Error);
  });
});

describe('resolveUsages', () => {
  it('splits usages into key usage bits, EKU OIDs and unknown names', () => {
    expect(resolveUsages(['signing', 'cert sign', 'server auth', 'bogus'])).toEqual({ keyUsage: 0b100001, extKeyUsages: ['1.3.6.1.5.5.7.3.1'], unknown: ['bogus'] });
  });
});
