import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';

import type { CertIdHashAlgorithm } from './cert-id.js';
import { buildOcspResponse, ocspValidity } from './ocsp-response-builder.js';
import type { OcspCertStatus } from './ocsp-response-builder.js';
import { signOcspForRecord } from './ocsp-refresh.js';
import { ocspResponseTemplate } from './ocsp-response-template.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import type { RevocationSigner } from './revocation-signer.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { SerialNumber } from './serial-number.js';
import type { TestHierarchy } from './test-support/pki.js';
import { hierarchy, keySigner, openssl, scratch } from './test-support/pki.js';

const now = new Date();
const pki = new TestPki({ now });
const files = scratch();
afterAll(() => files.cleanup());

/**
 * `signer` whose signature is `length` bytes derived from what it signs: deterministic, so the two
 * builders' whole outputs compare byte for byte, and any length (the length fields around it).
 */
function fixedLengthSigner(signer: RevocationSigner, length: number): RevocationSigner {
  return {
    ...signer,
    async sign(tbs) {
      const out = new Uint8Array(length);
      const digest = createHash('sha512').update(tbs).digest();
      for (let i = 0; i < length; i++) out[i] = digest[i % digest.length]!;
      return out;
    },
  };
}

let ecdsa: TestHierarchy;
let rsa: TestHierarchy;
/** Identities by name: the CA itself, a delegated responder (with `certs`), and a byKey ResponderID. */
const identities = new Map<string, (signatureLength: number) => OcspSigningIdentity>();

beforeAll(async () => {
  ecdsa = hierarchy(pki, 'template-ecdsa', 'ecdsa-p256');
  rsa = hierarchy(pki, 'template-rsa', 'rsa-2048');
  for (const [name, h] of [['ecdsa', ecdsa], ['rsa', rsa]] as const) {
    const ca = await createRevocationSigner(keySigner(h.ca));
    const responder = await createRevocationSigner(keySigner(h.responder));
    identities.set(`${name} CA`, (length) => createOcspSigningIdentity({ signer: fixedLengthSigner(ca, length) }));
    identities.set(`${name} delegated responder`, (length) => createOcspSigningIdentity({ issuer: h.ca.der, signer: fixedLengthSigner(responder, length) }));
    identities.set(`${name} CA by key`, (length) => createOcspSigningIdentity({ signer: fixedLengthSigner(ca, length), responderId: 'key' }));
  }
});

const serials: SerialNumber[] = [
  0n,
  1n,
  127n,
  128n,
  255n,
  -1n,
  -129n,
  '564142266705163047067434699488539944656098241192',
  (1n << 159n) + 12345n, // 20 octets with the top bit set: a leading zero octet
  (1n << 1100n) - 1n, // long enough for two-octet lengths in the CertID, the SingleResponse and the ResponseData
];
const statuses: Array<{ status: OcspCertStatus; revokedAt?: Date; reason?: number }> = [
  { status: 'good' },
  { status: 'unknown' },
  { status: 'revoked', revokedAt: new Date(now.getTime() - 3_600_123), reason: 0 },
  { status: 'revoked', revokedAt: new Date(now.getTime() - 60_000), reason: 1 },
];
const times = [
  { thisUpdate: new Date('2026-11-26T19:00:00.999Z'), nextUpdate: new Date('2026-11-30T19:00:00.001Z'), producedAt: new Date('2026-11-26T19:41:00Z') },
  { thisUpdate: new Date('1969-12-31T23:59:59.500Z'), nextUpdate: null, producedAt: new Date('2049-12-31T23:59:59.999Z') },
  ocspValidity(now, 96 * 3_600_000),
];

describe('ocspResponseTemplate', () => {
  it("writes buildOcspResponse's bytes for every identity, hash, serial, status, time and signature length", async () => {
    let compared = 0;
    for (const [name, identityOf] of identities) {
      // ECDSA P-256 signatures are 70–72 octets; RSA 256; 0 and 130 cross the short/long length forms.
      for (const signatureLength of [0, 70, 72, 130, 256]) {
        const identity = identityOf(signatureLength);
        for (const hashAlgorithm of ['SHA1', 'SHA256', 'SHA512'] as CertIdHashAlgorithm[]) {
          const template = ocspResponseTemplate(identity, hashAlgorithm);
          for (const serialNumber of serials) {
            for (const status of statuses) {
              for (const time of times) {
                const expected = await buildOcspResponse({ identity, hashAlgorithm, serialNumber, ...status, ...time });
                const data = template.responseData({ serialNumber, ...status, ...time });
                const actual = template.response(data, await identity.signer.sign(data));
                if (Buffer.compare(actual, expected.der) !== 0) {
                  expect.fail(`${name}, ${signatureLength}-octet signature, ${hashAlgorithm}, serial ${serialNumber}, ${status.status}, ${time.thisUpdate.toISOString()}: bytes differ`);
                }
                compared += 1;
              }
            }
          }
        }
      }
    }
    expect(compared).toBe(6 * 5 * 3 * serials.length * statuses.length * times.length);
  });

  it('takes the serial as DER INTEGER content octets as well as decimal text', () => {
    const template = ocspResponseTemplate(identities.get('ecdsa CA')!(72));
    const time = times[0]!;
    expect(template.responseData({ serialNumber: Uint8Array.of(0x00, 0x8f, 0x01), status: 'good', ...time })).toEqual(
      template.responseData({ serialNumber: String(0x8f01), status: 'good', ...time }),
    );
  });

  it('is made once per identity and hash algorithm', () => {
    const identity = identities.get('rsa CA')!(256);
    expect(ocspResponseTemplate(identity)).toBe(ocspResponseTemplate(identity, 'SHA1'));
    expect(ocspResponseTemplate(identity, 'SHA256')).not.toBe(ocspResponseTemplate(identity));
  });

  it.each([
    ['nextUpdate before thisUpdate', { status: 'good' as const, thisUpdate: new Date('2026-01-02T00:00:00Z'), nextUpdate: new Date('2026-01-01T00:00:00Z') }],
    ['a revoked status without a date', { status: 'revoked' as const, thisUpdate: now, nextUpdate: null }],
    ['a reason that is not a CRLReason', { status: 'revoked' as const, revokedAt: now, reason: 7, thisUpdate: now, nextUpdate: null }],
    ['an unknown status', { status: 'held' as OcspCertStatus, thisUpdate: now, nextUpdate: null }],
  ])('refuses %s with the error buildOcspResponse throws', async (_what, fields) => {
    const identity = identities.get('ecdsa CA')!(72);
    const single = { serialNumber: 5n, producedAt: now, ...fields };
    const expected = await buildOcspResponse({ identity, ...single }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(expected).toBeInstanceOf(Error);
    expect(() => ocspResponseTemplate(identity).responseData(single)).toThrow(expected as Error);
  });
});

describe('signOcspForRecord', () => {
  it('signs a response openssl verifies, with the real ECDSA key of the CA', async () => {
    const identity = createOcspSigningIdentity({ signer: await createRevocationSigner(keySigner(ecdsa.ca)) });
    const serial = BigInt(`0x${ecdsa.leaf.serialHex}`).toString();
    const signed = await signOcspForRecord(identity, { serial, authorityKeyId: '', status: 'good', reason: 0, revokedAt: null }, { now });
    const caFile = files.file('ca.pem', ecdsa.ca.pem);
    const leafFile = files.file('leaf.pem', ecdsa.leaf.pem);
    const respFile = files.file('resp.der', signed.body);
    const result = openssl(['ocsp', '-respin', respFile, '-issuer', caFile, '-cert', leafFile, '-CAfile', caFile, '-no_nonce', '-resp_text']);
    expect(result.output).toContain('Response verify OK');
    expect(result.output).toMatch(/leaf\.pem: good/);
  });
});
