import { describe, expect, it } from 'vitest';

import type { Signer } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';

import { createRevocationSigner } from './revocation-signer.js';
import { chooseRevocationAlgorithm } from './signature-algorithm.js';
import { keySigner } from './test-support/pki.js';

const pki = new TestPki();

describe('chooseRevocationAlgorithm', () => {
  it('follows Go: RSA of any size signs with SHA-256, ECDSA by curve', () => {
    expect(chooseRevocationAlgorithm({ algorithm: 'RSA', bits: 4096 }, ['RSA-SHA512', 'RSA-SHA256'])).toBe('RSA-SHA256');
    expect(chooseRevocationAlgorithm({ algorithm: 'ECDSA', bits: 521 }, ['ECDSA-SHA256', 'ECDSA-SHA512'])).toBe('ECDSA-SHA512');
    expect(chooseRevocationAlgorithm({ algorithm: 'Ed25519', bits: 256 }, ['Ed25519'])).toBe('Ed25519');
  });

  it('falls back to an offered algorithm of the key family, and to null when none fits', () => {
    expect(chooseRevocationAlgorithm({ algorithm: 'RSA', bits: 2048 }, ['RSA-PSS-SHA256'])).toBe('RSA-PSS-SHA256');
    expect(chooseRevocationAlgorithm({ algorithm: 'RSA', bits: 2048 }, ['ECDSA-SHA256'])).toBeNull();
    expect(chooseRevocationAlgorithm({ algorithm: 'DSA', bits: 2048 }, ['RSA-SHA256'])).toBeNull();
  });
});

describe('createRevocationSigner', () => {
  const ca = pki.root('revocation signer CA', { key: 'ecdsa-p384', keyLabel: 'revocation-signer' });

  it('prepares the algorithm, its identifier and the key identifier once', async () => {
    const signer = await createRevocationSigner(keySigner(ca));
    expect(signer.algorithm).toBe('ECDSA-SHA384');
    expect(Buffer.from(signer.algorithmIdentifier).toString('hex')).toBe('300a06082a8648ce3d040303');
    expect(signer.keyIdentifierHex).toBe(ca.subjectKeyIdHex.toLowerCase());
  });

  it('refuses a signer without raw signing (a remote multi-root CA) with code 2000', async () => {
    const remote: Signer = { algorithms: [], getCertificate: async () => ({ der: ca.der, pem: ca.pem }), signRequest: async () => ({ certificatePem: '' }), close: async () => {} };
    await expect(createRevocationSigner(remote, { label: 'remote' })).rejects.toMatchObject({ code: 2000, message: expect.stringContaining('signer "remote" cannot sign CRLs or OCSP responses') });
  });

  it('refuses a signer whose algorithms do not fit its key, and an algorithm it does not offer', async () => {
    const mismatched: Signer = { ...keySigner(ca), algorithms: ['RSA-SHA256'] };
    await expect(createRevocationSigner(mismatched)).rejects.toMatchObject({ code: 2000 });
    await expect(createRevocationSigner(keySigner(ca), { algorithm: 'Ed25519' })).rejects.toMatchObject({ code: 2000, message: expect.stringContaining('does not offer Ed25519') });
  });

  it('passes on the signer own coded error when its certificate cannot be fetched', async () => {
    const down: Signer = { ...keySigner(ca), getCertificate: () => Promise.reject(Object.assign(new Error('HSM gone'), { code: 2500 })) };
    await expect(createRevocationSigner(down)).rejects.toMatchObject({ code: 2500 });
  });
});
