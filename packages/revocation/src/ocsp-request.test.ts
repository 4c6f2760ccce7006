import { readFileSync } from 'node:fs';

import { afterAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';
import { derInteger, derNull, derOctetString, derOid, derSequence, parseCertificate } from '@certsmith/x509-core';

import { issuerHashes } from './cert-id.js';
import { parseOcspRequest } from './ocsp-request.js';
import { hierarchy, opensslText, scratch } from './test-support/pki.js';

const files = scratch();
afterAll(() => files.cleanup());
const h = hierarchy(new TestPki(), 'ocsp-request', 'ecdsa-p256');
const caFile = files.file('ca.pem', h.ca.pem);
const leafFile = files.file('leaf.pem', h.leaf.pem);

function opensslRequest(args: string[]): Uint8Array {
  const out = `${files.dir}/req-${Math.random().toString(36).slice(2)}.der`;
  opensslText(['ocsp', '-issuer', caFile, ...args, '-reqout', out]);
  return Uint8Array.from(readFileSync(out));
}

describe('parseOcspRequest', () => {
  it('reads openssl SHA-1 CertIDs and the nonce', () => {
    const request = parseOcspRequest(opensslRequest(['-cert', leafFile]));
    const ca = parseCertificate(h.ca.der);
    const hashes = issuerHashes(ca, 'SHA1');
    expect(request.certIds).toHaveLength(1);
    expect(request.certIds[0]).toMatchObject({ hashAlgorithm: 'SHA1', issuerNameHash: hashes.nameHash, issuerKeyHash: hashes.keyHash });
    expect(Buffer.from(request.certIds[0]!.serialNumber).toString('hex')).toBe(parseCertificate(h.leaf.der).serialNumberHex);
    expect(request.nonce?.[0]).toBe(0x04);
    expect(request).toMatchObject({ signed: false, hasRequestorName: false });
  });

  it('reads SHA-256 CertIDs, several entries and no nonce', () => {
    const request = parseOcspRequest(opensslRequest(['-sha256', '-cert', leafFile, '-serial', '0x2a', '-no_nonce']));
    expect(request.certIds.map((id) => id.hashAlgorithm)).toEqual(['SHA256', 'SHA256']);
    expect(Buffer.from(request.certIds[1]!.serialNumber).toString('hex')).toBe('2a');
    expect(request.nonce).toBeNull();
  });

  it('reads a signed request with a requestor name (CFSSL: malformedRequest)', () => {
    const signerFile = files.file('signer.pem', h.responder.pem);
    const keyFile = files.file('signer-key.pem', h.responder.key.pkcs8Pem);
    const request = parseOcspRequest(opensslRequest(['-cert', leafFile, '-signer', signerFile, '-signkey', keyFile]));
    expect(request).toMatchObject({ signed: true, hasRequestorName: true });
    expect(request.certIds).toHaveLength(1);
  });

  it.each([
    ['empty input', new Uint8Array(0), 'malformed OCSP request'],
    ['garbage', Uint8Array.of(1, 2, 3, 4, 5), 'malformed OCSP request'],
    ['no entries', derSequence(derSequence(derSequence())), 'OCSP request has no entries'],
    [
      'an MD5 CertID',
      derSequence(derSequence(derSequence(derSequence(derSequence(derSequence(derOid('1.2.840.113549.2.5'), derNull()), derOctetString(new Uint8Array(16)), derOctetString(new Uint8Array(16)), derInteger(1n)))))),
      'unsupported CertID hash algorithm 1.2.840.113549.2.5',
    ],
  ])('rejects %s with 400', (_name, der, message) => {
    expect(() => parseOcspRequest(der)).toThrow(expect.objectContaining({ code: 400, message: expect.stringContaining(message) }));
  });

  it('rejects trailing bytes', () => {
    const der = opensslRequest(['-cert', leafFile]);
    expect(() => parseOcspRequest(Uint8Array.from([...der, 0]))).toThrow(expect.objectContaining({ code: 400 }));
  });
});
