import { createHmac } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { computeAuthToken, createAuthenticatedRequest, verifyAuthenticatedRequest } from './authenticated-request.js';

const key = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
const previous = Buffer.from('ffeeddccbbaa99887766554433221100', 'hex');
const requestJson = '{"certificate_request":"-----BEGIN CERTIFICATE REQUEST-----\\n...","profile":"client"}';

describe('computeAuthToken', () => {
  it('equals HMAC-SHA256 over the exact bytes when computed independently', () => {
    const expected = createHmac('sha256', key).update(requestJson).digest('hex');
    expect(Buffer.from(computeAuthToken(Buffer.from(requestJson), key)).toString('hex')).toBe(expected);
  });
});

describe('createAuthenticatedRequest', () => {
  it('base64-encodes token and request when built', () => {
    const authenticated = createAuthenticatedRequest(requestJson, key, { timestamp: 1_700_000_000 });
    expect(authenticated.timestamp).toBe(1_700_000_000);
    expect(Buffer.from(authenticated.request, 'base64').toString()).toBe(requestJson);
    expect(authenticated).not.toHaveProperty('remote_address');
  });
});

describe('verifyAuthenticatedRequest', () => {
  it('accepts the token when it was made with the current key', () => {
    expect(verifyAuthenticatedRequest(createAuthenticatedRequest(requestJson, key), [key, previous])).toBe(true);
  });

  it('accepts the token when it was made with the previous key', () => {
    expect(verifyAuthenticatedRequest(createAuthenticatedRequest(requestJson, previous), [key, previous])).toBe(true);
  });

  it('rejects the token when the request bytes changed', () => {
    const authenticated = createAuthenticatedRequest(requestJson, key);
    const tampered = { ...authenticated, request: Buffer.from(requestJson.replace('client', 'server')).toString('base64') };
    expect(verifyAuthenticatedRequest(tampered, key)).toBe(false);
  });

  it('rejects the token when it was made with another key', () => {
    expect(verifyAuthenticatedRequest(createAuthenticatedRequest(requestJson, Buffer.alloc(16, 7)), [key, null])).toBe(false);
  });

  it('rejects a truncated token when lengths differ', () => {
    const authenticated = createAuthenticatedRequest(requestJson, key);
    expect(verifyAuthenticatedRequest({ ...authenticated, token: authenticated.token.slice(0, 8) }, key)).toBe(false);
  });
});
