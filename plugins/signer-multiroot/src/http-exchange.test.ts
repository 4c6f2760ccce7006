import { describe, expect, it } from 'vitest';

import { classifyFailure, isConnectPhaseError } from './http-exchange.js';

const coded = (code: string): Error => Object.assign(new Error(code), { code });

describe('isConnectPhaseError', () => {
  it('accepts refused, DNS, connect timeout and TLS handshake codes', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'ERR_SSL_WRONG_VERSION_NUMBER']) {
      expect(isConnectPhaseError(code)).toBe(true);
    }
  });

  it('rejects codes that can happen after the request was written', () => {
    for (const code of ['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'EPIPE', 'deadline']) {
      expect(isConnectPhaseError(code)).toBe(false);
    }
  });
});

describe('classifyFailure', () => {
  it('reports not sent when the error came before the request was written', () => {
    expect(classifyFailure(coded('ECONNRESET'), false)).toMatchObject({ mayHaveBeenSent: false, reason: 'ECONNRESET' });
  });

  it('reports possibly sent when a written request timed out or was reset', () => {
    expect(classifyFailure(coded('UND_ERR_HEADERS_TIMEOUT'), true)).toMatchObject({ mayHaveBeenSent: true });
    expect(classifyFailure(coded('ECONNRESET'), true)).toMatchObject({ mayHaveBeenSent: true });
  });

  it('reports not sent when the code proves a connect-phase failure', () => {
    expect(classifyFailure(coded('ECONNREFUSED'), true)).toMatchObject({ mayHaveBeenSent: false, reason: 'ECONNREFUSED' });
  });
});
