import { describe, expect, it } from 'vitest';
import { dateWalk } from './test-support/date-walk.js';
import { certificateJsonPage, certificateRecordJson, formatGoTime, formatGoTimeByIso } from './record-json.js';

describe('formatGoTime', () => {
  it('writes the same text as the toISOString cut for any time, years outside 0–9999 included', () => {
    for (const year of [-1, 0, 1, 9, 99, 100, 999, 1000, 1969, 1970, 2038, 9999, 10_000]) {
      for (const ms of [0, 1, 9, 10, 50, 99, 100, 120, 123, 500, 990, 999]) {
        const date = new Date(Date.UTC(2000, 11, 31, 23, 59, 59, ms));
        date.setUTCFullYear(year);
        expect(formatGoTime(date)).toBe(formatGoTimeByIso(date));
      }
    }
    for (const date of dateWalk(0x68e31da4, 20_000)) expect(formatGoTime(date)).toBe(formatGoTimeByIso(date));
    expect(() => formatGoTime(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('writes UTC with Z and a fraction only when there is one', () => {
    expect(formatGoTime(new Date('2027-11-25T23:22:00.000Z'))).toBe('2027-11-25T23:22:00Z');
    expect(formatGoTime(new Date('2027-11-25T23:22:00.250Z'))).toBe('2027-11-25T23:22:00.25Z');
  });
});

/** A stored row as the store reads it. */
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

describe('certificateRecordJson', () => {
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

describe('certificateJsonPage', () => {
  it("is the JSON of the rows' certificateRecordJson, with the PEM pemOf gives, and the page's cursor", () => {
    const row = { ...record, serial: '1', metadata: { a: [1, '<&>'] } };
    expect(certificateJsonPage({ certificates: [row, record], nextCursor: 'next' })).toEqual({
      certificatesJson: JSON.stringify([certificateRecordJson(row), certificateRecordJson(record)]),
      nextCursor: 'next',
    });
    expect(certificateJsonPage({ certificates: [row], nextCursor: null }, (r) => r.pem).certificatesJson).toBe(JSON.stringify([certificateRecordJson(row, row.pem)]));
    expect(certificateJsonPage({ certificates: [], nextCursor: null })).toEqual({ certificatesJson: '[]', nextCursor: null });
  });
});

