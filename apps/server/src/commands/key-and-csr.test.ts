import { X509Certificate, createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseCertificate, parseCertificateRequest, decodePemBlock } from '@certsmith/x509-core';
import { announceKey, decodeCaSection, generateKeyAndRequest, initCa, splitCaSection } from './key-and-csr.js';

const BASIC_CONSTRAINTS = '2.5.29.19';

function certificateOf(pem: string) {
  return parseCertificate(decodePemBlock(pem)!.block.bytes);
}

describe('initCa (cfssl genkey -initca)', () => {
  it('makes a self-signed CA from the CSR subject with CFSSL initca extensions and the ca section', async () => {
    const material = await initCa({
      CN: 'Test Root CA',
      names: [{ C: 'US', O: 'Test Org' }],
      hosts: ['ca.example.com', '10.1.1.1'],
      ca: { expiry: '87600h', pathlen: 1 },
    });
    expect(Object.keys(material)).toEqual(['cert', 'csr', 'key']);
    const x509 = new X509Certificate(material.cert!);
    expect(x509.subject).toBe('C=US\nO=Test Org\nCN=Test Root CA');
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.ca).toBe(true);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(material.key!))).toBe(true);
    // DNS names are dropped from a CA certificate, IP addresses stay (as Go/CFSSL).
    expect(x509.subjectAltName).toBe('IP Address:10.1.1.1');
    const certificate = certificateOf(material.cert!);
    expect(certificate.basicConstraints).toEqual({ ca: true, pathLenConstraint: 1 });
    expect(certificate.keyUsage).toBe((1 << 5) | (1 << 6));
    expect(certificate.authorityKeyId).toBeNull();
    expect(certificate.subjectKeyId).not.toBeNull();
    const days = (certificate.notAfter.getTime() - certificate.notBefore.getTime()) / 86_400_000;
    expect(days).toBe(3650);
    // With a ca section the CSR asks for CA:TRUE (critical) too.
    const csr = parseCertificateRequest(material.csr);
    expect(csr.extensions.find((extension) => extension.oid === BASIC_CONSTRAINTS)?.critical).toBe(true);
  });

  it('defaults to 5 years without pathlen, and puts no basicConstraints in the CSR without a ca section', async () => {
    const material = await initCa({ CN: 'Plain CA' });
    const certificate = certificateOf(material.cert!);
    expect(certificate.basicConstraints).toEqual({ ca: true, pathLenConstraint: null });
    expect((certificate.notAfter.getTime() - certificate.notBefore.getTime()) / 3_600_000).toBe(43_800);
    expect(parseCertificateRequest(material.csr).extensions.some((extension) => extension.oid === BASIC_CONSTRAINTS)).toBe(false);
  });

  it('honours pathlenzero, and ignores it next to a non-zero pathlen (CFSSL)', async () => {
    const zero = certificateOf((await initCa({ CN: 'Zero', ca: { pathlen: 0, pathlenzero: true } })).cert!);
    expect(zero.basicConstraints).toEqual({ ca: true, pathLenConstraint: 0 });
    const two = certificateOf((await initCa({ CN: 'Two', ca: { pathlen: 2, pathlenzero: true } })).cert!);
    expect(two.basicConstraints).toEqual({ ca: true, pathLenConstraint: 2 });
  });

  it('re-issues the CA certificate for an existing key without returning the key', async () => {
    const first = await initCa({ CN: 'Keep Key', key: { algo: 'ecdsa', size: 384 } });
    const again = await initCa({ CN: 'Keep Key' }, { existingKeyPem: first.key! });
    expect(Object.keys(again)).toEqual(['cert', 'csr']);
    const x509 = new X509Certificate(again.cert!);
    expect(x509.publicKey.export({ format: 'jwk' })).toEqual(createPublicKey(first.key!).export({ format: 'jwk' }));
    expect(certificateOf(again.cert!).signatureAlgorithm.name).toBe('ECDSAWithSHA384');
  });

  it("refuses an empty subject with CFSSL's 5300 and bad ca members with Go's texts", async () => {
    await expect(initCa({ key: { algo: 'ecdsa', size: 256 } })).rejects.toMatchObject({ code: 5300, message: 'missing subject information' });
    await expect(initCa({ names: [{ C: 'US' }, {}] })).rejects.toMatchObject({ code: 5300 });
    await expect(initCa({ CN: 'x', ca: { pathlen: '1' } })).rejects.toMatchObject({
      code: 400,
      message: 'json: cannot unmarshal string into Go struct field CAConfig.ca.pathlen of type int',
    });
    await expect(initCa({ CN: 'x', ca: { expiry: '1x' } })).rejects.toMatchObject({ message: 'time: unknown unit "x" in duration "1x"' });
  });
});

describe('CSR JSON helpers', () => {
  it('splits the ca member case-insensitively and decodes it', () => {
    expect(splitCaSection({ CN: 'a', CA: { expiry: '1h' } })).toEqual({ request: { CN: 'a' }, ca: { expiry: '1h' } });
    expect(decodeCaSection(null)).toBeNull();
    expect(decodeCaSection({ PathLen: 3, expiry: '2h' })).toEqual({ pathlen: 3, pathlenzero: false, expiry: '2h', backdate: '' });
    expect(() => decodeCaSection([])).toThrow(/cannot unmarshal array into Go struct field CertificateRequest.ca/);
  });

  it('generateKeyAndRequest refuses a ca section outside initca', async () => {
    await expect(generateKeyAndRequest({ CN: 'x', ca: {} })).rejects.toMatchObject({ code: 400, message: 'ca section only permitted in initca' });
  });

  it('announces slow RSA keys only', () => {
    const lines: string[] = [];
    const reporter = { progress: (line: string) => void lines.push(line), warn: () => {} };
    announceKey({ algorithm: 'RSA', bits: 2048 }, reporter);
    announceKey({ algorithm: 'ECDSA', curve: 'P-256', bits: 256 }, reporter);
    announceKey({ algorithm: 'RSA', bits: 4096 }, reporter);
    expect(lines).toEqual(['generating a 4096-bit RSA key…']);
  });
});
