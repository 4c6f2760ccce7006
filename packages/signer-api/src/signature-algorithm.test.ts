import { describe, expect, it } from 'vitest';

import { SIGNATURE_ALGORITHMS, isSignatureAlgorithm, signatureHash } from './signature-algorithm.js';

describe('isSignatureAlgorithm', () => {
  it('accepts every listed algorithm when given its exact name', () => {
    for (const name of SIGNATURE_ALGORITHMS) expect(isSignatureAlgorithm(name)).toBe(true);
  });

  it('rejects a name when its spelling differs', () => {
    expect(isSignatureAlgorithm('ecdsa-sha256')).toBe(false);
    expect(isSignatureAlgorithm(42)).toBe(false);
  });
});

describe('signatureHash', () => {
  it('returns the node:crypto hash name when the algorithm has a hash', () => {
    expect(signatureHash('ECDSA-SHA256')).toBe('sha256');
    expect(signatureHash('RSA-PSS-SHA384')).toBe('sha384');
    expect(signatureHash('RSA-SHA512')).toBe('sha512');
  });

  it('returns null when the algorithm is pure Ed25519', () => {
    expect(signatureHash('Ed25519')).toBeNull();
  });
});
