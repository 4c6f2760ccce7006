import { describe, expect, it } from 'vitest';

import { encodeSignRequest } from './sign-request-json.js';

describe('encodeSignRequest', () => {
  it('writes the members as given when there is no serial', () => {
    expect(encodeSignRequest({ certificate_request: 'CSR', label: 'a', hosts: null })).toBe('{"certificate_request":"CSR","label":"a","hosts":null}');
  });

  it('writes a bigint serial as a JSON number without losing digits', () => {
    const json = encodeSignRequest({ certificate_request: 'CSR', serial: 123456789012345678901234567890n });
    expect(json).toBe('{"certificate_request":"CSR","serial":123456789012345678901234567890}');
    expect(encodeSignRequest({ serial: '42' } as never)).toBe('{"serial":42}');
  });

  it('throws code 400 when the serial is not a decimal integer', () => {
    expect(() => encodeSignRequest({ certificate_request: 'CSR', serial: '0x10' })).toThrow(expect.objectContaining({ code: 400 }) as Error);
  });
});
