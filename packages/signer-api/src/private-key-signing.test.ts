import { generateKeyPairSync, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';

import { createPrivateKeySigning } from './private-key-signing.js';
import { signatureHash } from './signature-algorithm.js';
import type { SignatureAlgorithm } from './signature-algorithm.js';

const DATA = new TextEncoder().encode('to be signed');

describe('createPrivateKeySigning', () => {
  const cases: Array<[string, ReturnType<typeof generateKeyPairSync>, SignatureAlgorithm[]]> = [
    ['P-256', generateKeyPairSync('ec', { namedCurve: 'P-256' }), ['ECDSA-SHA256', 'ECDSA-SHA384', 'ECDSA-SHA512']],
    ['P-384', generateKeyPairSync('ec', { namedCurve: 'P-384' }), ['ECDSA-SHA384']],
    ['secp256k1 (a curve the addon lacks)', generateKeyPairSync('ec', { namedCurve: 'secp256k1' }), ['ECDSA-SHA256']],
    ['RSA-2048', generateKeyPairSync('rsa', { modulusLength: 2048 }), ['RSA-SHA256', 'RSA-PSS-SHA256']],
    ['Ed25519', generateKeyPairSync('ed25519'), ['Ed25519']],
  ];
  it.each(cases)('%s: every signature verifies with node:crypto', async (_name, pair, algorithms) => {
    const signing = createPrivateKeySigning(pair.privateKey);
    for (const algorithm of algorithms) {
      expect(signing.algorithms).toContain(algorithm);
      const signature = await signing.sign(DATA, algorithm);
      const hash = algorithm === 'Ed25519' ? null : signatureHash(algorithm);
      const key = algorithm.startsWith('RSA-PSS') ? { key: pair.publicKey, padding: 6, saltLength: 32 } : pair.publicKey;
      expect(verify(hash, DATA, key, signature), algorithm).toBe(true);
    }
    signing.dispose();
  });

  it('offers nothing for a key that cannot sign certificates (X25519)', () => {
    expect(createPrivateKeySigning(generateKeyPairSync('x25519').privateKey).algorithms).toEqual([]);
  });
});
