import { X509Certificate, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { derBitString, derDirectoryString, derOid, derSequence, derSetOf } from './der-writer.js';
import { parseCertificate } from './parse-certificate.js';
import { buildSelfSignedCaTbs } from './self-signed-ca.js';

describe('buildSelfSignedCaTbs', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const spki = new Uint8Array(publicKey.export({ type: 'spki', format: 'der' }));
  const name = derSequence(derSetOf([derSequence(derOid('2.5.4.3'), derDirectoryString('Test Root'))]));
  const ecdsaWithSha256 = derSequence(derOid('1.2.840.10045.4.3.2'));

  function selfSign(pathLength?: number): Uint8Array {
    const tbs = buildSelfSignedCaTbs({
      name,
      spki,
      signatureAlgorithm: ecdsaWithSha256,
      serial: Uint8Array.of(0x01, 0x02),
      notBefore: new Date('2026-01-01T00:00:00Z'),
      notAfter: new Date('2031-01-01T00:00:00Z'),
      pathLength,
    });
    return derSequence(tbs, ecdsaWithSha256, derBitString(sign('sha256', tbs, privateKey)));
  }

  it('builds a CA certificate that verifies with its own key and carries the initca extensions', () => {
    const der = selfSign();
    const node = new X509Certificate(der);
    expect(node.verify(publicKey)).toBe(true);
    expect(node.ca).toBe(true);
    expect(node.subject).toBe('CN=Test Root');
    expect(node.issuer).toBe('CN=Test Root');
    const cert = parseCertificate(der);
    expect(cert.keyUsage).toBe((1 << 5) | (1 << 6));
    expect(cert.basicConstraints).toEqual({ ca: true, pathLenConstraint: null });
    expect(cert.subjectKeyId).not.toBeNull();
    expect(cert.authorityKeyId).toBeNull();
    expect(cert.extensions.filter((e) => e.critical).map((e) => e.oid)).toEqual(['2.5.29.15', '2.5.29.19']);
  });

  it('writes the path length constraint when one is given', () => {
    expect(parseCertificate(selfSign(0)).basicConstraints).toEqual({ ca: true, pathLenConstraint: 0 });
  });
});
