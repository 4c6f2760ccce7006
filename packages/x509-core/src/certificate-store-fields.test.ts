import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Certificate } from './certificate-model.js';
import { commonName } from './certificate-facts.js';
import { readCertificateStoreFields } from './certificate-store-fields.js';
import type { CertificateStoreFields } from './certificate-store-fields.js';
import { parseCertificate, toHex } from './parse-certificate.js';
import { decodePemBlocks } from './pem.js';
import { makeCertificate, MALFORMED_CERTIFICATE_CASES, prepareKeys, testKey, TRUST_DIR } from './test-support/fixtures.js';


beforeAll(() => prepareKeys(['p256']));

/** The fields as comparable plain data. */
function plain(fields: CertificateStoreFields) {
  return {
    serial: toHex(fields.serialNumber),
    notBefore: fields.notBefore.getTime(),
    notAfter: fields.notAfter.getTime(),
    commonName: fields.commonName,
    authorityKeyId: fields.authorityKeyId === null ? null : toHex(fields.authorityKeyId),
    subjectAltNames: fields.subjectAltNames,
  };
}

/** The same fields from the full parse. */
function parsed(certificate: Certificate) {
  return {
    serial: certificate.serialNumberHex,
    notBefore: certificate.notBefore.getTime(),
    notAfter: certificate.notAfter.getTime(),
    commonName: commonName(certificate.subject),
    authorityKeyId: certificate.authorityKeyId === null ? null : toHex(certificate.authorityKeyId),
    subjectAltNames: certificate.subjectAltNames,
  };
}

describe('readCertificateStoreFields', () => {
  it('reads the same fields as the full parse for every cfssl_trust certificate', () => {
    let count = 0;
    for (const file of ['ca-bundle.crt', 'int-bundle.crt']) {
      for (const block of decodePemBlocks(readFileSync(`${TRUST_DIR}/${file}`, 'utf8'))) {
        expect(plain(readCertificateStoreFields(block.bytes))).toEqual(parsed(parseCertificate(block.bytes)));
        count += 1;
      }
    }
    expect(count).toBeGreaterThan(1_500);
  });

  it.each([
    ['no subject CN, only other attributes', '/O=No CN/OU=unit', 'basicConstraints = CA:FALSE'],
    ['several CNs (the last one counts, as commonName reads it)', '/CN=first.example/CN=last.example', 'basicConstraints = CA:FALSE'],
    ['a multi-valued RDN holding the CN', '/O=Org+CN=multi.example', 'basicConstraints = CA:FALSE'],
    ['a UTF-8 CN', '/CN=ünïcode.example', 'basicConstraints = CA:FALSE'],
    ['DNS, IP, email and URI SANs', '/CN=sans.example', 'subjectAltName = DNS:a.example, IP:10.0.0.1, IP:2001:db8::1, email:ops@example.com, URI:https://example.com/x, DNS:b.example'],
    ['SANs but no DNS name', '/CN=ip.example', 'subjectAltName = IP:192.0.2.7, email:x@example.com'],
    ['an AKI with a keyIdentifier', '/CN=aki.example', 'subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always'],
    ['no extensions that it reads', '/CN=plain.example', 'keyUsage = digitalSignature'],
  ])('reads what the full parse reads for %s', (_what, subject, extensions) => {
    const certificate = makeCertificate({ key: testKey('p256'), subject, extensions, digest: 'sha256' });
    expect(plain(readCertificateStoreFields(certificate.der))).toEqual(parsed(parseCertificate(certificate.der)));
  });

  it.each([
    ['a 20-byte serial with the top bit set (a leading zero octet)', 'ff'.repeat(20)],
    ['a one-byte serial', '01'],
    ['a long serial', '7f'.repeat(32)],
  ])('reads the serial octets the full parse reads for %s', (_what, serialHex) => {
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=serial.example', serialHex, digest: 'sha256' });
    expect(plain(readCertificateStoreFields(certificate.der))).toEqual(parsed(parseCertificate(certificate.der)));
  });

  it('returns the serial and AKI as views into the given bytes', () => {
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=views.example', extensions: 'subjectKeyIdentifier = hash\nauthorityKeyIdentifier = keyid:always', digest: 'sha256' });
    const fields = readCertificateStoreFields(certificate.der);
    expect(fields.serialNumber.buffer).toBe(certificate.der.buffer);
    expect(fields.authorityKeyId?.buffer).toBe(certificate.der.buffer);
  });

  it.each(MALFORMED_CERTIFICATE_CASES)('fails with 1003 for %s', (_what, mangle) => {
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=bad.example', digest: 'sha256' });
    expect(() => readCertificateStoreFields(new Uint8Array(mangle(certificate.der)))).toThrow(expect.objectContaining({ code: 1003 }));
  });

  it('fails with 1003 for a SAN extension that is not GeneralNames, as the full parse does', () => {
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=san.example', extensions: 'subjectAltName = DER:0101ff', digest: 'sha256' });
    expect(() => parseCertificate(certificate.der)).toThrow(expect.objectContaining({ code: 1003 }));
    expect(() => readCertificateStoreFields(certificate.der)).toThrow(expect.objectContaining({ code: 1003 }));
  });
});
