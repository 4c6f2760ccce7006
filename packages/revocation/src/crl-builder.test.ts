import { afterAll, describe, expect, it } from 'vitest';

import type { KeySpec } from '@certsmith/test-pki';
import { TestPki } from '@certsmith/test-pki';
import { encodePem, parseCertificate } from '@certsmith/x509-core';

import { buildCrl } from './crl-builder.js';
import { RevocationReason } from './revocation-reason.js';
import { createRevocationSigner } from './revocation-signer.js';
import { keySigner, openssl, opensslText, scratch } from './test-support/pki.js';

const pki = new TestPki({ now: new Date() });
const files = scratch();
afterAll(() => files.cleanup());

async function caSigner(key: KeySpec, name = `CRL ${key}`) {
  const ca = pki.root({ O: 'certsmith tests', CN: `${name} CA` }, { key, keyLabel: name });
  return { ca, signer: await createRevocationSigner(keySigner(ca)) };
}

describe('buildCrl', () => {
  it.each([
    ['rsa-2048', 'sha256WithRSAEncryption'],
    ['rsa-3072', 'sha256WithRSAEncryption'],
    ['ecdsa-p256', 'ecdsa-with-SHA256'],
    ['ecdsa-p384', 'ecdsa-with-SHA384'],
    ['ecdsa-p521', 'ecdsa-with-SHA512'],
    ['ed25519', 'ED25519'],
  ] as const)('writes a CRL that openssl verifies when the CA key is %s', async (key, algorithmName) => {
    const { ca, signer } = await caSigner(key);
    const revokedAt = new Date('2026-11-25T23:26:23.789Z');
    const crl = await buildCrl({
      issuer: signer,
      crlNumber: 42n,
      thisUpdate: new Date('2026-11-25T23:30:00.500Z'),
      nextUpdate: new Date('2026-12-02T23:30:00Z'),
      revoked: [
        { serial: '564142266705163047067434699488539944656098241192', revokedAt, reason: RevocationReason.keyCompromise },
        { serial: 255n, revokedAt, reason: 0 },
        { serial: '1', revokedAt },
        { serial: 7n, revokedAt, reason: RevocationReason.certificateHold },
      ],
    });
    expect(crl).toMatchObject({ crlNumber: 42n, entryCount: 4, thisUpdate: new Date('2026-11-25T23:30:00Z') });
    const crlFile = files.file(`${key}.crl`, crl.der);
    const caFile = files.file(`${key}-ca.pem`, ca.pem);
    const verified = openssl(['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', caFile, '-noout']);
    expect(verified.output).toContain('verify OK');
    expect(verified.status).toBe(0);

    const text = opensslText(['crl', '-inform', 'DER', '-in', crlFile, '-noout', '-text']);
    expect(text).toContain('Version 2 (0x1)');
    expect(text).toContain(`Signature Algorithm: ${algorithmName}`);
    expect(text).toContain(`Issuer: O = certsmith tests, CN = CRL ${key} CA`);
    expect(text).toContain('Last Update: Nov 25 23:30:00 2026 GMT');
    expect(text).toContain('Next Update: Dec  2 23:30:00 2026 GMT');
    expect(text).toMatch(/X509v3 CRL Number:\s+42/);
    expect(text).toContain(ca.subjectKeyIdHex.replace(/(..)(?!$)/g, '$1:'));
    expect(text).toContain('Serial Number: 62D1039EEE146265B123E0E3B1F78AC7309B2AA8');
    expect(text).toContain('Serial Number: 01');
    expect(text).toContain('Serial Number: FF');
    expect(text).toContain('Revocation Date: Nov 25 23:26:23 2026 GMT');
    expect(text).toMatch(/Serial Number: 62D1039EEE146265B123E0E3B1F78AC7309B2AA8\s+Revocation Date: [^\n]+\s+CRL entry extensions:\s+X509v3 CRL Reason Code:\s+Key Compromise/);
    expect(text).toMatch(/Serial Number: 07\s+Revocation Date: [^\n]+\s+CRL entry extensions:\s+X509v3 CRL Reason Code:\s+Certificate Hold/);
    // Unspecified (explicit 0 or absent) writes no reason extension (RFC 5280 5.3.1).
    expect(text).toMatch(/Serial Number: FF\s+Revocation Date: [^\n]+\n\s+Serial Number: 01/);
  });

  it('makes openssl verify -crl_check reject a revoked certificate and accept the others', async () => {
    const { ca, signer } = await caSigner('ecdsa-p256', 'crl_check');
    const revoked = pki.leaf('revoked.crl-check.test', ca, { keyLabel: 'crl-check-revoked' });
    const kept = pki.leaf('kept.crl-check.test', ca, { keyLabel: 'crl-check-kept' });
    const crl = await buildCrl({
      issuer: signer,
      crlNumber: 1n,
      nextUpdate: new Date(Date.now() + 3_600_000),
      revoked: [{ serial: BigInt(`0x${parseCertificate(revoked.der).serialNumberHex}`), revokedAt: new Date(), reason: 1 }],
    });
    const args = ['verify', '-crl_check', '-CAfile', files.file('check-ca.pem', ca.pem), '-CRLfile', files.file('check.crl.pem', encodePem('X509 CRL', crl.der))];
    const rejected = openssl([...args, files.file('revoked.pem', revoked.pem)]);
    expect(rejected.status).not.toBe(0);
    expect(rejected.output).toContain('certificate revoked');
    const accepted = openssl([...args, files.file('kept.pem', kept.pem)]);
    expect(accepted.output).toContain('kept.pem: OK');
  });

  it('copies the issuer name byte for byte when the CA subject uses UTF8String', async () => {
    const { ca, signer } = await caSigner('ecdsa-p256', 'UTF8 name');
    const crl = await buildCrl({ issuer: signer, crlNumber: 1n, nextUpdate: new Date(Date.now() + 3_600_000), revoked: [] });
    const subject = parseCertificate(ca.der).subject.der;
    const hex = Buffer.from(crl.der).toString('hex');
    expect(hex).toContain(Buffer.from(subject).toString('hex'));
    expect(subject).toContain(0x0c); // a UTF8String tag in the name
  });

  it('leaves out revokedCertificates when nothing is revoked', async () => {
    const { ca, signer } = await caSigner('ecdsa-p256');
    const crl = await buildCrl({ issuer: signer, crlNumber: 0n, nextUpdate: new Date(Date.now() + 3_600_000), revoked: [] });
    expect(crl.entryCount).toBe(0);
    const crlFile = files.file('empty.crl', crl.der);
    const verified = openssl(['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', files.file('empty-ca.pem', ca.pem), '-noout', '-text']);
    expect(verified.output).toContain('verify OK');
    expect(verified.output).toContain('No Revoked Certificates.');
  });

  it('does not list certificates revoked with removeFromCRL', async () => {
    const { signer } = await caSigner('ecdsa-p256');
    const crl = await buildCrl({
      issuer: signer,
      crlNumber: 3n,
      nextUpdate: new Date(Date.now() + 3_600_000),
      revoked: [{ serial: 5n, revokedAt: new Date(), reason: RevocationReason.removeFromCRL }, { serial: 6n, revokedAt: new Date() }],
    });
    expect(crl.entryCount).toBe(1);
    const text = opensslText(['crl', '-inform', 'DER', '-in', files.file('remove.crl', crl.der), '-noout', '-text']);
    expect(text).not.toContain('Serial Number: 05');
    expect(text).toContain('Serial Number: 06');
  });

  it('reads entries from an async iterable and writes GeneralizedTime from 2050', async () => {
    const { ca, signer } = await caSigner('rsa-2048');
    async function* rows() {
      for (let i = 1; i <= 300; i++) yield { serial: BigInt(i) * 1_000_003n, revokedAt: new Date(Date.UTC(2051, 0, 1)), reason: i % 2 };
    }
    const crl = await buildCrl({ issuer: signer, crlNumber: 2n ** 150n, thisUpdate: new Date(Date.UTC(2051, 0, 2)), nextUpdate: new Date(Date.UTC(2051, 0, 9)), revoked: rows() });
    expect(crl.entryCount).toBe(300);
    const crlFile = files.file('async.crl', crl.der);
    const parsed = opensslText(['asn1parse', '-inform', 'DER', '-in', crlFile]);
    expect(parsed).toContain('GENERALIZEDTIME   :20510102000000Z');
    // openssl checks the signature without the CRL's time window (it is in the future).
    const verified = openssl(['crl', '-inform', 'DER', '-in', crlFile, '-CAfile', files.file('async-ca.pem', ca.pem), '-noout']);
    expect(verified.output).toContain('verify OK');
  });

  it.each([
    ['a negative CRL number', { crlNumber: -1n }, 'crlNumber must be an integer from 0 to 2^159-1'],
    ['a CRL number over 20 octets', { crlNumber: 2n ** 159n }, 'crlNumber must be an integer from 0 to 2^159-1'],
    ['nextUpdate before thisUpdate', { nextUpdate: new Date(Date.UTC(2000, 0, 1)) }, 'must not be before thisUpdate'],
    ['a non-decimal serial', { revoked: [{ serial: 'abc', revokedAt: new Date() }] }, 'serial number must be a decimal integer, got "abc"'],
    ['the unassigned reason 7', { revoked: [{ serial: 1n, revokedAt: new Date(), reason: 7 }] }, 'revoked[0].reason 7 is not an RFC 5280 CRLReason code'],
    ['an invalid revocation date', { revoked: [{ serial: 1n, revokedAt: new Date(Number.NaN) }] }, 'revoked[0] (serial 1) has no valid revocation date'],
    ['a missing revocation date', { revoked: [{ serial: 2n, revokedAt: null }] }, 'revoked[0] (serial 2) has no valid revocation date'],
  ] as const)('rejects %s with code 400', async (_name, override, message) => {
    const { signer } = await caSigner('ecdsa-p256');
    const options = { issuer: signer, crlNumber: 1n, nextUpdate: new Date(Date.now() + 60_000), revoked: [], ...override };
    await expect(buildCrl(options)).rejects.toMatchObject({ code: 400, message: expect.stringContaining(message) });
  });
});
