import { describe, expect, it } from 'vitest';
import { certificateRecordJson, formatGoTime } from './record-json.js';

describe('formatGoTime', () => {
  it('writes UTC with Z and a fraction only when there is one', () => {
    expect(formatGoTime(new Date('2027-11-25T23:22:00.000Z'))).toBe('2027-11-25T23:22:00Z');
    expect(formatGoTime(new Date('2027-11-25T23:22:00.250Z'))).toBe('2027-11-25T23:22:00.25Z');
  });
});

describe('certificateRecordJson', () => {
  const record = {
    serial: '42',
    authorityKeyId: 'ab',
    label: 'default',
    status: 'revoked',
    reason: 1,
    expiry: new Date('2027-11-25T23:22:00Z'),
    revokedAt: new Date('2026-11-25T10:00:00.5Z'),
    pem: '-----BEGIN CERTIFICATE-----\n…',
    issuedAt: null,
    notBefore: new Date('2026-11-25T00:00:00Z'),
    metadata: null,
    sans: ['a.example'],
    commonName: 'a.example',
  };

  it('names the fields as CFSSL\'s CertificateRecord JSON tags, the PEM only when asked', () => {
    expect(certificateRecordJson(record)).toEqual({
      serial_number: '42',
      authority_key_identifier: 'ab',
      ca_label: 'default',
      status: 'revoked',
      reason: 1,
      expiry: '2027-11-25T23:22:00Z',
      revoked_at: '2026-11-25T10:00:00.5Z',
      issued_at: null,
      not_before: '2026-11-25T00:00:00Z',
      common_name: 'a.example',
      sans: ['a.example'],
      metadata: null,
    });
    expect(certificateRecordJson(record, record.pem).pem).toBe(record.pem);
  });
});
