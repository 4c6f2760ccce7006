import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, serialToDecimal } from '@certsmith/cert-store';
import type { Store } from '@certsmith/cert-store';
import { createLogger, storeForRequests } from '@certsmith/http-api';
import type { CertificateStatusRecord } from '@certsmith/revocation';
import { TestPki } from '@certsmith/test-pki';
import { CertsmithError, toHex } from '@certsmith/x509-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issuedCertificateFields } from '@certsmith/cert-store';
import { createIssuedRecorder, issuedRecordingWorkerHook } from './issued-recording.js';
import type { IssuedRecordingAttachment } from './issued-recording-worker.js';
import type { IssuanceOcspSigner } from './issued-recording.js';

const pki = new TestPki();
const root = pki.root({ CN: 'Recorder Root' }, { key: 'ecdsa-p256' });
const aki = toHex(root.subjectKeyId!);
const issued = (name: string, label = 'default') => {
  const leaf = pki.leaf(name, root, { key: 'ecdsa-p256' });
  return { serial: serialToDecimal(leaf.serialHex.toLowerCase()), record: { label, profile: '', certificateDer: leaf.der, certificatePem: leaf.pem } };
};
const silent = createLogger({ level: 'silent' });

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-issued-recording-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  store = await openStore({ driver: 'sqlite3', dataSource: join(dir, `${Math.random().toString(36).slice(2)}.db`) }, { sqlite: { thread: false } });
});
afterEach(async () => {
  await store.close();
});

/** An OCSP signer that answers fixed bytes for its CA and remembers what it signed and saw recorded. */
function fakeOcsp(options: { signsFor?: string; fails?: Error } = {}): IssuanceOcspSigner & { signed: CertificateStatusRecord[]; recordedKeys: string[] } {
  const signed: CertificateStatusRecord[] = [];
  const recordedKeys: string[] = [];
  return {
    signed,
    recordedKeys,
    async signStatus(record) {
      if (options.fails) throw options.fails;
      if (record.authorityKeyId !== (options.signsFor ?? aki)) return null;
      signed.push(record);
      return { serial: record.serial, authorityKeyId: record.authorityKeyId, body: Uint8Array.from([0x30, 0x03, 0x0a, 0x01, 0x00]), expiry: new Date(Date.now() + 86_400_000) };
    },
    recorded(serial, authorityKeyId) {
      recordedKeys.push(`${authorityKeyId}:${serial}`);
    },
  };
}

describe('createIssuedRecorder', () => {
  it('records the row with the signer label, and no OCSP response without a signer for it', async () => {
    const { serial, record } = issued('plain.example', 'web');
    await createIssuedRecorder({ store })(record);
    expect(await store.getCertificate(serial, aki)).toMatchObject({ label: 'web', status: 'good', commonName: 'plain.example', sans: ['plain.example'], metadata: null });
    expect(await store.getOcspResponse(serial, aki)).toBeNull();
  });

  it('stores the first OCSP response ("good") with the row, then drops the cached answer', async () => {
    const ocsp = fakeOcsp();
    const recordIssued = createIssuedRecorder({ store, ocsp });
    const certificates = [issued('a.example'), issued('b.example', 'b')];
    await Promise.all(certificates.map(({ record }) => recordIssued(record)));
    for (const { serial } of certificates) {
      expect(await store.getCertificate(serial, aki)).not.toBeNull();
      expect((await store.getOcspResponse(serial, aki))?.body).toEqual(Uint8Array.from([0x30, 0x03, 0x0a, 0x01, 0x00]));
    }
    expect(ocsp.signed.map((entry) => ({ ...entry, serial: '' }))).toEqual(certificates.map(() => ({ serial: '', authorityKeyId: aki, status: 'good', reason: 0, revokedAt: null })));
    expect(ocsp.recordedKeys.sort()).toEqual(certificates.map(({ serial }) => `${aki}:${serial}`).sort());
  });

  it('records the row alone when this server does not sign OCSP for the CA', async () => {
    const { serial, record } = issued('other-ca.example');
    await createIssuedRecorder({ store, ocsp: fakeOcsp({ signsFor: 'ff'.repeat(20) }) })(record);
    expect(await store.getCertificate(serial, aki)).not.toBeNull();
    expect(await store.getOcspResponse(serial, aki)).toBeNull();
  });

  it('records nothing and fails with the signer error when the OCSP response cannot be signed', async () => {
    const { serial, record } = issued('signer-down.example');
    const error = await createIssuedRecorder({ store, ocsp: fakeOcsp({ fails: new CertsmithError(2500, 'signer "default" did not answer') }) })(record).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 2500 });
    expect(await store.getCertificate(serial, aki)).toBeNull();
  });

  it('fails with 503 and Retry-After, the fixed message, when the store is unavailable', async () => {
    const requestStore = storeForRequests(store, silent);
    await store.close();
    const error = await createIssuedRecorder({ store: requestStore, ocsp: fakeOcsp() })(issued('down.example').record).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 503, message: 'the certificate store is unavailable; retry later', retryAfterSeconds: 1 });
  });

  it("records a worker's fields and OCSP response as they come, signing nothing here", async () => {
    const { serial, record } = issued('worker.example', 'web');
    const ocsp = fakeOcsp();
    const body = Uint8Array.from([0x30, 0x03, 0x0a, 0x01, 0x01]);
    const attachment: IssuedRecordingAttachment = { kind: 'issued-recording', fields: issuedCertificateFields(record.certificateDer), ocspResponse: { body, expiry: new Date(Date.now() + 3_600_000) } };
    await createIssuedRecorder({ store, ocsp })({ ...record, attachment: structuredClone(attachment) });
    expect(await store.getCertificate(serial, aki)).toMatchObject({ label: 'web', status: 'good', commonName: 'worker.example', sans: ['worker.example'], pem: record.certificatePem });
    expect((await store.getOcspResponse(serial, aki))?.body).toEqual(body);
    expect(ocsp.signed).toEqual([]);
    expect(ocsp.recordedKeys).toEqual([`${aki}:${serial}`]);
  });

  it("signs here the response of a worker's certificate the worker did not sign for (a delegated responder)", async () => {
    const { serial, record } = issued('delegated.example');
    const ocsp = fakeOcsp();
    const attachment: IssuedRecordingAttachment = { kind: 'issued-recording', fields: issuedCertificateFields(record.certificateDer), ocspResponse: null };
    await createIssuedRecorder({ store, ocsp })({ ...record, attachment });
    expect(ocsp.signed).toEqual([{ serial, authorityKeyId: aki, status: 'good', reason: 0, revokedAt: null }]);
    expect((await store.getOcspResponse(serial, aki))?.body).toEqual(Uint8Array.from([0x30, 0x03, 0x0a, 0x01, 0x00]));
  });

  it("records a worker's fields without OCSP when the server signs none at issuance", async () => {
    const { serial, record } = issued('rows-only.example', 'rows');
    await createIssuedRecorder({ store })({ ...record, attachment: { kind: 'issued-recording', fields: issuedCertificateFields(record.certificateDer), ocspResponse: null } });
    expect(await store.getCertificate(serial, aki)).toMatchObject({ label: 'rows', commonName: 'rows-only.example' });
    expect(await store.getOcspResponse(serial, aki)).toBeNull();
  });

  it('fails a duplicate with the store code (11000), keeping the first row', async () => {
    const { serial, record } = issued('twice.example', 'first');
    const recordIssued = createIssuedRecorder({ store });
    await recordIssued(record);
    await expect(recordIssued({ ...record, label: 'second' })).rejects.toMatchObject({ code: 11000 });
    expect(await store.getCertificate(serial, aki)).toMatchObject({ label: 'first' });
  });
});

describe('issuedRecordingWorkerHook', () => {
  const der = (value: number) => Uint8Array.of(value);
  /** An authority as the hook reads it: its CA certificate, and who signs its OCSP responses. */
  const authority = (label: string, keyIdentifier: string, ca: Uint8Array, ocsp: { delegated: boolean; certificate: Uint8Array }) => ({
    label,
    keyIdentifier,
    ca: { certificate: { der: ca } },
    ocsp: { delegated: ocsp.delegated, signer: { certificate: { der: ocsp.certificate } } },
  });
  const entry = (label: string, recreated: boolean) => ({ label, ...(recreated ? { workerRecipe: { module: 'x', options: {}, configDir: '/' } } : {}) });

  it('lets the workers sign for labels whose CA signs its own responses with the certificate they hold', () => {
    const all = [
      authority('default', 'aa', der(1), { delegated: false, certificate: der(1) }),
      authority('hsm', 'bb', der(2), { delegated: false, certificate: der(2) }),
      authority('delegated', 'cc', der(3), { delegated: true, certificate: der(9) }),
      // Shares the default CA's key but with another certificate: the service signs as `default`.
      authority('reissued', 'aa', der(4), { delegated: false, certificate: der(4) }),
      authority('same-ca', 'aa', der(1), { delegated: false, certificate: der(1) }),
    ];
    const authorities = {
      byLabel: (label: string) => all.find((candidate) => candidate.label === label),
      byKeyIdentifier: (key: string) => all.find((candidate) => candidate.keyIdentifier === key),
    } as unknown as Parameters<typeof issuedRecordingWorkerHook>[0]['authorities'];
    const signers = [entry('default', true), entry('hsm', false), entry('delegated', true), entry('reissued', true), entry('same-ca', true), entry('remote', true)];
    const spec = issuedRecordingWorkerHook({ signers: signers as never, authorities, ocspIntervalMs: 7_200_000 });
    expect(spec.data).toEqual({ ocspLabels: ['default', 'same-ca'], ocspIntervalMs: 7_200_000 });
    expect(String(spec.module)).toMatch(/issued-recording-worker\.(ts|js)$/);
    expect(issuedRecordingWorkerHook({ signers: signers as never, authorities: null, ocspIntervalMs: 1 }).data).toEqual({ ocspLabels: [], ocspIntervalMs: 1 });
  });
});
