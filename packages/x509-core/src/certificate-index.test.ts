import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { readCertificateIndex } from './certificate-index.js';
import { certificateIndexFields, LazyCertificate } from './lazy-certificate.js';
import { parseCertificate } from './parse-certificate.js';
import { decodePemBlocks } from './pem.js';
import { certificateIndexHex, makeCertificate, MALFORMED_CERTIFICATE_CASES, prepareKeys, testKey, TRUST_DIR } from './test-support/fixtures.js';



beforeAll(() => prepareKeys(['p256']));

describe('readCertificateIndex', () => {
  it('reads the same index fields and SPKI as the full parse for every cfssl_trust certificate', () => {
    let count = 0;
    for (const file of ['ca-bundle.crt', 'int-bundle.crt']) {
      for (const block of decodePemBlocks(readFileSync(`${TRUST_DIR}/${file}`, 'utf8'))) {
        const full = parseCertificate(block.bytes);
        const index = readCertificateIndex(block.bytes);
        const expected = certificateIndexFields(full);
        expect(certificateIndexHex(index)).toEqual(certificateIndexHex({ ...expected, spki: full.publicKey.spki }));
        count += 1;
      }
    }
    expect(count).toBeGreaterThan(1_500);
  });

  it('returns views into the given bytes, no copies', () => {
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=index.example', extensions: 'subjectKeyIdentifier = hash', digest: 'sha256' });
    const index = readCertificateIndex(certificate.der);
    expect(index.subjectDer.buffer).toBe(certificate.der.buffer);
    expect(index.spki.buffer).toBe(certificate.der.buffer);
  });

  it.each(MALFORMED_CERTIFICATE_CASES)('fails with 1003 for %s', (_what, mangle) => {
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=bad.example', digest: 'sha256' });
    expect(() => readCertificateIndex(new Uint8Array(mangle(certificate.der)))).toThrow(expect.objectContaining({ code: 1003 }));
  });

  it('fails with 1003 when the outer signature algorithm differs from the inner one, as the full parse does', () => {
    const der = Buffer.from(makeCertificate({ key: testKey('p256'), subject: '/CN=alg.example', digest: 'sha256' }).der);
    // ecdsa-with-SHA256 (…04 03 02) in the outer AlgorithmIdentifier, the last one in the DER: → SHA384.
    der[der.lastIndexOf(Buffer.from('2a8648ce3d040302', 'hex')) + 7] = 0x03;
    expect(() => parseCertificate(der)).toThrow(expect.objectContaining({ code: 1003 }));
    expect(() => readCertificateIndex(der)).toThrow(expect.objectContaining({ code: 1003 }));
  });

  it('accepts contents it does not decode, which the full parse of a lazy certificate then refuses on first use', () => {
    // A SAN extension whose value is not a GeneralNames SEQUENCE: structure fine, contents not.
    const certificate = makeCertificate({ key: testKey('p256'), subject: '/CN=san.example', extensions: 'subjectAltName = DER:0101ff', digest: 'sha256' });
    expect(() => parseCertificate(certificate.der)).toThrow(expect.objectContaining({ code: 1003 }));
    const index = readCertificateIndex(certificate.der);
    const lazy = LazyCertificate.fromIndex(certificate.der, index);
    expect(lazy.subjectKeyId).toBe(index.subjectKeyId);
    expect(() => lazy.subjectAltNames).toThrow(expect.objectContaining({ code: 1003 }));
  });
});
