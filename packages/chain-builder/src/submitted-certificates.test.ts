import { describe, expect, it } from 'vitest';
import { LazyCertificate, certificateToPem, parseCertificate, parseCertificates } from '@certsmith/x509-core';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { CertificatePool, certificateFingerprint, type TrustPools } from './certificate-pool.js';
import { parseSubmittedCertificates } from './submitted-certificates.js';

const pki = new TestPki({ now: new Date('2026-11-22T00:00:00Z') });
const root = pki.root('Submitted Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Submitted Inter', root);
const leaf = pki.leaf('submitted.example.com', inter);

const pools = (intermediates: CertificatePool, roots = new CertificatePool([LazyCertificate.from(parseCertificate(root.der))])): TrustPools => ({
  roots,
  intermediates,
});

/** The intermediate's DER with the last byte (inside its signature) changed: still a certificate, not the pool's. */
function oneByteOff(der: Uint8Array): Uint8Array {
  const copy = new Uint8Array(der);
  copy[copy.length - 1] = copy[copy.length - 1]! ^ 0x01;
  return copy;
}

describe('parseSubmittedCertificates', () => {
  it('takes a certificate a lazy pool holds from the pool: its full parse, not the pool entry', () => {
    const entry = LazyCertificate.from(parseCertificate(inter.der));
    const certs = parseSubmittedCertificates(chainPem(leaf, inter), pools(new CertificatePool([entry])));
    expect(certs[1]).toBe(entry.parsed());
    expect(certs[1]).not.toBeInstanceOf(LazyCertificate);
    expect(certs[1]).toEqual(parseCertificate(inter.der));
  });

  it('takes a root the pools hold, and a plain pool certificate as it is', () => {
    const plain = parseCertificate(inter.der);
    const rootEntry = LazyCertificate.from(parseCertificate(root.der));
    const certs = parseSubmittedCertificates(chainPem(leaf, inter, root), pools(new CertificatePool([plain]), new CertificatePool([rootEntry])));
    expect(certs[1]).toBe(plain);
    expect(certs[2]).toBe(rootEntry.parsed());
  });

  it('parses a certificate the pools do not hold, and keeps its fingerprint', () => {
    const certs = parseSubmittedCertificates(chainPem(leaf, inter), pools(new CertificatePool()));
    expect(certs).toEqual(parseCertificates(chainPem(leaf, inter)));
    expect(certificateFingerprint(certs[0]!)).toBe(certificateFingerprint(parseCertificate(leaf.der)));
  });

  it('parses a certificate that differs from a pool one by one byte instead of taking the pool one', () => {
    const entry = LazyCertificate.from(parseCertificate(inter.der));
    const changed = oneByteOff(inter.der);
    const certs = parseSubmittedCertificates(leaf.pem + certificateToPem(changed), pools(new CertificatePool([entry])));
    expect(certs[1]).not.toBe(entry.parsed());
    expect(Buffer.from(certs[1]!.der).equals(Buffer.from(changed))).toBe(true);
    expect(Buffer.from(certs[1]!.signature).equals(Buffer.from(entry.signature))).toBe(false);
    expect(certs[1]).toEqual(parseCertificate(changed));
  });

  it('keeps parseCertificates\' input rules and errors (DER, base64, 1002, 1003)', () => {
    const held = pools(new CertificatePool([LazyCertificate.from(parseCertificate(inter.der))]));
    const der = new Uint8Array([...leaf.der, ...inter.der]);
    expect(parseSubmittedCertificates(der, held)).toEqual(parseCertificates(der));
    const base64 = Buffer.from(der).toString('base64');
    expect(parseSubmittedCertificates(base64, held)).toEqual(parseCertificates(base64));
    for (const bad of ['', 'no pem here', `${inter.pem}trailing`, certificateToPem(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))]) {
      let expected: unknown;
      try {
        parseCertificates(bad);
      } catch (error) {
        expected = error;
      }
      expect(expected).toBeDefined();
      expect(() => parseSubmittedCertificates(bad, held)).toThrow(expected as Error);
    }
  });
});
