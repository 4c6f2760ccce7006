import { describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';

import { refreshOcspResponses, ocspStatusOf, signOcspForRecord } from './ocsp-refresh.js';
import { parseOcspResponse } from './ocsp-response-parser.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { CertificateStatusRecord, SignedOcspResponse } from './store-ports.js';
import { keySigner } from './test-support/pki.js';

const NOW = new Date('2026-11-25T23:27:06Z');

async function identityFor(name: string) {
  const ca = new TestPki().root(name, { key: 'ecdsa-p256', keyLabel: name });
  return createOcspSigningIdentity({ signer: await createRevocationSigner(keySigner(ca)) });
}

function row(authorityKeyId: string, serial: string, status = 'good', reason = 0, revokedAt: Date | null = null): CertificateStatusRecord {
  return { serial, authorityKeyId, status, reason, revokedAt };
}

describe('refreshOcspResponses', () => {
  it('signs each row with its own CA, skips rows of CAs it does not sign for, and stores nextUpdate as expiry', async () => {
    const a = await identityFor('refresh A');
    const b = await identityFor('refresh B');
    const identities = new Map([[a.signer.keyIdentifierHex, a], [b.signer.keyIdentifierHex, b]]);
    const saved: SignedOcspResponse[] = [];
    const result = await refreshOcspResponses({
      certificates: [
        row(a.signer.keyIdentifierHex, '1'),
        row('00ff', '2'),
        row(b.signer.keyIdentifierHex.toUpperCase(), '3', 'revoked', 1, new Date('2026-11-25T23:26:23Z')),
      ],
      identityFor: (aki) => identities.get(aki),
      save: async (record) => void saved.push(record),
      now: NOW,
    });
    expect(result).toEqual({ signed: 2, skipped: [{ serial: '2', authorityKeyId: '00ff' }], failed: [] });
    expect(saved.map((record) => record.expiry)).toEqual([new Date('2026-11-29T23:00:00Z'), new Date('2026-11-29T23:26:23Z')]);
    const revoked = parseOcspResponse(saved[1]!.body).basic!.responses[0]!;
    expect(revoked).toMatchObject({ status: 'revoked', reason: 1, revokedAt: new Date('2026-11-25T23:26:23Z'), nextUpdate: new Date('2026-11-29T23:26:23Z') });
  });

  it('records a failure and carries on (CFSSL aborts the run)', async () => {
    const a = await identityFor('refresh C');
    const result = await refreshOcspResponses({
      certificates: [row(a.signer.keyIdentifierHex, 'x'), row(a.signer.keyIdentifierHex, '5')],
      identityFor: () => a,
      save: async () => {},
      now: NOW,
    });
    expect(result.signed).toBe(1);
    expect(result.failed).toEqual([{ serial: 'x', authorityKeyId: a.signer.keyIdentifierHex, error: expect.objectContaining({ code: 400 }) }]);
  });
});

describe('ocspStatusOf', () => {
  it('maps rows to OCSP statuses (removeFromCRL is good again)', () => {
    expect(ocspStatusOf(row('aa', '1', 'revoked', 8, NOW)).status).toBe('good');
    expect(ocspStatusOf(row('aa', '1', 'revoked', 6, NOW))).toEqual({ status: 'revoked', reason: 6, revokedAt: NOW });
    expect(ocspStatusOf(row('aa', '1', 'unknown')).status).toBe('unknown');
  });
});

describe('signOcspForRecord', () => {
  it('returns the row to upsert under the row key', async () => {
    const a = await identityFor('refresh D');
    const record = await signOcspForRecord(a, row(a.signer.keyIdentifierHex, '77'), { now: NOW, intervalMs: 3_600_000 });
    expect(record).toMatchObject({ serial: '77', authorityKeyId: a.signer.keyIdentifierHex, expiry: new Date('2026-11-26T00:00:00Z') });
    expect(parseOcspResponse(record.body).basic!.responses[0]!.certId.serialNumber).toEqual(Uint8Array.of(77));
  });
});
