import { X509Certificate, createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Certificate, DistinguishedName } from './certificate-model.js';
import {
  certificateHostnames,
  commonName,
  computeSubjectKeyId,
  crlSupport,
  formatDistinguishedName,
  formatExpiry,
  keySize,
  keyTypeString,
  ocspServers,
  ocspSupport,
  signatureString,
  spkiSha1Hex,
  subjectKeyIdHex,
} from './certificate-facts.js';
import { parseCertificate, parseCertificates } from './parse-certificate.js';
import { makeCertificate, prepareKeys, testKey } from './test-support/fixtures.js';
import type { KeyKind } from './test-support/fixtures.js';

beforeAll(() => prepareKeys(['rsa2048', 'p256', 'p384', 'p521', 'ed25519', 'dsa']));

const name = (rdns: Array<Array<[string, string]>>): DistinguishedName => ({
  der: new Uint8Array(0),
  rdns: rdns.map((rdn) => rdn.map(([oid, value]) => ({ oid, value }))),
});

const certFor = (kind: KeyKind, extensions?: string, subject = '/CN=facts.example'): Certificate =>
  parseCertificate(makeCertificate({ key: testKey(kind), subject, extensions, digest: kind === 'ed25519' ? undefined : 'sha256' }).der);

describe('formatDistinguishedName', () => {
  it('prints CFSSL names in DER order when given the GoDaddy-style subject', () => {
    const subject = name([
      [['2.5.4.6', 'US']],
      [['2.5.4.8', 'Arizona']],
      [['2.5.4.7', 'Scottsdale']],
      [['2.5.4.10', 'GoDaddy.com, Inc.']],
      [['2.5.4.11', 'http://certificates.godaddy.com/repository']],
      [['2.5.4.3', 'Go Daddy Secure Certification Authority']],
      [['2.5.4.5', '07969287']],
    ]);
    expect(formatDistinguishedName(subject)).toBe(
      '/Country=US/Province=Arizona/Locality=Scottsdale/Organization=GoDaddy.com, Inc./OrganizationalUnit=http://certificates.godaddy.com/repository/CommonName=Go Daddy Secure Certification Authority/SerialNumber=07969287',
    );
  });

  it('prints an empty name for other attribute types and flattens multi-valued RDNs', () => {
    const subject = name([
      [['2.5.4.6', 'GB'], ['2.5.4.6', 'US']],
      [['1.2.840.113549.1.9.1', 'x@y.z']],
      [['1.3.6.1.4.1.311.60.2.1.3', 'US']],
      [['2.5.4.9', 'Main St'], ['2.5.4.17', '12345']],
      [['2.5', 'short']],
    ]);
    expect(formatDistinguishedName(subject)).toBe('/Country=GB/Country=US/=x@y.z/=US/StreetAddress=Main St/PostalCode=12345/=short');
  });

  it('matches the real subject of a multi-valued certificate', () => {
    const cert = parseCertificate(
      makeCertificate({ key: testKey('p256'), subject: '/C=US/O=Org/OU=Unit+CN=multi/emailAddress=e@x.y', multivalueRdn: true }).der,
    );
    expect(formatDistinguishedName(cert.subject)).toMatch(/^\/Country=US\/Organization=Org\/(OrganizationalUnit=Unit\/CommonName=multi|CommonName=multi\/OrganizationalUnit=Unit)\/=e@x\.y$/);
  });
});

describe('commonName', () => {
  it('returns the last CN in DER order, or empty when none', () => {
    expect(commonName(name([[['2.5.4.3', 'first']], [['2.5.4.3', 'second']]]))).toBe('second');
    expect(commonName(name([[['2.5.4.6', 'US']]]))).toBe('');
  });
});

describe('keyTypeString / keySize', () => {
  it('reports CFSSL key_type and key_size for RSA, ECDSA and Ed25519 (32!)', () => {
    const cases: Array<[KeyKind, string, number]> = [
      ['rsa2048', '2048-bit RSA', 2048],
      ['p256', '256-bit ECDSA', 256],
      ['p384', '384-bit ECDSA', 384],
      ['p521', '521-bit ECDSA', 521],
      ['ed25519', 'Ed25519', 32],
      ['dsa', 'DSA', 0],
    ];
    for (const [kind, type, size] of cases) {
      const cert = certFor(kind);
      expect(keyTypeString(cert), kind).toBe(type);
      expect(keySize(cert), kind).toBe(size);
    }
  });

  it('reports Unknown and 0 for other key algorithms', () => {
    const cert = certFor('p256');
    const unknown = { ...cert, publicKey: { ...cert.publicKey, algorithm: 'Unknown' as const, bits: 0 } };
    expect(keyTypeString(unknown)).toBe('Unknown');
    expect(keySize(unknown)).toBe(0);
  });
});

describe('signatureString', () => {
  it('returns the CFSSL signature name', () => {
    expect(signatureString(certFor('p256'))).toBe('ECDSAWithSHA256');
    expect(signatureString(certFor('ed25519'))).toBe('Ed25519');
  });
});

describe('formatExpiry', () => {
  it('prints RFC 3339 UTC with fractional seconds only when non-zero', () => {
    expect(formatExpiry(new Date('2027-03-12T23:59:59Z'))).toBe('2027-03-12T23:59:59Z');
    expect(formatExpiry(new Date('2027-03-12T23:59:59.500Z'))).toBe('2027-03-12T23:59:59.5Z');
    expect(formatExpiry(new Date('2027-03-12T23:59:59.012Z'))).toBe('2027-03-12T23:59:59.012Z');
    expect(formatExpiry(new Date(Date.UTC(2049, 11, 31, 23, 59, 59)))).toBe('2049-12-31T23:59:59Z');
  });
});

describe('certificateHostnames', () => {
  it('returns CN then DNS SANs without duplicates, excluding IP/email/URI SANs', () => {
    const cert = certFor('p256', 'subjectAltName = DNS:a.example,DNS:facts.example,DNS:b.example,IP:10.0.0.1,email:x@y.z,URI:https://u');
    expect(certificateHostnames(cert)).toEqual(['facts.example', 'a.example', 'b.example']);
  });

  it('returns an empty array when there is neither CN nor DNS SAN', () => {
    expect(certificateHostnames(certFor('p256', 'basicConstraints = CA:FALSE', '/O=No CN'))).toEqual([]);
  });
});

describe('subjectKeyIdHex / computeSubjectKeyId', () => {
  it('matches the SKI openssl computes (RFC 5280 method 1) in upper-case hex', () => {
    const cert = certFor('rsa2048', 'subjectKeyIdentifier = hash');
    expect(subjectKeyIdHex(cert)).toMatch(/^[0-9A-F]{40}$/);
    expect(Buffer.from(computeSubjectKeyId(cert.publicKey)).toString('hex').toUpperCase()).toBe(subjectKeyIdHex(cert));
  });

  it('returns empty when the certificate has no SKI', () => {
    expect(subjectKeyIdHex(certFor('p256', 'subjectKeyIdentifier = none'))).toBe('');
  });
});

describe('spkiSha1Hex', () => {
  it('hashes the whole SPKI DER in lower-case hex', () => {
    const cert = certFor('p384');
    const node = new X509Certificate(cert.der).publicKey.export({ type: 'spki', format: 'der' });
    expect(spkiSha1Hex(cert)).toBe(createHash('sha1').update(node).digest('hex'));
    expect(spkiSha1Hex(cert.publicKey)).toBe(spkiSha1Hex(cert));
  });
});

describe('ocspSupport / crlSupport / ocspServers', () => {
  it('reflects AIA OCSP and CRL DP presence', () => {
    const withBoth = certFor('p256', 'authorityInfoAccess = OCSP;URI:http://ocsp.x\ncrlDistributionPoints = URI:http://crl.x/a.crl');
    expect(ocspSupport(withBoth)).toBe(true);
    expect(crlSupport(withBoth)).toBe(true);
    expect(ocspServers(withBoth)).toEqual(['http://ocsp.x']);
    const without = certFor('p256', 'authorityInfoAccess = caIssuers;URI:http://ca.x/ca.crt');
    expect(ocspSupport(without)).toBe(false);
    expect(crlSupport(without)).toBe(false);
    expect(ocspServers(without)).toBeNull();
  });

  it('reads real intermediates of int-bundle.crt with OCSP/CRL URLs', () => {
    const certs = parseCertificates(readFileSync('/work/shared/trust/int-bundle.crt'));
    expect(certs.some(ocspSupport)).toBe(true);
    expect(certs.some(crlSupport)).toBe(true);
    for (const cert of certs) expect(formatDistinguishedName(cert.subject).startsWith('/')).toBe(cert.subject.rdns.length > 0);
  });
});
