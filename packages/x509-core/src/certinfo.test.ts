import { X509Certificate } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatKeyId, serialToDecimal, toCertinfoName, toCertinfoResult } from './certinfo.js';
import { parseCertificate } from './parse-certificate.js';
import { makeCertificate, prepareKeys, testKey } from './test-support/fixtures.js';

beforeAll(() => prepareKeys(['p256']));

describe('toCertinfoResult', () => {
  it('describes a certificate in CFSSL certinfo\'s format and key order, listing DNS then IP SANs only', () => {
    const root = makeCertificate({
      key: testKey('p256'),
      subject: '/C=US/O=Test Org/OU=PKI/CN=Throwaway Test Root CA',
      extensions: 'basicConstraints = critical, CA:TRUE\nsubjectKeyIdentifier = hash',
      digest: 'sha256',
    });
    const leaf = makeCertificate({
      key: testKey('p256'),
      subject: '/C=US/ST=California/L=San Francisco/O=Example Inc/OU=Web/CN=www.example.com',
      issuer: { certPath: root.path, key: testKey('p256') },
      extensions: [
        'basicConstraints = CA:FALSE',
        'subjectKeyIdentifier = hash',
        'authorityKeyIdentifier = keyid',
        'subjectAltName = DNS:www.example.com, IP:192.168.1.10, email:admin@example.com, URI:spiffe://example.org/svc, DNS:example.com',
      ].join('\n'),
      digest: 'sha256',
      serialHex: '03fcd0',
    });
    const node = new X509Certificate(leaf.pem);
    const rootCert = parseCertificate(root.der);
    const result = toCertinfoResult(parseCertificate(leaf.der));
    expect(result).toEqual({
      subject: {
        common_name: 'www.example.com',
        country: 'US',
        organization: 'Example Inc',
        organizational_unit: 'Web',
        locality: 'San Francisco',
        province: 'California',
        names: ['US', 'California', 'San Francisco', 'Example Inc', 'Web', 'www.example.com'],
      },
      issuer: {
        common_name: 'Throwaway Test Root CA',
        country: 'US',
        organization: 'Test Org',
        organizational_unit: 'PKI',
        names: ['US', 'Test Org', 'PKI', 'Throwaway Test Root CA'],
      },
      serial_number: String(0x03fcd0),
      // CFSSL: cert.DNSNames then cert.IPAddresses; e-mail and URI SANs are not listed.
      sans: ['www.example.com', 'example.com', '192.168.1.10'],
      not_before: new Date(node.validFrom).toISOString().replace('.000Z', 'Z'),
      not_after: new Date(node.validTo).toISOString().replace('.000Z', 'Z'),
      sigalg: 'ECDSAWithSHA256',
      authority_key_id: formatKeyId(rootCert.subjectKeyId),
      subject_key_id: formatKeyId(parseCertificate(leaf.der).subjectKeyId),
      pem: leaf.pem,
    });
    expect(Object.keys(result)).toEqual(['subject', 'issuer', 'serial_number', 'sans', 'not_before', 'not_after', 'sigalg', 'authority_key_id', 'subject_key_id', 'pem']);
    expect(result.subject_key_id).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
  });

  it('omits sans and gives an empty authority_key_id for a self-signed root without AKI', () => {
    const root = makeCertificate({ key: testKey('p256'), subject: '/CN=Bare Root', extensions: 'basicConstraints = critical, CA:TRUE', digest: 'sha256' });
    const result = toCertinfoResult(parseCertificate(root.der));
    expect(result).not.toHaveProperty('sans');
    expect(result.authority_key_id).toBe('');
  });
});

describe('toCertinfoName', () => {
  it('joins repeated attributes with commas and keeps the last common name', () => {
    const name = toCertinfoName({
      der: new Uint8Array(),
      rdns: [
        [{ oid: '2.5.4.6', value: 'GB' }, { oid: '2.5.4.6', value: 'US' }],
        [{ oid: '2.5.4.3', value: 'first' }],
        [{ oid: '2.5.4.3', value: 'second' }],
        [{ oid: '1.2.840.113549.1.9.1', value: 'a@b.c' }],
      ],
    });
    expect(name).toEqual({ common_name: 'second', country: 'GB,US', names: ['GB', 'US', 'first', 'second', 'a@b.c'] });
  });
});

describe('formatKeyId', () => {
  it('prints upper-case zero-padded hex bytes joined by colons, and "" without an identifier', () => {
    expect(formatKeyId(Uint8Array.of(0x01, 0xe5, 0xff))).toBe('01:E5:FF');
    expect(formatKeyId(null)).toBe('');
  });
});

describe('serialToDecimal', () => {
  it('reads DER INTEGER content as two\'s complement', () => {
    expect(serialToDecimal('00ff')).toBe('255');
    expect(serialToDecimal('7f')).toBe('127');
    expect(serialToDecimal('ff01')).toBe('-255');
    expect(serialToDecimal('03fcd09a')).toBe(String(0x03fcd09a));
  });
});
