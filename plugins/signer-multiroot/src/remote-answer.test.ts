import { describe, expect, it } from 'vitest';

import { excerpt, mapRemoteCode, readEnvelopeResult, readInfoAnswer, readSignAnswer } from './remote-answer.js';

const REMOTE = 'http://127.0.0.1:9001';
const failure = (code: number, message: string): string => JSON.stringify({ success: false, result: null, errors: [{ code, message }], messages: [] });

describe('mapRemoteCode', () => {
  it('keeps CFSSL codes and HTTP-level codes', () => {
    expect(mapRemoteCode(9002, 'CSR Decode failed')).toBe(9002);
    expect(mapRemoteCode(5400, 'Unknown policy profile')).toBe(5400);
    expect(mapRemoteCode(400, 'bad label')).toBe(400);
  });

  it('maps multirootca and cfssl auth refusals to 7100', () => {
    expect(mapRemoteCode(1, 'invalid token')).toBe(7100);
    expect(mapRemoteCode(1, 'authorisation required')).toBe(7100);
    expect(mapRemoteCode(1, 'not authorised')).toBe(7100);
    expect(mapRemoteCode(400, 'invalid token')).toBe(7100);
  });

  it('maps other codes outside the scheme to 7500', () => {
    expect(mapRemoteCode(1, 'bad request')).toBe(7500);
    expect(mapRemoteCode(0, 'json: cannot unmarshal')).toBe(7500);
    expect(mapRemoteCode(42, 'x')).toBe(7500);
  });
});

describe('readEnvelopeResult', () => {
  it('throws the mapped code naming the remote when the envelope reports an error', () => {
    expect(() => readEnvelopeResult(REMOTE, { status: 400, text: failure(1, 'invalid token') })).toThrow(
      expect.objectContaining({ code: 7100, remoteCode: 1, remote: REMOTE, status: 400, message: `remote ${REMOTE} answered: invalid token` }) as Error,
    );
  });

  it('keeps the code when a 200 envelope says success false', () => {
    expect(() => readEnvelopeResult(REMOTE, { status: 200, text: failure(9002, 'CSR Decode failed') })).toThrow(
      expect.objectContaining({ code: 9002, message: `remote ${REMOTE} answered: CSR Decode failed` }) as Error,
    );
  });

  it('throws 7400 with a bounded excerpt when a non-200 answer is not an envelope', () => {
    const body = `<html>${'x'.repeat(5000)}</html>`;
    let error: (Error & { code: number }) | undefined;
    try {
      readEnvelopeResult(REMOTE, { status: 502, text: body });
    } catch (caught) {
      error = caught as Error & { code: number };
    }
    expect(error?.code).toBe(7400);
    expect(error?.message.startsWith(`remote ${REMOTE} answered HTTP 502: <html>xxx`)).toBe(true);
    expect(error?.message.length).toBeLessThan(300);
  });

  it('throws 7200 when a 200 answer is not JSON', () => {
    expect(() => readEnvelopeResult(REMOTE, { status: 200, text: 'not json' })).toThrow(expect.objectContaining({ code: 7200 }) as Error);
  });

  it('throws 7500 when success is false without errors', () => {
    expect(() => readEnvelopeResult(REMOTE, { status: 200, text: '{"success":false,"errors":[]}' })).toThrow(expect.objectContaining({ code: 7500 }) as Error);
  });
});

describe('readSignAnswer', () => {
  it('returns the certificate when the result has one', () => {
    expect(readSignAnswer(REMOTE, { status: 200, text: '{"success":true,"result":{"certificate":"PEM"},"errors":[],"messages":[]}' })).toBe('PEM');
  });

  it('throws 7400 when the result lacks a certificate and 7200 when it is not a string', () => {
    expect(() => readSignAnswer(REMOTE, { status: 200, text: '{"success":true,"result":{}}' })).toThrow(
      expect.objectContaining({ code: 7400, message: `remote ${REMOTE} answered: response doesn't contain certificate.` }) as Error,
    );
    expect(() => readSignAnswer(REMOTE, { status: 200, text: '{"success":true,"result":{"certificate":1}}' })).toThrow(expect.objectContaining({ code: 7200 }) as Error);
  });
});

describe('readInfoAnswer', () => {
  it('returns certificate, usages and expiry when present', () => {
    const text = JSON.stringify({ success: true, result: { certificate: 'PEM', usages: ['signing', 3], expiry: '168h' } });
    expect(readInfoAnswer(REMOTE, { status: 200, text })).toEqual({ certificate: 'PEM', usages: ['signing'], expiry: '168h' });
  });
});

describe('excerpt', () => {
  it('flattens control characters so remote text cannot forge log lines', () => {
    expect(excerpt('a\nb\r\n\tc')).toBe('a b c');
  });
});
