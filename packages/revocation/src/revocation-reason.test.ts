import { describe, expect, it } from 'vitest';

import {
  REVOCATION_REASON_CODES,
  parseCertaddReason,
  parseOcspSignReason,
  parseRevocationReason,
  revocationReasonName,
} from './revocation-reason.js';

describe('parseRevocationReason', () => {
  it.each([
    [undefined, 0],
    ['', 0],
    ['unspecified', 0],
    ['KeyCompromise', 1],
    ['keycompromise', 1],
    ['CACOMPROMISE', 2],
    ['affiliationChanged', 3],
    ['superseded', 4],
    ['cessationOfOperation', 5],
    ['certificateHold', 6],
    ['removeFromCRL', 8],
    ['privilegeWithdrawn', 9],
    ['aACompromise', 10],
    ['1', 1],
    ['9', 9],
    ['+5', 5],
    ['05', 5],
    // Deliberate difference: CFSSL rejects 0 and 10 as numbers (cfssl #1045).
    ['0', 0],
    ['10', 10],
  ])('reads %j as %i', (text, code) => {
    expect(parseRevocationReason(text)).toBe(code);
  });

  it.each(['7', '11', '-1', 'bogus', '1.0', ' 1', '0x1', '99999999999999999999999'])('rejects %j with 400 Invalid reason code', (text) => {
    expect(() => parseRevocationReason(text)).toThrow(expect.objectContaining({ code: 400, message: 'Invalid reason code' }));
  });
});

describe('parseCertaddReason', () => {
  it('accepts exactly CFSSL certadd list 0-6 and 8-10', () => {
    for (let code = -1; code <= 11; code++) {
      if (REVOCATION_REASON_CODES.includes(code as never)) expect(parseCertaddReason(code)).toBe(code);
      else expect(() => parseCertaddReason(code)).toThrow(expect.objectContaining({ code: 400, message: 'Invalid certificate status reason code' }));
    }
    expect(() => parseCertaddReason('1')).toThrow(expect.objectContaining({ code: 400 }));
  });
});

describe('parseOcspSignReason', () => {
  it('defaults to unspecified and refuses integers that are not CRLReason codes', () => {
    expect(parseOcspSignReason(undefined)).toBe(0);
    expect(parseOcspSignReason(6)).toBe(6);
    expect(() => parseOcspSignReason(7)).toThrow(expect.objectContaining({ code: 400, message: expect.stringContaining('got 7') }));
  });
});

describe('revocationReasonName', () => {
  it('names codes and returns null for 7', () => {
    expect(revocationReasonName(1)).toBe('keyCompromise');
    expect(revocationReasonName(10)).toBe('aACompromise');
    expect(revocationReasonName(7)).toBeNull();
  });
});
