import { describe, expect, it } from 'vitest';
import { CertsmithError, ErrorCode, KeyMismatchError, fromErrorPayload, isCodedError, toErrorPayload } from './errors.js';

describe('CertsmithError', () => {
  it('uses CFSSL fixed message when none is given', () => {
    const error = new KeyMismatchError();
    expect(error.code).toBe(2300);
    expect(error.message).toBe('Private key does not match public key');
    expect(error.name).toBe('KeyMismatchError');
  });
});

describe('toErrorPayload / fromErrorPayload', () => {
  it('keeps code, name and message across a round trip', () => {
    const rebuilt = fromErrorPayload(toErrorPayload(new CertsmithError(ErrorCode.PolicyUnknownProfile)));
    expect(isCodedError(rebuilt)).toBe(true);
    expect((rebuilt as CertsmithError).code).toBe(5400);
    expect(rebuilt.message).toBe('Unknown policy profile');
  });

  it('gives code 0 to plain errors', () => {
    expect(toErrorPayload(new TypeError('boom'))).toEqual({ code: 0, name: 'TypeError', message: 'boom' });
    expect(isCodedError(new Error('x'))).toBe(false);
  });
});
