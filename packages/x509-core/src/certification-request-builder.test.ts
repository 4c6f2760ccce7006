import { generateKeyPairSync, sign } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { signatureAlgorithmIdentifier } from './algorithm-identifier-builder.js';
import { encodeSigned } from './certificate-builder.js';
import { certificationRequestExtensions, encodeCertificationRequestInfo } from './certification-request-builder.js';
import type { CertificationRequestTemplate } from './certification-request-builder.js';
import { derBoolean, derSequence } from './der-writer.js';
import { encodeSubject, subjectFromNames } from './name-builder.js';
import { parseCertificateRequestDer, verifyCertificateRequestSignature } from './parse-csr.js';
import { encodeSubjectAltNames, sansFromHosts } from './subject-alt-name-builder.js';

const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = new Uint8Array(key.publicKey.export({ type: 'spki', format: 'der' }));
const subject = encodeSubject(subjectFromNames('csr.example', [{ O: 'certsmith' }], ''));
const basicConstraints = { oid: '2.5.29.19', critical: true, value: derSequence(derBoolean(true)) };

function signedCsr(template: CertificationRequestTemplate) {
  const info = encodeCertificationRequestInfo(template);
  return parseCertificateRequestDer(encodeSigned(info, signatureAlgorithmIdentifier('ECDSA-SHA256'), new Uint8Array(sign('sha256', info, key.privateKey))));
}

describe('encodeCertificationRequestInfo', () => {
  it('builds a request whose self-signature verifies and whose SANs read back when given hosts', () => {
    const csr = signedCsr({ subject, spki, subjectAltNames: encodeSubjectAltNames(sansFromHosts(['csr.example', '192.0.2.1', 'ops@example.com'])) });
    expect(verifyCertificateRequestSignature(csr)).toBe(true);
    expect(csr.version).toBe(0);
    expect(Buffer.from(csr.subject.der)).toEqual(Buffer.from(subject));
    expect(csr.subjectAltNames).toMatchObject({ dns: ['csr.example'], email: ['ops@example.com'], ip: ['192.0.2.1'] });
  });

  it('writes an empty [0] attributes field when there are no extensions, as Go does', () => {
    const info = encodeCertificationRequestInfo({ subject, spki });
    expect(Buffer.from(info.subarray(info.length - 2)).toString('hex')).toBe('a000');
  });

  it('puts the SAN first, non-critical, then the extra extensions', () => {
    const csr = signedCsr({ subject, spki, subjectAltNames: encodeSubjectAltNames(sansFromHosts(['a.example'])), extensions: [basicConstraints] });
    expect(csr.extensions.map(({ oid, critical }) => ({ oid, critical }))).toEqual([
      { oid: '2.5.29.17', critical: false },
      { oid: '2.5.29.19', critical: true },
    ]);
    expect(csr.basicConstraints?.ca).toBe(true);
  });
});

describe('certificationRequestExtensions', () => {
  it('leaves the SAN out when an extra extension has the SAN OID', () => {
    const own = { oid: '2.5.29.17', critical: true, value: encodeSubjectAltNames(sansFromHosts(['own.example'])) };
    expect(certificationRequestExtensions({ subject, spki, subjectAltNames: encodeSubjectAltNames(sansFromHosts(['x.example'])), extensions: [own] })).toEqual([own]);
  });
});
