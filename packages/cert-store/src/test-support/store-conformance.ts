/**
 * Behaviour every {@link Store} implementation must have, run against each driver on a real
 * database (a SQLite file, a throwaway PostgreSQL cluster).
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../store.js';
import { parseCertificate } from '@certsmith/x509-core';
import { serialToDecimal } from '../certificate-row.js';
import type { CertificateChange } from '../model.js';
import { testIssuer } from './certificates.js';
import { iterateCertificateSummaries, iterateCertificates, iterateOcspResponses } from '../iterate.js';
import { certificateRecordJson } from '../record-json.js';

/** Opens a fresh, migrated, empty store for one test. */
export type StoreFactory = () => Promise<Store>;

const DAY = 86_400_000;

async function expectCode(promise: Promise<unknown>, code: number): Promise<Error & { code: number }> {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as (Error & { code: number }) | null;
  expect(error, 'expected a rejection').not.toBeNull();
  expect(error!.code).toBe(code);
  return error!;
}

export function describeStoreConformance(driver: string, open: StoreFactory): void {
  const issuer = testIssuer(`${driver} Conformance CA`);

  describe(`${driver}: recordCertificate`, () => {
    it('writes CFSSL signer values and reads them back', async () => {
      const store = await open();
      try {
        const leaf = issuer.leaf('record.example', { dns: ['record.example', 'www.record.example'] });
        const before = Date.now();
        const record = await store.recordCertificate({ certificate: leaf.pem, label: 'primary' });
        expect(record.serial).toBe(serialToDecimal(leaf.serialHex));
        expect(record.authorityKeyId).toBe(issuer.akiHex);
        const stored = await store.getCertificate(record.serial, issuer.akiHex);
        expect(stored).not.toBeNull();
        expect(stored!).toMatchObject({
          label: 'primary',
          status: 'good',
          reason: 0,
          revokedAt: null,
          pem: leaf.pem,
          sans: ['record.example', 'www.record.example'],
          commonName: 'record.example',
          metadata: null,
        });
        expect(stored!.expiry!.getTime()).toBe(leaf.notAfter.getTime());
        expect(stored!.notBefore!.getTime()).toBe(leaf.notBefore.getTime());
        expect(stored!.issuedAt!.getTime()).toBeGreaterThanOrEqual(before - 1);
      } finally {
        await store.close();
      }
    });

    it('accepts DER and records an empty label as ""', async () => {
      const store = await open();
      try {
        const leaf = issuer.leaf('der.example');
        const record = await store.recordCertificate({ certificate: leaf.der });
        expect((await store.getCertificate(record.serial, record.authorityKeyId))!.label).toBe('');
      } finally {
        await store.close();
      }
    });

    it('accepts a certificate the caller has already parsed, and stores it as that certificate', async () => {
      const store = await open();
      try {
        const leaf = issuer.leaf('parsed.example', { dns: ['parsed.example'] });
        const record = await store.recordCertificate({ certificate: parseCertificate(leaf.der), label: 'parsed' });
        expect(record.serial).toBe(serialToDecimal(leaf.serialHex));
        expect(await store.getCertificate(record.serial, issuer.akiHex)).toMatchObject({ label: 'parsed', pem: leaf.pem, sans: ['parsed.example'] });
      } finally {
        await store.close();
      }
    });

    it('commits the records of one turn together and fails only a duplicate, with 11000', async () => {
      const store = await open();
      try {
        const leaves = Array.from({ length: 20 }, (_, i) => issuer.leaf(`batch${i}.example`));
        const results = await Promise.allSettled([
          ...leaves.map((leaf) => store.recordCertificate({ certificate: leaf.pem, label: 'batch' })),
          store.recordCertificate({ certificate: leaves[3]!.pem, label: 'batch' }),
        ]);
        expect(results.slice(0, 20).every((r) => r.status === 'fulfilled')).toBe(true);
        const duplicate = results[20]!;
        expect(duplicate.status).toBe('rejected');
        expect((duplicate as PromiseRejectedResult).reason.code).toBe(11000);
        const page = await store.listCertificates({ label: 'batch', limit: 1000 });
        expect(page.certificates).toHaveLength(20);
      } finally {
        await store.close();
      }
    });

    it('writes the OCSP response given with a record in its transaction, and none with a failed record', async () => {
      const store = await open();
      try {
        const leaves = Array.from({ length: 6 }, (_, i) => issuer.leaf(`ocsp-at-issue${i}.example`));
        // Bytes with NULs and high bits: stored as given, as upsertOcspResponse stores them.
        const bodyOf = (i: number): Uint8Array => Uint8Array.from([0x30, 0x00, 0xff, i, 0x00]);
        const expiry = new Date(Date.now() + DAY);
        const results = await Promise.allSettled([
          ...leaves.map((leaf, i) =>
            store.recordCertificate({ certificate: leaf.pem, label: 'ocsp', ...(i === 5 ? {} : { ocspResponse: { body: bodyOf(i), expiry } }) }),
          ),
          // A duplicate of leaf 2 in the same turn: it fails alone, and its (different) response is not written.
          store.recordCertificate({ certificate: leaves[2]!.pem, label: 'ocsp', ocspResponse: { body: Uint8Array.from([9, 9, 9]), expiry } }),
        ]);
        expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
        for (const [i, leaf] of leaves.entries()) {
          const response = await store.getOcspResponse(serialToDecimal(leaf.serialHex), issuer.akiHex);
          if (i === 5) {
            expect(response).toBeNull();
          } else {
            expect(Buffer.from(response!.body).equals(Buffer.from(bodyOf(i)))).toBe(true);
            expect(response!.expiry!.getTime()).toBe(expiry.getTime());
          }
        }
      } finally {
        await store.close();
      }
    });

    it('refuses input that is not a certificate with a coded error', async () => {
      const store = await open();
      try {
        await expectCode(store.recordCertificate({ certificate: 'not a certificate' }), 1002);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: insertCertificate, getCertificate, findCertificate`, () => {
    it('stores certadd rows as given; exact lookups need the exact text, find normalises the AKI', async () => {
      const store = await open();
      try {
        const leaf = issuer.leaf('certadd.example');
        const serial = serialToDecimal(leaf.serialHex);
        const upper = issuer.akiHex.toUpperCase();
        await store.insertCertificate({ serial, authorityKeyId: upper, status: 'good', expiry: leaf.notAfter, pem: leaf.pem });
        const row = await store.getCertificate(serial, upper);
        expect(row).toMatchObject({ authorityKeyId: upper, label: '', commonName: null, metadata: {}, sans: [] });
        expect(await store.getCertificate(serial, issuer.akiHex)).toBeNull();
        // A second row beside the upper-case one, as CFSSL allows.
        await store.insertCertificate({ serial, authorityKeyId: issuer.akiHex, status: 'good', expiry: leaf.notAfter, pem: leaf.pem });
        const colonHex = upper.match(/../g)!.join(':');
        expect((await store.findCertificate(serial, colonHex))!.authorityKeyId).toBe(issuer.akiHex);
        await expectCode(
          store.insertCertificate({ serial, authorityKeyId: issuer.akiHex, status: 'good', expiry: leaf.notAfter, pem: leaf.pem }),
          11000,
        );
      } finally {
        await store.close();
      }
    });

    it("finds a CFSSL 1.2.0 row (empty AKI) by the certificate's real AKI", async () => {
      const store = await open();
      try {
        const leaf = issuer.leaf('old.example');
        const serial = serialToDecimal(leaf.serialHex);
        await store.insertCertificate({ serial, authorityKeyId: '', status: 'good', expiry: leaf.notAfter, pem: leaf.pem });
        expect((await store.findCertificate(serial, issuer.akiHex))!.authorityKeyId).toBe('');
        expect(await store.findCertificate(serial, 'deadbeef')).toBeNull();
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: revokeCertificate`, () => {
    it('revokes on the exact key, overwrites on a second revoke, and answers 11200 otherwise', async () => {
      const store = await open();
      try {
        const record = await store.recordCertificate({ certificate: issuer.leaf('revoke.example').pem, label: 'r' });
        const revoked = await store.revokeCertificate(record.serial, record.authorityKeyId, 1);
        expect(revoked).toMatchObject({ status: 'revoked', reason: 1 });
        expect(revoked.revokedAt).toBeInstanceOf(Date);
        expect(Math.abs(revoked.revokedAt!.getTime() - Date.now())).toBeLessThan(60_000);
        expect((await store.revokeCertificate(record.serial, record.authorityKeyId, 4)).reason).toBe(4);
        const notFound = await expectCode(store.revokeCertificate(record.serial, record.authorityKeyId.toUpperCase(), 1), 11200);
        expect(notFound.message).toBe('failed to revoke the certificate: certificate not found');
        await expectCode(store.revokeCertificate('1', record.authorityKeyId, 1.5), 400);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: listCertificates`, () => {
    it('pages through every row once, in expiry order, with a stable cursor', async () => {
      const store = await open();
      try {
        const now = Date.now();
        for (let i = 0; i < 230; i += 1) {
          const leaf = issuer.leaf(`page${i}.example`);
          await store.insertCertificate({
            serial: serialToDecimal(leaf.serialHex),
            authorityKeyId: issuer.akiHex,
            status: 'good',
            // Many rows share an expiry, so the tie-breakers are exercised.
            expiry: new Date(now + (i % 7) * DAY),
            pem: leaf.pem,
            label: 'paged',
          });
        }
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        let previous = -Infinity;
        do {
          const page = await store.listCertificates({ label: 'paged', limit: 100, ...(cursor === undefined ? {} : { cursor }) });
          for (const c of page.certificates) {
            expect(c.expiry!.getTime()).toBeGreaterThanOrEqual(previous);
            previous = c.expiry!.getTime();
            seen.push(c.serial);
          }
          cursor = page.nextCursor ?? undefined;
          pages += 1;
        } while (cursor !== undefined && pages < 10);
        expect(pages).toBe(3);
        expect(new Set(seen).size).toBe(230);
        const iterated: string[] = [];
        for await (const c of iterateCertificates(store, { label: 'paged', limit: 64 })) iterated.push(c.serial);
        expect(iterated).toEqual(seen);
        const first = await store.listCertificates({ label: 'paged', limit: 10 });
        await expectCode(store.listCertificates({ label: 'other', cursor: first.nextCursor! }), 400);
        await expectCode(store.listCertificates({ cursor: 'garbage' }), 400);
        await expectCode(store.listCertificates({ limit: 0 }), 400);
        await expectCode(store.listCertificates({ limit: 1001 }), 400);
      } finally {
        await store.close();
      }
    });

    it('filters by label, status, CN or SAN, AKI and expiry window', async () => {
      const store = await open();
      try {
        const now = Date.now();
        const soon = await store.recordCertificate({
          certificate: issuer.leaf('soon.example', { dns: ['soon.example', 'alias.example'], notAfter: new Date(now + 5 * DAY) }).pem,
          label: 'a',
        });
        const later = await store.recordCertificate({
          certificate: issuer.leaf('later.example', { notAfter: new Date(now + 90 * DAY) }).pem,
          label: 'b',
        });
        await store.revokeCertificate(later.serial, later.authorityKeyId, 1);
        const serials = async (options: Parameters<Store['listCertificates']>[0]) =>
          (await store.listCertificates(options)).certificates.map((c) => c.serial);
        expect(await serials({ label: 'a' })).toEqual([soon.serial]);
        expect(await serials({ status: 'revoked' })).toEqual([later.serial]);
        expect(await serials({ name: 'alias.example' })).toEqual([soon.serial]);
        expect(await serials({ name: 'later.example' })).toEqual([later.serial]);
        expect(await serials({ name: 'nobody.example' })).toEqual([]);
        expect(await serials({ authorityKeyId: issuer.akiHex })).toEqual([soon.serial, later.serial]);
        expect(await serials({ expiresBefore: new Date(now + 30 * DAY) })).toEqual([soon.serial]);
        expect(await serials({ expiresAfter: new Date(now + 30 * DAY) })).toEqual([later.serial]);
        expect(await serials({ label: 'a', status: 'revoked' })).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('lists summaries and JSON pages: the same rows, order and cursors as the records, without the PEM unless asked', async () => {
      const store = await open();
      try {
        const now = Date.now();
        for (let i = 0; i < 25; i += 1) {
          const record = await store.recordCertificate({
            certificate: issuer.leaf(`summary${i}.example`, { dns: [`summary${i}.example`, `alias${i}.example`], notAfter: new Date(now + (1 + (i % 4)) * DAY) }).pem,
            label: i % 2 === 0 ? 'even' : 'odd',
          });
          if (i % 5 === 0) await store.revokeCertificate(record.serial, record.authorityKeyId, 4);
        }
        const filters: Array<Parameters<Store['listCertificates']>[0]> = [
          {},
          { limit: 7 },
          { label: 'odd', limit: 4 },
          { status: 'revoked' },
          { name: 'alias3.example' },
          { authorityKeyId: issuer.akiHex, expiresAfter: new Date(now + 1.5 * DAY), expiresBefore: new Date(now + 3.5 * DAY) },
        ];
        for (const options of filters) {
          const records = await store.listCertificates(options);
          const summaries = await store.listCertificateSummaries(options);
          expect(records.certificates.length).toBeGreaterThan(0);
          expect(summaries.certificates).toEqual(records.certificates.map(({ pem: _pem, ...summary }) => summary));
          for (const summary of summaries.certificates) expect(summary).not.toHaveProperty('pem');
          expect(summaries.nextCursor).toBe(records.nextCursor);
          const json = await store.listCertificatesJson(options);
          expect(JSON.parse(json.certificatesJson)).toEqual(JSON.parse(JSON.stringify(records.certificates.map((record) => certificateRecordJson(record)))));
          expect(json.nextCursor).toBe(records.nextCursor);
          const withPem = await store.listCertificatesJson(options, true);
          expect(JSON.parse(withPem.certificatesJson)).toEqual(JSON.parse(JSON.stringify(records.certificates.map((record) => certificateRecordJson(record, record.pem)))));
        }
        // A listed row is the row a lookup reads, column for column (revoked rows included).
        const everyRow = await store.listCertificates({ limit: 25 });
        expect(everyRow.certificates).toHaveLength(25);
        for (const record of everyRow.certificates) expect(record).toEqual(await store.getCertificate(record.serial, record.authorityKeyId));
        // A cursor of one listing continues the other.
        const first = await store.listCertificateSummaries({ label: 'even', limit: 5 });
        const next = await store.listCertificates({ label: 'even', limit: 5, cursor: first.nextCursor! });
        const nextSummaries = await store.listCertificateSummaries({ label: 'even', limit: 5, cursor: first.nextCursor! });
        expect(next.certificates.map((c) => c.serial)).toEqual(nextSummaries.certificates.map((c) => c.serial));
        expect(next.certificates.map((c) => c.serial)).not.toContain(first.certificates[0]!.serial);
        const iterated: string[] = [];
        for await (const summary of iterateCertificateSummaries(store, { limit: 6 })) iterated.push(summary.serial);
        const all: string[] = [];
        for await (const record of iterateCertificates(store, { limit: 9 })) all.push(record.serial);
        expect(iterated).toEqual(all);
        expect(all).toHaveLength(25);
        await expectCode(store.listCertificateSummaries({ label: 'odd', cursor: first.nextCursor! }), 400);
        await expectCode(store.listCertificateSummaries({ limit: 0 }), 400);
        await expectCode(store.listCertificatesJson({ cursor: 'garbage' }), 400);
        expect((await store.listCertificatesJson({ label: 'even', limit: 5, cursor: first.nextCursor! })).certificatesJson).toContain(`"${next.certificates[0]!.serial}"`);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: tidy`, () => {
    it('removes certificates expired longer than the buffer, with their OCSP responses, never an unexpired revoked one', async () => {
      const store = await open();
      try {
        const now = Date.now();
        const row = (name: string, expiry: number, status = 'good') => {
          const leaf = issuer.leaf(name);
          return {
            serial: serialToDecimal(leaf.serialHex),
            authorityKeyId: issuer.akiHex,
            status,
            expiry: new Date(expiry),
            pem: leaf.pem,
            ...(status === 'revoked' ? { revokedAt: new Date(now - DAY), reason: 1 } : {}),
          };
        };
        const old = row('old.example', now - 10 * DAY);
        const recent = row('recent.example', now - DAY);
        const revokedValid = row('revoked.example', now + 10 * DAY, 'revoked');
        const revokedOld = row('revoked-old.example', now - 5 * DAY, 'revoked');
        for (const r of [old, recent, revokedValid, revokedOld]) await store.insertCertificate(r);
        await store.upsertOcspResponse({ serial: old.serial, authorityKeyId: old.authorityKeyId, body: new Uint8Array([0x30, 0]), expiry: new Date(now) });
        const result = await store.tidy({ batchSize: 1 });
        expect(result).toMatchObject({ certificates: 2, ocspResponses: 1 });
        expect(await store.getCertificate(old.serial, old.authorityKeyId)).toBeNull();
        expect(await store.getOcspResponse(old.serial, old.authorityKeyId)).toBeNull();
        expect(await store.getCertificate(recent.serial, recent.authorityKeyId)).not.toBeNull();
        expect(await store.getCertificate(revokedValid.serial, revokedValid.authorityKeyId)).not.toBeNull();
        expect(await store.getCertificate(revokedOld.serial, revokedOld.authorityKeyId)).toBeNull();
        await expectCode(store.tidy({ bufferMs: -1 }), 400);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: countCertificates, countExpiring`, () => {
    it('counts by label and status, and unrevoked certificates expiring within 30 days by label', async () => {
      const store = await open();
      try {
        const now = Date.now();
        await store.recordCertificate({ certificate: issuer.leaf('c1.example', { notAfter: new Date(now + 10 * DAY) }).pem, label: 'x' });
        await store.recordCertificate({ certificate: issuer.leaf('c2.example', { notAfter: new Date(now + 100 * DAY) }).pem, label: 'x' });
        const r = await store.recordCertificate({ certificate: issuer.leaf('c3.example', { notAfter: new Date(now + 10 * DAY) }).pem, label: 'y' });
        await store.revokeCertificate(r.serial, r.authorityKeyId, 1);
        const counts = await store.countCertificates();
        expect(counts.sort((a, b) => (a.label + a.status < b.label + b.status ? -1 : 1))).toEqual([
          { label: 'x', status: 'good', count: 2 },
          { label: 'y', status: 'revoked', count: 1 },
        ]);
        expect(await store.countExpiring()).toEqual([{ label: 'x', count: 1 }]);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: OCSP responses`, () => {
    it('upserts, reads back the exact DER (NUL bytes included) and lists by expiry', async () => {
      const store = await open();
      try {
        const record = await store.recordCertificate({ certificate: issuer.leaf('ocsp.example').pem });
        const body = new Uint8Array([0x30, 0x82, 0x00, 0x03, 0x0a, 0x01, 0x00, 0xff, 0x00]);
        const expiry = new Date(Date.now() + DAY);
        await store.upsertOcspResponse({ serial: record.serial, authorityKeyId: record.authorityKeyId, body, expiry });
        const updated = new Uint8Array([...body, 0x00, 0x01]);
        await store.upsertOcspResponse({ serial: record.serial, authorityKeyId: record.authorityKeyId, body: updated, expiry });
        const stored = await store.getOcspResponse(record.serial, record.authorityKeyId);
        expect(Buffer.from(stored!.body).equals(Buffer.from(updated))).toBe(true);
        expect(stored!.expiry!.getTime()).toBe(expiry.getTime());
        expect((await store.listOcspResponses({ expiresAfter: new Date() })).responses).toHaveLength(1);
        const iterated = [];
        for await (const r of iterateOcspResponses(store, { expiresAfter: new Date(), limit: 1 })) iterated.push(r.serial);
        expect(iterated).toEqual([record.serial]);
        expect((await store.listOcspResponses({ expiresAfter: new Date(Date.now() + 2 * DAY) })).responses).toHaveLength(0);
        expect(await store.getOcspResponse(record.serial, 'ff')).toBeNull();
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: nextCrlNumber`, () => {
    it('grows by one per call and issuer, also under concurrent calls', async () => {
      const store = await open();
      try {
        expect(await store.nextCrlNumber('aa')).toBe(1n);
        expect(await store.nextCrlNumber('aa')).toBe(2n);
        expect(await store.nextCrlNumber('bb')).toBe(1n);
        const numbers = await Promise.all(Array.from({ length: 20 }, () => store.nextCrlNumber('aa')));
        expect(new Set(numbers).size).toBe(20);
        expect(numbers.reduce((max, n) => (n > max ? n : max), 0n)).toBe(22n);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: watchChanges`, () => {
    it('reports a revocation and a revoked certadd row, in order', async () => {
      const store = await open();
      try {
        const record = await store.recordCertificate({ certificate: issuer.leaf('watch.example').pem, label: 'w' });
        const changes: CertificateChange[] = [];
        let notify: () => void = () => undefined;
        const twoSeen = new Promise<void>((resolve) => (notify = () => changes.length >= 2 && resolve()));
        const watch = store.watchChanges(
          (change) => {
            changes.push(change);
            notify();
          },
          { pollIntervalMs: 50 },
        );
        try {
          // Give the watch its starting point before changing anything.
          await new Promise((resolve) => setTimeout(resolve, 200));
          await store.revokeCertificate(record.serial, record.authorityKeyId, 1);
          const leaf = issuer.leaf('watch-added.example');
          await store.insertCertificate({
            serial: serialToDecimal(leaf.serialHex),
            authorityKeyId: issuer.akiHex,
            status: 'revoked',
            reason: 4,
            revokedAt: new Date(),
            expiry: leaf.notAfter,
            pem: leaf.pem,
          });
          await twoSeen;
        } finally {
          await watch.close();
        }
        expect(changes[0]).toMatchObject({ serial: record.serial, authorityKeyId: record.authorityKeyId, label: 'w', status: 'revoked', reason: 1 });
        expect(changes[1]).toMatchObject({ status: 'revoked', reason: 4 });
        expect(changes[1]!.id).toBeGreaterThan(changes[0]!.id);
      } finally {
        await store.close();
      }
    });
    it("delivers the store's own status changes to its watches at once, without waiting for the poll", async () => {
      const store = await open();
      try {
        const [first, second] = await Promise.all(
          ['own-1.example', 'own-2.example'].map(async (name) => await store.recordCertificate({ certificate: issuer.leaf(name).pem, label: 'own' })),
        );
        const added = issuer.leaf('own-added.example');
        const changes: CertificateChange[] = [];
        let waiting: { count: number; resolve: () => void } | null = null;
        const seen = (count: number) =>
          new Promise<void>((resolve) => {
            if (changes.length >= count) resolve();
            else waiting = { count, resolve };
          });
        // A poll interval no test waits for: every change after the first poll must come from the
        // store's own wake-up, or the test times out.
        const watch = store.watchChanges(
          (change) => {
            changes.push(change);
            if (waiting !== null && changes.length >= waiting.count) waiting.resolve();
          },
          { pollIntervalMs: 3_600_000, afterId: 0 },
        );
        try {
          await store.revokeCertificate(first!.serial, first!.authorityKeyId, 1);
          // Delivered by the first poll or by the wake-up; either way a poll ran after it committed.
          await seen(1);
          await store.revokeCertificate(second!.serial, second!.authorityKeyId, 4);
          await seen(2);
          await store.insertCertificate({ serial: serialToDecimal(added.serialHex), authorityKeyId: issuer.akiHex, status: 'revoked', reason: 5, revokedAt: new Date(), expiry: added.notAfter, pem: added.pem });
          await seen(3);
        } finally {
          await watch.close();
        }
        expect(changes.map((change) => [change.serial, change.reason])).toEqual([
          [first!.serial, 1],
          [second!.serial, 4],
          [serialToDecimal(added.serialHex), 5],
        ]);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: close`, () => {
    it('waits for pending records and then refuses calls', async () => {
      const store = await open();
      const pending = store.recordCertificate({ certificate: issuer.leaf('closing.example').pem });
      await store.close();
      await expect(pending).resolves.toMatchObject({ status: 'good' });
      await expectCode(store.ping(), 503);
    });
  });
}
