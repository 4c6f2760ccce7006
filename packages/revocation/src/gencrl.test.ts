import { afterAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';

import { DEFAULT_GENCRL_SECONDS, generateCrl, parseGencrlExpireTime, parseGoInt32, parseSerialNumberList } from './gencrl.js';
import { createRevocationSigner } from './revocation-signer.js';
import { keySigner, openssl, opensslText, scratch } from './test-support/pki.js';

const files = scratch();
afterAll(() => files.cleanup());

describe('parseGoInt32', () => {
  it.each([
    ['604800', 604800],
    [' 3600 ', 3600],
    ['0x20', 32],
    ['0X20', 32],
    ['010', 8],
    ['0o17', 15],
    ['0b101', 5],
    ['-5', -5],
    ['+7', 7],
    ['0', 0],
    ['0x_1F', 31],
    ['2147483647', 2147483647],
    ['1_000', 1000],
  ])('reads %j as %i, as Go strconv.ParseInt(s, 0, 32)', (text, value) => {
    expect(parseGoInt32(text)).toBe(value);
  });

  it.each(['1h', '', '08', '_1', '0x', '2147483648', '1__0', '0x1_', '1.5'])('rejects %j', (text) => {
    expect(parseGoInt32(text)).toBeNull();
  });
});

describe('parseGencrlExpireTime', () => {
  it('defaults to one week and rejects bad or negative values with 400', () => {
    expect(parseGencrlExpireTime(undefined)).toBe(DEFAULT_GENCRL_SECONDS);
    expect(parseGencrlExpireTime('')).toBe(604800);
    expect(parseGencrlExpireTime('0x20')).toBe(32);
    expect(() => parseGencrlExpireTime('1h')).toThrow(expect.objectContaining({ code: 400, message: expect.stringContaining('"1h"') }));
    expect(() => parseGencrlExpireTime('-1')).toThrow(expect.objectContaining({ code: 400, message: expect.stringContaining('negative') }));
  });
});

describe('parseSerialNumberList', () => {
  it('reads one decimal serial per line and skips blank lines', () => {
    expect(parseSerialNumberList('1\n\n  255 \r\n564142266705163047067434699488539944656098241192\n')).toEqual([1n, 255n, 564142266705163047067434699488539944656098241192n]);
  });

  it('names the line of a bad serial', () => {
    expect(() => parseSerialNumberList('1\n0x10\n')).toThrow(expect.objectContaining({ code: 400, message: 'serial number on line 2 must be a decimal integer, got "0x10"' }));
  });
});

describe('generateCrl', () => {
  it('lists every serial revoked now without reasons, nextUpdate after expireTime seconds, and openssl verifies it', async () => {
    const pki = new TestPki();
    const ca = pki.root('gencrl CA', { key: 'ecdsa-p256', keyLabel: 'gencrl' });
    const issuer = await createRevocationSigner(keySigner(ca));
    const now = new Date('2026-11-25T23:26:25.300Z');
    const crl = await generateCrl({ issuer, serialNumbers: ['1', '2', 3n], expireTime: '0x20', now });
    expect(crl).toMatchObject({ entryCount: 3, crlNumber: 1_795_649_185n, thisUpdate: new Date('2026-11-25T23:26:25Z'), nextUpdate: new Date('2026-11-25T23:26:57Z') });
    const crlFile = files.file('gencrl.crl', crl.der);
    expect(openssl(['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', files.file('gencrl-ca.pem', ca.pem), '-noout']).output).toContain('verify OK');
    const text = opensslText(['crl', '-inform', 'DER', '-in', crlFile, '-noout', '-text']);
    expect(text.match(/Revocation Date: Nov 25 23:26:25 2026 GMT/g)).toHaveLength(3);
    expect(text).not.toContain('CRL Reason Code');
  });

  it('rejects a serial that is not decimal (CFSSL lists serial 0 instead)', async () => {
    const pki = new TestPki();
    const issuer = await createRevocationSigner(keySigner(pki.root('gencrl CA 2', { key: 'ecdsa-p256' })));
    await expect(generateCrl({ issuer, serialNumbers: ['1', 'abc'] })).rejects.toMatchObject({ code: 400, message: 'serialNumber[1] must be a decimal integer, got "abc"' });
  });
});
