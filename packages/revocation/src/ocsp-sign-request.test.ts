import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';

import { parseOcspResponse } from './ocsp-response-parser.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { decodeOcspSignRequest, ocspSign } from './ocsp-sign-request.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { TestHierarchy } from './test-support/pki.js';
import { hierarchy, keySigner, openssl, scratch } from './test-support/pki.js';

const pki = new TestPki();
const files = scratch();
let h: TestHierarchy;
let identity: OcspSigningIdentity;
afterAll(() => files.cleanup());

beforeAll(async () => {
  h = hierarchy(pki, 'ocspsign', 'ecdsa-p256');
  identity = createOcspSigningIdentity({ issuer: h.ca.der, signer: await createRevocationSigner(keySigner(h.responder)) });
});

describe('ocspSign', () => {
  it('signs a good response by default that openssl verifies', async () => {
    const { ocspResponse } = await ocspSign(identity, { certificate: h.leaf.pem });
    const caFile = files.file('ca.pem', h.ca.pem);
    const result = openssl(['ocsp', '-respin', files.file('good.der', Buffer.from(ocspResponse, 'base64')), '-issuer', caFile, '-cert', files.file('leaf.pem', h.leaf.pem), '-CAfile', caFile, '-no_nonce']);
    expect(result.output).toContain('Response verify OK');
    expect(result.output).toContain('leaf.pem: good');
  });

  it('signs revoked with reason and a YYYY-MM-DD revocation time', async () => {
    const { ocspResponse } = await ocspSign(identity, { certificate: h.leaf.pem, status: 'revoked', reason: 4, revoked_at: '2026-11-20', issuer_hash: 'SHA256' });
    const single = parseOcspResponse(Buffer.from(ocspResponse, 'base64')).basic!.responses[0]!;
    expect(single).toMatchObject({ status: 'revoked', reason: 4, revokedAt: new Date('2026-11-20T00:00:00Z') });
    expect(single.certId.hashAlgorithm).toBe('SHA256');
  });

  it('takes now for revoked_at "now" and ""', async () => {
    const now = new Date('2026-11-25T23:27:06Z');
    for (const revokedAt of ['now', '']) {
      const { ocspResponse } = await ocspSign(identity, { certificate: h.leaf.pem, status: 'revoked', revoked_at: revokedAt }, { now });
      expect(parseOcspResponse(Buffer.from(ocspResponse, 'base64')).basic!.responses[0]!.revokedAt).toEqual(now);
    }
  });

  // CFSSL's table (lifecycle spec §3.4), in CFSSL's order of checks.
  it.each([
    ['a non-object body', [], 400, 'Unable to parse sign request'],
    ['a string reason', { certificate: 'x', reason: '1' }, 400, 'Unable to parse sign request'],
    ['a non-string status', { certificate: 'x', status: 1 }, 400, 'Unable to parse sign request'],
    ['a bad PEM', { certificate: 'not a certificate' }, 400, 'Malformed certificate'],
    ['an RFC 3339 revoked_at', { status: 'revoked', revoked_at: '2026-11-20T00:00:00Z' }, 400, 'Malformed revocation time'],
    ['a 31st of November', { status: 'revoked', revoked_at: '2026-11-31' }, 400, 'Malformed revocation time'],
    ['a lower-case issuer_hash', { issuer_hash: 'sha256' }, 400, 'Unsupported hash algorithm in request'],
    ['MD5 (CFSSL: 500)', { issuer_hash: 'MD5' }, 400, 'Unsupported hash algorithm in request'],
    ['Good', { status: 'Good' }, 8200, 'Invalid revocation status'],
    ['an empty status', { status: '' }, 8200, 'Invalid revocation status'],
    ['reason 7', { status: 'revoked', reason: 7 }, 400, 'reason must be an RFC 5280 CRLReason code (0-6, 8-10), got 7'],
  ])('answers %s with %i', async (_name, body, code, message) => {
    const request = Array.isArray(body) ? body : { certificate: h.leaf.pem, ...body };
    await expect(ocspSign(identity, request)).rejects.toMatchObject({ code, message });
  });

  it('answers 8100 for a certificate of another CA', async () => {
    const other = hierarchy(pki, 'ocspsign-other', 'ecdsa-p256');
    await expect(ocspSign(identity, { certificate: other.leaf.pem })).rejects.toMatchObject({ code: 8100, message: 'Certificate not issued by this issuer' });
  });

  it('answers 8200 when the issuer name matches but the signature does not verify', async () => {
    const impostor = new TestPki().root({ O: 'certsmith tests', CN: 'ocspsign CA' }, { key: 'ecdsa-p256', keyLabel: 'impostor' });
    const forged = new TestPki().leaf('forged.test', impostor, { keyLabel: 'forged' });
    await expect(ocspSign(identity, { certificate: forged.pem })).rejects.toMatchObject({ code: 8200, message: expect.stringContaining('does not verify') });
  });
});

describe('decodeOcspSignRequest', () => {
  it('defaults status to good and the CertID hash to SHA-1', () => {
    expect(decodeOcspSignRequest({ certificate: h.leaf.pem })).toMatchObject({ status: 'good', reason: 0, revokedAt: null, hashAlgorithm: 'SHA1' });
  });
});
