/**
 * The server's revocation on a real store (SQLite file, store on the test's thread): OCSP responses
 * signed at record time and at revocation, the CRL per label, other writers' revocations picked up
 * from the change feed, and the refresh over several CAs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CertificateRecord, Store } from '@certsmith/cert-store';
import { openStore } from '@certsmith/cert-store';
import { parseOcspResponse } from '@certsmith/revocation';
import type { Signer } from '@certsmith/signer-api';
import { createLocalSignerFromPem } from '@certsmith/signer-local';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadRevocationAuthorities } from './revocation-authorities.js';
import type { RevocationAuthorities } from './revocation-authorities.js';
import { RevocationService } from './revocation-service.js';
import type { RevocationSettings } from './revocation-settings.js';

const pki = new TestPki();
const ca = pki.root({ O: 'certsmith', CN: 'service CA' }, { key: 'ecdsa-p256', keyLabel: 'svc-ca' });
const otherCa = pki.root({ O: 'certsmith', CN: 'service foreign CA' }, { key: 'ecdsa-p256', keyLabel: 'svc-foreign' });
const leaves = Array.from({ length: 3 }, (_, index) => pki.leaf(`leaf${index}.service.test`, ca, { keyLabel: `svc-leaf-${index}` }));
const foreign = pki.leaf('foreign.service.test', otherCa, { keyLabel: 'svc-foreign-leaf' });
const logger = pino({ level: 'silent' });
const settings: RevocationSettings = {
  ocspIntervalMs: 4 * 3_600_000,
  ocspPath: null,
  nonces: 'ignore',
  responders: new Map(),
  crlValidityMs: 24 * 3_600_000,
  revokeAuthKey: null,
  revokeClientCn: null,
  changePollIntervalMs: 50,
};

let dir: string;
let store: Store;
let authorities: RevocationAuthorities;
let service: RevocationService;
const rows = new Map<TestCertificate, CertificateRecord>();

const localSigner = (certificate: TestCertificate): Signer => createLocalSignerFromPem(certificate.pem, certificate.key.pkcs8Pem);

async function statusOf(row: CertificateRecord): Promise<{ status: string; reason: number | null } | null> {
  const stored = await store.getOcspResponse(row.serial, row.authorityKeyId);
  if (stored === null) return null;
  const single = parseOcspResponse(stored.body).basic!.responses[0]!;
  return { status: single.status, reason: single.reason };
}

/** Poll `check` every 20 ms until it holds, at most `timeoutMs`. */
async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-revocation-service-'));
  authorities = await loadRevocationAuthorities({ signers: [{ label: 'default', signer: localSigner(ca) }], responders: new Map(), logger });
});
afterAll(async () => {
  await authorities.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  store = await openStore({ driver: 'sqlite3', dataSource: join(dir, `${Math.random().toString(36).slice(2)}.db`) }, { sqlite: { thread: false } });
  for (const leaf of [...leaves, foreign]) rows.set(leaf, await store.recordCertificate({ certificate: leaf.pem }));
  service = new RevocationService({ store, requestStore: store, authorities, settings, logger });
});
afterEach(async () => {
  await service.close();
  await store.close();
});

describe('RevocationService.signRecorded', () => {
  it('stores a good response for a certificate of its CA, none for another CA', async () => {
    await service.signRecorded(rows.get(leaves[0]!)!);
    await service.signRecorded(rows.get(foreign)!);
    expect(await statusOf(rows.get(leaves[0]!)!)).toEqual({ status: 'good', reason: null });
    expect(await statusOf(rows.get(foreign)!)).toBeNull();
  });
});

describe('RevocationService.revoke', () => {
  it('revokes the row, stores the revoked response and renews the CRL', async () => {
    const row = rows.get(leaves[1]!)!;
    const before = await service.crlFor(undefined);
    expect(before.entryCount).toBe(0);
    await service.revoke(row.serial, row.authorityKeyId, 1);
    expect(await statusOf(row)).toEqual({ status: 'revoked', reason: 1 });
    const after = await service.crlFor('default');
    expect(after.entryCount).toBe(1);
    expect(after.crlNumber).toBeGreaterThan(before.crlNumber);
  });

  it('answers 11200 for a key no row has (exact text, as CFSSL)', async () => {
    const row = rows.get(leaves[1]!)!;
    await expect(service.revoke(row.serial, row.authorityKeyId.toUpperCase(), 1)).rejects.toMatchObject({ code: 11200 });
  });

  it('serves the same CRL until something changes', async () => {
    const first = await service.crlFor(undefined);
    expect(await service.crlFor(undefined)).toBe(first);
  });

  it('refuses a label no signer has (5200)', () => {
    expect(() => service.crlFor('nope')).toThrow(expect.objectContaining({ code: 5200 }));
  });
});

describe('RevocationService change feed', () => {
  it('re-signs the response of a certificate another writer revoked (cfssl revoke, another instance)', async () => {
    const row = rows.get(leaves[2]!)!;
    await service.signRecorded(row);
    service.start();
    // Give the watch its starting point before changing anything (the store offers no event for it).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await store.revokeCertificate(row.serial, row.authorityKeyId, 4);
    await eventually(async () => (await statusOf(row))?.status === 'revoked');
    expect(await statusOf(row)).toEqual({ status: 'revoked', reason: 4 });
    await eventually(async () => (await service.crlFor(undefined)).entryCount === 1);
  });
});

describe('RevocationService without the background work (backgroundWork: false)', () => {
  it('follows another writer\'s revocation (CRL, response), but runs no refresh', async () => {
    const quiet = new RevocationService({ store, requestStore: store, authorities, settings, logger, backgroundWork: false });
    try {
      const row = rows.get(leaves[2]!)!;
      await quiet.signRecorded(row);
      expect((await quiet.crlFor(undefined)).entryCount).toBe(0);
      quiet.start();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await store.revokeCertificate(row.serial, row.authorityKeyId, 4);
      await eventually(async () => (await quiet.crlFor(undefined)).entryCount === 1);
      await eventually(async () => (await statusOf(row))?.status === 'revoked');
      // No refresh ran at start: the other leaves still have none.
      expect(await statusOf(rows.get(leaves[0]!)!)).toBeNull();
    } finally {
      await quiet.close();
    }
  });
});

describe('RevocationService.refresh', () => {
  it('re-signs a revoked certificate whose stored response still says good (a change it did not see)', async () => {
    const row = rows.get(leaves[0]!)!;
    await service.signRecorded(row);
    await store.revokeCertificate(row.serial, row.authorityKeyId, 9);
    const summary = await service.refresh();
    expect(summary.signed).toBeGreaterThanOrEqual(1);
    expect(await statusOf(row)).toEqual({ status: 'revoked', reason: 9 });
  });

  it('signs every missing or stale response of its CAs and skips other CAs without stopping', async () => {
    const summary = await service.refresh();
    expect(summary).toMatchObject({ signed: 3, failed: 0 });
    for (const leaf of leaves) expect(await statusOf(rows.get(leaf)!)).toEqual({ status: 'good', reason: null });
    expect(await statusOf(rows.get(foreign)!)).toBeNull();
    // Everything is fresh now: nothing to sign.
    expect((await service.refresh()).signed).toBe(0);
    // Half an interval later, every response is due again.
    expect((await service.refresh(new Date(Date.now() + settings.ocspIntervalMs / 2 + 3_600_000))).signed).toBe(3);
  });
});
