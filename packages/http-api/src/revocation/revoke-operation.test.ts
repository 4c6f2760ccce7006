import type { Server } from 'node:http';
import { createAuthenticatedRequest } from '@certsmith/signer-api';
import { CertsmithError } from '@certsmith/x509-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { closeHttpServer, createHttpServer, listen } from '../http-server.js';
import type { OperationContext } from '../operation.js';
import { protectedRequest } from './request-protection.js';
import { createRevokeOperation } from './revoke-operation.js';

const KEY = Uint8Array.from(Buffer.from('00112233445566778899aabbccddeeff', 'hex'));
const revoked: Array<[string, string, number]> = [];

async function revoke(serial: string, authorityKeyId: string, reason: number): Promise<void> {
  if (serial === '404') throw new CertsmithError(11200, 'failed to revoke the certificate: certificate not found');
  revoked.push([serial, authorityKeyId, reason]);
}

describe('POST /api/v1/cfssl/revoke', () => {
  let open: Server;
  let authenticated: Server;
  const urls: Record<string, string> = {};

  beforeAll(async () => {
    open = createHttpServer(createApp({ operations: [createRevokeOperation({ revoke })] }));
    urls['open'] = (await listen(open, 0, '127.0.0.1')).url;
    authenticated = createHttpServer(createApp({ operations: [createRevokeOperation({ revoke, authKeys: [KEY] })] }));
    urls['authenticated'] = (await listen(authenticated, 0, '127.0.0.1')).url;
  });
  afterAll(async () => {
    await closeHttpServer(open, { timeoutMs: 1000 });
    await closeHttpServer(authenticated, { timeoutMs: 1000 });
  });
  beforeEach(() => {
    revoked.length = 0;
  });

  const post = async (body: unknown, server = 'open'): Promise<{ status: number; body: Record<string, any> }> => {
    const response = await fetch(`${urls[server]}/api/v1/cfssl/revoke`, { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };

  it.each([
    ['keyCompromise', 1],
    ['KEYCOMPROMISE', 1],
    ['', 0],
    ['0', 0],
    ['10', 10],
    ['aACompromise', 10],
  ])('revokes with reason %j as code %d and answers {}', async (reason, code) => {
    const answer = await post({ serial: '123', authority_key_id: 'abcd', reason });
    expect(answer).toEqual({ status: 200, body: { success: true, result: {}, errors: [], messages: [] } });
    expect(revoked).toEqual([['123', 'abcd', code]]);
  });

  it('reads the members as Go does (any case) and takes an absent reason as unspecified', async () => {
    expect((await post({ Serial: '7', AUTHORITY_KEY_ID: 'ef' })).status).toBe(200);
    expect(revoked).toEqual([['7', 'ef', 0]]);
  });

  it.each([
    ['not JSON', 'nope', 400, 'Unable to parse revocation request'],
    ['a number reason', { serial: '1', reason: 1 }, 400, 'Unable to parse revocation request'],
    ['no serial', { authority_key_id: 'ab' }, 400, 'serial number is required but not provided'],
    ['a bad reason', { serial: '1', reason: 'bogus' }, 400, 'Invalid reason code'],
    ['reason 7 (unassigned)', { serial: '1', reason: '7' }, 400, 'Invalid reason code'],
    ['a serial no row has', { serial: '404', authority_key_id: 'ab' }, 11200, 'failed to revoke the certificate: certificate not found'],
  ])("answers %s with CFSSL's code and message", async (_name, body, code, message) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ success: false, errors: [{ code, message }] });
    expect(revoked).toEqual([]);
  });

  it('takes an authenticated request when an auth key is required', async () => {
    const answer = await post(createAuthenticatedRequest(JSON.stringify({ serial: '9', authority_key_id: 'aa', reason: 'superseded' }), KEY), 'authenticated');
    expect(answer.status).toBe(200);
    expect(revoked).toEqual([['9', 'aa', 4]]);
  });

  it.each([
    ['a plain request', { serial: '9', authority_key_id: 'aa' }, 'authentication required'],
    ['a token made with another key', createAuthenticatedRequest('{"serial":"9"}', new Uint8Array(16)), 'invalid token'],
  ])('refuses %s when an auth key is required', async (_name, body, message) => {
    const answer = await post(body, 'authenticated');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ errors: [{ code: 400, message }] });
    expect(revoked).toEqual([]);
  });
});

describe('protectedRequest', () => {
  const context = (commonName: string | null) => ({ clientCommonName: commonName }) as OperationContext;
  const clientCn = { test: (name: string) => /^ops-/.test(name) };

  it('passes a client certificate whose CN matches', () => {
    expect(protectedRequest({ serial: '1' }, context('ops-alice'), { clientCn }, 'x')).toEqual({ serial: '1' });
  });

  it.each([['www'], [null]])('refuses the client CN %j with 403 Invalid CN', (commonName) => {
    expect(() => protectedRequest({}, context(commonName), { clientCn }, 'x')).toThrow(expect.objectContaining({ code: 403, message: 'Invalid CN' }));
  });
});
