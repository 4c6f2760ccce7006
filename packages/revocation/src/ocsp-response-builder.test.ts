import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';
import { parseCertificate } from '@certsmith/x509-core';

import { buildOcspResponse, ocspErrorResponse, ocspValidity } from './ocsp-response-builder.js';
import { parseOcspResponse } from './ocsp-response-parser.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { TestHierarchy } from './test-support/pki.js';
import { hierarchy, keySigner, openssl, scratch } from './test-support/pki.js';

const now = new Date();
const pki = new TestPki({ now });
const files = scratch();
afterAll(() => files.cleanup());

interface Setup {
  h: TestHierarchy;
  caFile: string;
  leafFile: string;
  byCa: OcspSigningIdentity;
  byResponder: OcspSigningIdentity;
}
const setups: Record<'rsa' | 'ecdsa', Setup> = {} as never;

beforeAll(async () => {
  for (const [name, key] of [['rsa', 'rsa-2048'], ['ecdsa', 'ecdsa-p384']] as const) {
    const h = hierarchy(pki, `ocsp-${name}`, key);
    const caSigner = await createRevocationSigner(keySigner(h.ca));
    const responderSigner = await createRevocationSigner(keySigner(h.responder));
    setups[name] = {
      h,
      caFile: files.file(`${name}-ca.pem`, h.ca.pem),
      leafFile: files.file(`${name}-leaf.pem`, h.leaf.pem),
      byCa: createOcspSigningIdentity({ signer: caSigner }),
      byResponder: createOcspSigningIdentity({ issuer: h.ca.der, signer: responderSigner }),
    };
  }
});

function serialOf(pem: string): bigint {
  return BigInt(`0x${parseCertificate(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64')).serialNumberHex}`);
}

function check(setup: Setup, der: Uint8Array, digest: string[] = []): string {
  const respFile = files.file(`resp-${Math.random().toString(36).slice(2)}.der`, der);
  const result = openssl(['ocsp', '-respin', respFile, '-issuer', setup.caFile, ...digest, '-cert', setup.leafFile, '-CAfile', setup.caFile, '-no_nonce', '-resp_text']);
  expect(result.output).toContain('Response verify OK');
  return result.output;
}

describe('buildOcspResponse', () => {
  it.each(['rsa', 'ecdsa'] as const)('signs a good response with the %s CA itself, without certs', async (name) => {
    const setup = setups[name];
    const validity = ocspValidity(now);
    const response = await buildOcspResponse({ identity: setup.byCa, serialNumber: serialOf(setup.h.leaf.pem), status: 'good', ...validity });
    const text = check(setup, response.der);
    expect(text).toMatch(/leaf\.pem: good/);
    expect(text).toContain(`Responder Id: O = certsmith tests, CN = ocsp-${name} CA`);
    expect(text).toContain(name === 'rsa' ? 'Signature Algorithm: sha256WithRSAEncryption' : 'Signature Algorithm: ecdsa-with-SHA384');
    expect(text).not.toContain('Certificate:');
    expect(parseOcspResponse(response.der).basic?.certificates).toEqual([]);
  });

  it.each(['rsa', 'ecdsa'] as const)('signs a revoked response with a delegated responder of the %s CA and embeds its certificate', async (name) => {
    const setup = setups[name];
    const revokedAt = new Date(now.getTime() - 60_000);
    const response = await buildOcspResponse({
      identity: setup.byResponder,
      serialNumber: serialOf(setup.h.leaf.pem),
      status: 'revoked',
      revokedAt,
      reason: 1,
      ...ocspValidity(now, 3_600_000, revokedAt),
    });
    const text = check(setup, response.der);
    expect(text).toMatch(/leaf\.pem: revoked/);
    expect(text).toContain('Reason: keyCompromise');
    expect(text).toContain(`Responder Id: CN = ocsp-${name} OCSP responder`);
    expect(text).toContain('Signature Algorithm: ecdsa-with-SHA256');
    const parsed = parseOcspResponse(response.der).basic!;
    expect(parsed.certificates).toHaveLength(1);
    expect(parsed.responses[0]).toMatchObject({ status: 'revoked', reason: 1, revokedAt: new Date(Math.floor(revokedAt.getTime() / 1000) * 1000) });
  });

  it('leaves out the reason of an unspecified revocation, as CFSSL', async () => {
    const setup = setups.ecdsa;
    const response = await buildOcspResponse({ identity: setup.byCa, serialNumber: serialOf(setup.h.leaf.pem), status: 'revoked', revokedAt: now, reason: 0, ...ocspValidity(now) });
    const text = check(setup, response.der);
    expect(text).toMatch(/: revoked/);
    expect(text).not.toContain('Reason:');
    expect(parseOcspResponse(response.der).basic!.responses[0]!.reason).toBeNull();
  });

  it('answers a SHA-256 CertID, a byKey responder ID and echoes a nonce', async () => {
    const setup = setups.rsa;
    const identity = createOcspSigningIdentity({ issuer: setup.h.ca.der, signer: setup.byResponder.signer, responderId: 'key' });
    const nonce = Uint8Array.from(Buffer.from('0410000102030405060708090a0b0c0d0e0f', 'hex'));
    const response = await buildOcspResponse({ identity, serialNumber: serialOf(setup.h.leaf.pem), status: 'good', hashAlgorithm: 'SHA256', nonce, ...ocspValidity(now) });
    const text = check(setup, response.der, ['-sha256']);
    expect(text).toMatch(/leaf\.pem: good/);
    expect(text).toContain('Responder Id: ');
    expect(text).toMatch(/OCSP Nonce:\s+0410000102030405060708090A0B0C0D0E0F/);
    const parsed = parseOcspResponse(response.der).basic!;
    expect(parsed.responderId.kind).toBe('key');
    expect(parsed.responses[0]!.certId.hashAlgorithm).toBe('SHA256');
    expect(Buffer.from(parsed.nonce!).toString('hex')).toBe('0410000102030405060708090a0b0c0d0e0f');
  });

  it('writes an unknown status', async () => {
    const setup = setups.ecdsa;
    const response = await buildOcspResponse({ identity: setup.byCa, serialNumber: serialOf(setup.h.leaf.pem), status: 'unknown', ...ocspValidity(now) });
    expect(check(setup, response.der)).toMatch(/leaf\.pem: unknown/);
  });

  it('produces a response that openssl rejects once a signature byte is changed', async () => {
    const setup = setups.ecdsa;
    const response = await buildOcspResponse({ identity: setup.byCa, serialNumber: serialOf(setup.h.leaf.pem), status: 'good', ...ocspValidity(now) });
    const tampered = Uint8Array.from(response.der);
    tampered[tampered.length - 5]! ^= 0x01;
    const result = openssl(['ocsp', '-respin', files.file('tampered.der', tampered), '-issuer', setup.caFile, '-CAfile', setup.caFile, '-resp_text']);
    expect(result.output).not.toContain('Response verify OK');
  });
});

describe('createOcspSigningIdentity', () => {
  it('refuses a responder certificate without id-kp-OCSPSigning', async () => {
    const setup = setups.ecdsa;
    const signer = await createRevocationSigner(keySigner(setup.h.other));
    expect(() => createOcspSigningIdentity({ issuer: setup.h.ca.der, signer })).toThrow(
      expect.objectContaining({ code: 2000, message: expect.stringContaining('id-kp-OCSPSigning') }),
    );
  });

  it('refuses a responder certificate another CA issued', async () => {
    const signer = await createRevocationSigner(keySigner(setups.rsa.h.responder));
    expect(() => createOcspSigningIdentity({ issuer: setups.ecdsa.h.ca.der, signer })).toThrow(
      expect.objectContaining({ code: 2000, message: expect.stringContaining('not issued by the CA') }),
    );
  });
});

describe('ocspValidity', () => {
  it('truncates thisUpdate to the hour and producedAt to the minute, as CFSSL', () => {
    const validity = ocspValidity(new Date('2026-11-25T23:27:06.786Z'));
    expect(validity).toEqual({
      thisUpdate: new Date('2026-11-25T23:00:00Z'),
      nextUpdate: new Date('2026-11-29T23:00:00Z'),
      producedAt: new Date('2026-11-25T23:27:00Z'),
    });
  });

  it('never reports a status older than the revocation it carries', () => {
    const validity = ocspValidity(new Date('2026-11-25T23:27:06Z'), 3_600_000, new Date('2026-11-25T23:26:23.5Z'));
    expect(validity.thisUpdate).toEqual(new Date('2026-11-25T23:26:23Z'));
    expect(validity.nextUpdate).toEqual(new Date('2026-11-26T00:26:23Z'));
  });
});

describe('ocspErrorResponse', () => {
  it.each([
    ['malformedRequest', '30030a0101'],
    ['internalError', '30030a0102'],
    ['unauthorized', '30030a0106'],
  ] as const)('encodes %s as CFSSL does', (status, hex) => {
    expect(Buffer.from(ocspErrorResponse(status)).toString('hex')).toBe(hex);
    expect(parseOcspResponse(ocspErrorResponse(status))).toEqual({ status, basic: null });
  });
});
