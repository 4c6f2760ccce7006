import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TestPki, chainPem, sequence, nullValue } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'test-pki-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function openssl(args: string[]): string {
  return execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('TestPki', () => {
  const pki = new TestPki({ now: new Date('2026-11-22T00:00:00Z') });

  it('produces chains openssl verifies when every key type is used', () => {
    const root = pki.root('PKI Root', { key: 'rsa-2048' });
    const inter = pki.intermediate('PKI Inter', root, { key: 'ecdsa-p384', pathLen: 0 });
    for (const key of ['rsa-2048', 'ecdsa-p256', 'ecdsa-p521', 'ed25519'] as const) {
      const leaf = pki.leaf(`${key}.example.com`, inter, {
        key,
        ips: ['127.0.0.1', '::1'],
        ocsp: ['http://ocsp.example.com'],
        caIssuers: ['http://127.0.0.1/inter.cer'],
        crl: ['http://crl.example.com/x.crl'],
      });
      writeFileSync(join(dir, 'root.pem'), root.pem);
      writeFileSync(join(dir, 'inter.pem'), inter.pem);
      writeFileSync(join(dir, 'leaf.pem'), leaf.pem);
      const out = openssl([
        'verify', '-attime', String(pki.now.getTime() / 1000), '-CAfile', join(dir, 'root.pem'),
        '-untrusted', join(dir, 'inter.pem'), join(dir, 'leaf.pem'),
      ]);
      expect(out).toContain('OK');
      const text = openssl(['x509', '-in', join(dir, 'leaf.pem'), '-noout', '-text']);
      expect(text).toContain('IP Address:127.0.0.1');
      expect(text).toContain('CA Issuers - URI:http://127.0.0.1/inter.cer');
      expect(text).toContain('URI:http://crl.example.com/x.crl');
    }
  });

  it('signs with SHA-1 and writes v1 certificates when asked', () => {
    const root = pki.root('SHA1 Root', { signatureHash: 'SHA-1' });
    writeFileSync(join(dir, 'sha1.pem'), root.pem);
    expect(openssl(['x509', '-in', join(dir, 'sha1.pem'), '-noout', '-text'])).toContain('sha1WithRSAEncryption');
    const v1 = pki.issue({ subject: 'V1', version: 1, issuer: root });
    writeFileSync(join(dir, 'v1.pem'), v1.pem);
    expect(openssl(['x509', '-in', join(dir, 'v1.pem'), '-noout', '-text'])).toContain('Version: 1 (0x0)');
  });

  it('keeps subject and key when cross-signing', () => {
    const a = pki.root('Root A');
    const b = pki.root('Root B');
    const inter = pki.intermediate('Cross Inter', a);
    const cross = pki.crossSign(inter, b);
    expect(Buffer.from(cross.subjectDer)).toEqual(Buffer.from(inter.subjectDer));
    expect(cross.key).toBe(inter.key);
    expect(cross.serialHex).not.toBe(inter.serialHex);
    writeFileSync(join(dir, 'b.pem'), b.pem);
    writeFileSync(join(dir, 'cross.pem'), cross.pem);
    expect(openssl(['verify', '-attime', String(pki.now.getTime() / 1000), '-CAfile', join(dir, 'b.pem'), join(dir, 'cross.pem')])).toContain('OK');
    expect(chainPem(inter, a)).toContain('END CERTIFICATE-----\n-----BEGIN');
  });

  it('adds raw critical extensions when given', () => {
    const root = pki.root('Ext Root');
    const leaf = pki.leaf('ext.example.com', root, { extraExtensions: [{ oid: '1.2.3.4', critical: true, value: sequence(nullValue()) }] });
    writeFileSync(join(dir, 'ext.pem'), leaf.pem);
    expect(openssl(['x509', '-in', join(dir, 'ext.pem'), '-noout', '-text'])).toContain('1.2.3.4: critical');
  });
});
