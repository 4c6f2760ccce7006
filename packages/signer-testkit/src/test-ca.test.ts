import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { createTestCa } from './test-ca.js';

const dir = mkdtempSync(join(tmpdir(), 'signer-testkit-ca-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `openssl verify` of a self-signed certificate against itself. */
function opensslVerifiesSelfSigned(name: string, pem: string): string {
  const file = join(dir, `${name}.pem`);
  writeFileSync(file, pem);
  return execFileSync('openssl', ['verify', '-CAfile', file, file], { encoding: 'utf8' }).trim();
}

describe('createTestCa', () => {
  it.each([
    ['ecdsa-p256', 'ecdsa-with-SHA256'],
    ['ecdsa-p384', 'ecdsa-with-SHA384'],
    ['rsa-2048', 'sha256WithRSAEncryption'],
    ['ed25519', 'ED25519'],
  ] as const)('makes a self-signed CA that openssl verifies when the key is %s', async (key, signatureName) => {
    const ca = await createTestCa({ key, commonName: `ca ${key}` });
    expect(opensslVerifiesSelfSigned(key, ca.certificatePem)).toMatch(/: OK$/);
    const text = execFileSync('openssl', ['x509', '-noout', '-text'], { input: ca.certificatePem, encoding: 'utf8' });
    expect(text).toContain(`Signature Algorithm: ${signatureName}`);
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE/);
    expect(text).toMatch(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(new X509Certificate(ca.certificatePem).subject).toBe(`O=certsmith testkit\nCN=ca ${key}`);
  });

  it('exports the same key as PKCS#8 PEM and JWK when generated', async () => {
    const ca = await createTestCa();
    const fromJwk = createPrivateKey({ key: ca.privateKeyJwk, format: 'jwk' });
    expect(fromJwk.equals(createPrivateKey(ca.privateKeyPem))).toBe(true);
    expect(new X509Certificate(ca.certificatePem).checkPrivateKey(fromJwk)).toBe(true);
  });

  it('certifies the given key when options.key is a KeyObject', async () => {
    const first = await createTestCa({ key: 'ecdsa-p384' });
    const second = await createTestCa({ key: first.privateKey, commonName: 'again' });
    expect(new X509Certificate(second.certificatePem).checkPrivateKey(first.privateKey)).toBe(true);
  });

  it('returns a signer that rejects with code 2500 when closed', async () => {
    const signer = (await createTestCa()).createSigner();
    expect(signer.algorithms).toEqual(['ECDSA-SHA256', 'ECDSA-SHA384', 'ECDSA-SHA512']);
    await signer.close();
    await expect(signer.sign!(new Uint8Array([1]), 'ECDSA-SHA256')).rejects.toMatchObject({ code: 2500 });
  });
});
