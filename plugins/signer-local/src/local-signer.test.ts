import { generateKeyPairSync, verify } from 'node:crypto';

import { signatureHash } from '@certsmith/signer-api';
import type { SignatureAlgorithm } from '@certsmith/signer-api';
import { createTestCa } from '@certsmith/signer-testkit';
import { describe, expect, it } from 'vitest';

import { createLocalSigner, createLocalSignerFromPem, parseCaCertificate } from './local-signer.js';

const TBS = new TextEncoder().encode('tbsCertificate stand-in');

describe('createLocalSigner signatures', () => {
  it.each([
    ['ecdsa-p256', 'ECDSA-SHA256'],
    ['ecdsa-p256', 'ECDSA-SHA512'],
    ['ecdsa-p384', 'ECDSA-SHA384'],
    ['ecdsa-p521', 'ECDSA-SHA512'],
    ['rsa-2048', 'RSA-SHA256'],
    ['rsa-2048', 'RSA-PSS-SHA256'],
    ['ed25519', 'Ed25519'],
  ] as const)('with a %s CA key and %s verify under the CA public key ', async (key, algorithm: SignatureAlgorithm) => {
    const ca = await createTestCa({ key });
    const signer = createLocalSignerFromPem(ca.certificatePem, ca.privateKeyPem);
    const signature = await signer.sign!(TBS, algorithm);
    const hash = algorithm === 'Ed25519' ? null : signatureHash(algorithm);
    const options = algorithm.startsWith('RSA-PSS') ? { key: ca.publicKey, padding: 6, saltLength: 32 } : ca.publicKey;
    expect(verify(hash, TBS, options, signature)).toBe(true);
    await signer.close();
  });

  it('signs with node:crypto for an EC key the addon does not hold (secp256k1)', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
    const ca = await createTestCa({ key: privateKey });
    // Not a curve CFSSL loads from PEM either: handed over as a KeyObject.
    const signer = createLocalSigner(parseCaCertificate(ca.certificatePem), privateKey);
    expect(verify('sha256', TBS, publicKey, await signer.sign!(TBS, 'ECDSA-SHA256'))).toBe(true);
  });

  it('refuses to sign once closed, the native key included', async () => {
    const ca = await createTestCa();
    const signer = createLocalSignerFromPem(ca.certificatePem, ca.privateKeyPem);
    await signer.close();
    await expect(signer.sign!(TBS, 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500, message: expect.stringContaining('signer is closed') });
  });
});
