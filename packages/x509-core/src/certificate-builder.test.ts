import { X509Certificate, generateKeyPairSync, sign } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { signatureAlgorithmIdentifier } from './algorithm-identifier-builder.js';
import { encodeSigned, encodeTbsCertificate } from './certificate-builder.js';
import { parseCertificate } from './parse-certificate.js';
import { derExtension } from './extensions.js';
import { encodeSubject, subjectFromNames } from './name-builder.js';
import { encodeSubjectAltNames, sansFromHosts } from './subject-alt-name-builder.js';

const issuerKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const leafKey = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const algorithm = signatureAlgorithmIdentifier('ECDSA-SHA256');
const notBefore = new Date('2026-01-01T00:00:00Z');
const notAfter = new Date('2027-01-01T00:00:00Z');

function certificate(extensions: Uint8Array[]): Uint8Array {
  const tbs = encodeTbsCertificate({
    serial: 4660n,
    signatureAlgorithm: algorithm,
    issuer: encodeSubject(subjectFromNames('builder CA', [], '')),
    notBefore,
    notAfter,
    subject: encodeSubject(subjectFromNames('leaf.example', [{ O: 'certsmith' }], '')),
    spki: new Uint8Array(leafKey.publicKey.export({ type: 'spki', format: 'der' })),
    extensions,
  });
  return encodeSigned(tbs, algorithm, new Uint8Array(sign('sha256', tbs, issuerKey.privateKey)));
}

describe('encodeTbsCertificate', () => {
  it('gives a v3 certificate that verifies under the issuer key when signed and wrapped', () => {
    const der = certificate([derExtension('2.5.29.17', false, encodeSubjectAltNames(sansFromHosts(['leaf.example'])))]);
    const node = new X509Certificate(der);
    expect(node.verify(issuerKey.publicKey)).toBe(true);
    expect(node.subjectAltName).toBe('DNS:leaf.example');
    const parsed = parseCertificate(der);
    expect(parsed.version).toBe(3);
    expect(parsed.serialNumberHex.toLowerCase()).toBe('1234');
    expect(parsed.notBefore).toEqual(notBefore);
    expect(parsed.notAfter).toEqual(notAfter);
  });

  it('omits the [3] extensions field when there are no extensions', () => {
    const parsed = parseCertificate(certificate([]));
    expect(parsed.extensions).toEqual([]);
    expect(new X509Certificate(parsed.der).verify(issuerKey.publicKey)).toBe(true);
  });
});
