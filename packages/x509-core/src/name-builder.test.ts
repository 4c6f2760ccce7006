import { describe, expect, it } from 'vitest';

import { parseDistinguishedName } from './distinguished-name.js';
import { encodeSubject, subjectAttributeList, subjectFromAttributes, subjectFromNames } from './name-builder.js';

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('encodeSubject', () => {
  it('orders RDNs C, ST, L, O, OU, CN, serialNumber then extras when names are mixed', () => {
    const subject = subjectFromNames('mn', [{ C: 'US', O: 'A', OU: 'u1' }, { C: 'GB', O: 'B', OU: 'u2', L: 'London', E: 'x@y.z' }], 'SN123');
    const rdns = parseDistinguishedName(encodeSubject(subject)).rdns;
    expect(rdns.map((rdn) => rdn.map((a) => `${a.oid}=${a.value}`).join('+'))).toEqual([
      '2.5.4.6=GB+2.5.4.6=US',
      '2.5.4.7=London',
      '2.5.4.10=A+2.5.4.10=B',
      '2.5.4.11=u1+2.5.4.11=u2',
      '2.5.4.3=mn',
      '2.5.4.5=SN123',
      '1.2.840.113549.1.9.1=x@y.z',
    ]);
  });

  it('sorts a multi-valued RDN by DER when values of one type repeat', () => {
    const der = encodeSubject(subjectFromNames('', [{ C: 'US' }, { C: 'GB' }], ''));
    // SET { SEQ{C, "GB"}, SEQ{C, "US"} }: GB sorts first.
    expect(hex(der)).toBe('30183116300906035504061302474230090603550406130255' + '53');
    expect(parseDistinguishedName(der).rdns[0]!.map((a) => a.value)).toEqual(['GB', 'US']);
  });

  it('uses PrintableString when printable and UTF8String otherwise', () => {
    const der = encodeSubject(subjectFromNames('a*b', [{ O: 'Plain Org' }], ''));
    const text = hex(der);
    expect(text).toContain('13' + '09' + Buffer.from('Plain Org').toString('hex'));
    expect(text).toContain('0c' + '03' + Buffer.from('a*b').toString('hex'));
  });

  it('encodes an empty Name when there is no subject', () => {
    expect(hex(encodeSubject(subjectFromNames('', null, '')))).toBe('3000');
  });

  it('skips empty strings and ignores SerialNumber inside names when given', () => {
    const subject = subjectFromNames('x', [{ C: '', O: 'Org', SerialNumber: 'ignored' }], '');
    expect(subjectAttributeList(subject)).toEqual([
      { oid: '2.5.4.10', value: 'Org' },
      { oid: '2.5.4.3', value: 'x' },
    ]);
  });

  it('drops the standard attribute when an OID entry overrides its type', () => {
    const subject = subjectFromNames('x', [{ C: 'US', OID: { '2.5.4.6': 'DE' } }], '');
    expect(subjectAttributeList(subject)).toEqual([
      { oid: '2.5.4.3', value: 'x' },
      { oid: '2.5.4.6', value: 'DE' },
    ]);
  });
});

describe('subjectFromNames', () => {
  it('throws 9300 invalid OID part when an OID key is not numeric', () => {
    expect(() => subjectFromNames('x', [{ OID: { abc: 'v' } }], '')).toThrow(expect.objectContaining({ code: 9300, message: 'invalid OID part abc' }) as Error);
  });
});

describe('subjectFromAttributes', () => {
  it('moves standard types back into their lists when read from DER', () => {
    const subject = subjectFromAttributes([
      { oid: '2.5.4.3', value: 'x' },
      { oid: '2.5.4.6', value: 'DE' },
      { oid: '1.2.3.4', value: 'custom' },
    ]);
    expect(subject.country).toEqual(['DE']);
    expect(subject.commonName).toBe('x');
    expect(subject.extra).toEqual([{ oid: '1.2.3.4', value: 'custom' }]);
  });
});
