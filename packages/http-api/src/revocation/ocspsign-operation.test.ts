import type { Server } from 'node:http';
import { createOcspSigningIdentity, createRevocationSigner, parseOcspResponse } from '@certsmith/revocation';
import type { OcspSigningIdentity } from '@certsmith/revocation';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { closeHttpServer, createHttpServer, listen } from '../http-server.js';
import { createOcspsignOperation } from './ocspsign-operation.js';

const pki = new TestPki();
const ca = pki.root({ O: 'certsmith', CN: 'ocspsign CA' }, { key: 'ecdsa-p256', keyLabel: 'ocspsign-ca' });
const other = pki.root({ O: 'certsmith', CN: 'ocspsign other CA' }, { key: 'ecdsa-p256', keyLabel: 'ocspsign-other' });
const leaf = pki.leaf('www.ocspsign.test', ca, { keyLabel: 'ocspsign-leaf' });
const foreign = pki.leaf('www.foreign.test', other, { keyLabel: 'ocspsign-foreign' });

async function identityOf(certificate: TestCertificate): Promise<OcspSigningIdentity> {
  const key = certificate.key.privateKey;
  const signer = await createRevocationSigner({
    algorithms: algorithmsForKeyObject(key),
    getCertificate: async () => ({ der: certificate.der, pem: certificate.pem }),
    sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
    close: async () => {},
  });
  return createOcspSigningIdentity({ signer });
}

describe('POST /api/v1/cfssl/ocspsign', () => {
  let server: Server;
  let url: string;
  let identity: OcspSigningIdentity;

  beforeAll(async () => {
    identity = await identityOf(ca);
    const operation = createOcspsignOperation({
      identityFor: (certificate) => (toHex(certificate.authorityKeyId ?? new Uint8Array()).toLowerCase() === identity.signer.keyIdentifierHex ? identity : undefined),
      intervalMs: 3_600_000,
    });
    server = createHttpServer(createApp({ operations: [operation] }));
    ({ url } = await listen(server, 0, '127.0.0.1'));
  });
  afterAll(async () => {
    await closeHttpServer(server, { timeoutMs: 1000 });
  });

  const ocspsign = async (body: unknown): Promise<{ status: number; body: Record<string, any> }> => {
    const response = await fetch(`${url}/api/v1/cfssl/ocspsign`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it('signs a good response with the CA of the certificate, valid for the interval', async () => {
    const answer = await ocspsign({ certificate: leaf.pem });
    expect(answer.status).toBe(200);
    const parsed = parseOcspResponse(Buffer.from(answer.body['result'].ocspResponse, 'base64'));
    const single = parsed.basic!.responses[0]!;
    expect(single.status).toBe('good');
    expect(single.nextUpdate!.getTime() - single.thisUpdate.getTime()).toBe(3_600_000);
  });

  it('signs a revoked response with the reason, the date and the CertID hash asked for', async () => {
    const answer = await ocspsign({ certificate: leaf.pem, status: 'revoked', reason: 1, revoked_at: '2026-11-20', issuer_hash: 'SHA256' });
    expect(answer.status).toBe(200);
    const single = parseOcspResponse(Buffer.from(answer.body['result'].ocspResponse, 'base64')).basic!.responses[0]!;
    expect(single).toMatchObject({ status: 'revoked', reason: 1, revokedAt: new Date('2026-11-20T00:00:00Z') });
    expect(single.certId.hashAlgorithm).toBe('SHA256');
  });

  it.each([
    ['not JSON', 'not json', 400, 'Unable to parse sign request'],
    ['a string reason', { certificate: leaf.pem, status: 'revoked', reason: '1' }, 400, 'Unable to parse sign request'],
    ['no certificate', {}, 400, 'Malformed certificate'],
    ['a bad revoked_at', { certificate: leaf.pem, status: 'revoked', revoked_at: '2026-11-20T00:00:00Z' }, 400, 'Malformed revocation time'],
    ['an unknown issuer_hash', { certificate: leaf.pem, issuer_hash: 'sha256' }, 400, 'Unsupported hash algorithm in request'],
    ['a bad status', { certificate: leaf.pem, status: 'Good' }, 8200, 'Invalid revocation status'],
    ['a certificate of another CA', { certificate: foreign.pem }, 8100, 'Certificate not issued by this issuer'],
  ])('answers %s with CFSSL\'s code and message', async (_name, body, code, message) => {
    const answer = await ocspsign(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, errors: [{ code, message }] });
  });
});
