import { beforeAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';
import { parseCertificate } from '@certsmith/x509-core';

import type { CertIdHashAlgorithm } from './cert-id.js';
import { createOcspFileSource, formatOcspResponseFile } from './ocsp-file-source.js';
import { createOcspIssuer } from './ocsp-issuer.js';
import { buildOcspResponse, ocspValidity } from './ocsp-response-builder.js';
import type { OcspLookup } from './ocsp-responder.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { TestHierarchy } from './test-support/pki.js';
import { hierarchy, keySigner } from './test-support/pki.js';

const SERIAL = 4242n;
let a: TestHierarchy;
let b: TestHierarchy;
let byA: OcspSigningIdentity;
let byB: OcspSigningIdentity;

beforeAll(async () => {
  const pki = new TestPki();
  a = hierarchy(pki, 'file-a', 'ecdsa-p256');
  b = hierarchy(pki, 'file-b', 'ecdsa-p256');
  byA = createOcspSigningIdentity({ signer: await createRevocationSigner(keySigner(a.ca)) });
  byB = createOcspSigningIdentity({ signer: await createRevocationSigner(keySigner(b.ca)) });
});

async function response(identity: OcspSigningIdentity, status: 'good' | 'revoked', hashAlgorithm: CertIdHashAlgorithm = 'SHA1'): Promise<Uint8Array> {
  const now = new Date();
  return (await buildOcspResponse({ identity, serialNumber: SERIAL, status, revokedAt: now, hashAlgorithm, ...ocspValidity(now) })).der;
}

function lookup(identity: OcspSigningIdentity, hashAlgorithm: CertIdHashAlgorithm, known = false): OcspLookup {
  const hashes = identity.issuerHashes(hashAlgorithm);
  return {
    certId: { hashAlgorithm, issuerNameHash: hashes.nameHash, issuerKeyHash: hashes.keyHash, serialNumber: Uint8Array.of(0x10, 0x92) },
    serial: SERIAL.toString(),
    authorityKeyId: null,
    issuer: known ? createOcspIssuer(identity.issuer) : null,
  };
}

describe('createOcspFileSource', () => {
  it('finds a serial by its number, whatever redundant leading octets a request encodes it with', async () => {
    const source = createOcspFileSource(formatOcspResponseFile([await response(byA, 'good')]));
    const minimal = lookup(byA, 'SHA1');
    expect(source.find(minimal)).not.toBeNull();
    const padded = { ...minimal, certId: { ...minimal.certId, serialNumber: Uint8Array.of(0x00, 0x00, 0x10, 0x92) } };
    expect(source.find(padded)?.serial).toBe(SERIAL.toString());
    const other = { ...minimal, certId: { ...minimal.certId, serialNumber: Uint8Array.of(0x10, 0x93) } };
    expect(source.find(other)).toBeNull();
  });

  it('reads ocspdump output, skipping and reporting bad pieces', async () => {
    const text = `${formatOcspResponseFile([await response(byA, 'good')])}  not-base64!! \n${Buffer.from('garbage').toString('base64')}\n`;
    const invalid: number[] = [];
    const source = createOcspFileSource(text, { onInvalid: (position) => invalid.push(position) });
    expect(source.size).toBe(1);
    expect(invalid).toEqual([2, 3]);
    expect(source.find(lookup(byA, 'SHA1'))?.single.status).toBe('good');
  });

  it('keeps one response per CA for a serial two CAs share, and answers each CA with its own', async () => {
    const source = createOcspFileSource(formatOcspResponseFile([await response(byA, 'good'), await response(byB, 'revoked')]));
    expect(source.size).toBe(2);
    expect(source.find(lookup(byA, 'SHA1'))?.single.status).toBe('good');
    expect(source.find(lookup(byB, 'SHA1'))?.single.status).toBe('revoked');
  });

  it('lets a later response for the same certificate replace an earlier one, as CFSSL', async () => {
    const source = createOcspFileSource(formatOcspResponseFile([await response(byA, 'good'), await response(byA, 'revoked')]));
    expect(source.size).toBe(1);
    expect(source.find(lookup(byA, 'SHA1'))?.single.status).toBe('revoked');
  });

  it('does not answer a certificate of another CA with the same serial', async () => {
    const source = createOcspFileSource(formatOcspResponseFile([await response(byA, 'good')]));
    expect(source.find(lookup(byB, 'SHA1'))).toBeNull();
  });

  it('matches a SHA-256 request to a SHA-1 response through the known issuer, else falls back to the serial as CFSSL', async () => {
    const source = createOcspFileSource(formatOcspResponseFile([await response(byA, 'good'), await response(byB, 'revoked')]));
    expect(source.find(lookup(byB, 'SHA256', true))?.single.status).toBe('revoked');
    expect(source.find(lookup(byA, 'SHA256', true))?.single.status).toBe('good');
    expect(source.find(lookup(byA, 'SHA256', false))?.single.status).toBe('revoked');
  });

  it('returns null for an unknown serial', () => {
    const source = createOcspFileSource('');
    expect(source.size).toBe(0);
    expect(source.find({ ...lookup(byA, 'SHA1'), serial: '1' })).toBeNull();
    expect(parseCertificate(a.leaf.der).serialNumberHex).not.toBe('');
  });
});
