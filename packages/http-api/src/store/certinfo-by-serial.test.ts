import { certinfoTask, describeCertificatePem } from '@certsmith/bundler';
import type { Store } from '@certsmith/cert-store';
import { serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertinfoOperation } from '../certinfo-operation.js';
import { memoryStore, serveApp } from '../test-support/store-app.js';
import type { ServedApp } from '../test-support/store-app.js';
import { createInlineTaskRunner } from '@certsmith/worker-pool';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const root = pki.root({ CN: 'certinfo root' }, { key: 'ecdsa-p256' });
const leaf = pki.leaf('www.example.com', root, { key: 'ecdsa-p256' });
const serial = serialToDecimal(leaf.serialHex.toLowerCase());
const aki = toHex(root.subjectKeyId!);

describe('POST /api/v1/cfssl/certinfo by serial and authority_key_id', () => {
  let store: Store;
  let app: ServedApp;
  let withoutStore: ServedApp;
  beforeAll(async () => {
    store = await memoryStore();
    await store.recordCertificate({ certificate: leaf.pem, label: 'default' });
    const taskRunner = createInlineTaskRunner({ tasks: [certinfoTask] });
    app = await serveApp({ operations: [createCertinfoOperation({ store })], taskRunner });
    withoutStore = await serveApp({ operations: [createCertinfoOperation()], taskRunner });
  });
  afterAll(async () => {
    await app.close();
    await withoutStore.close();
    await store.close();
  });

  const certinfo = (body: unknown, on = app) => on.call('/api/v1/cfssl/certinfo', { method: 'POST', body: JSON.stringify(body) });

  it('describes the stored certificate; the AKI in either case, with colons (as CFSSL)', async () => {
    for (const key of [aki, aki.toUpperCase().match(/../g)!.join(':')]) {
      const response = await certinfo({ serial, authority_key_id: key });
      expect(response.status).toBe(200);
      expect(response.body.result).toEqual(describeCertificatePem(leaf.pem));
    }
  });

  it('answers 404 "no certificate found" where CFSSL answers 500 code 0', async () => {
    for (const body of [{ serial: '1', authority_key_id: aki }, { serial: leaf.serialHex, authority_key_id: aki }]) {
      const response = await certinfo(body);
      expect(response.status).toBe(404);
      expect(response.body.errors).toEqual([{ code: 404, message: 'no certificate found' }]);
    }
  });

  it('keeps CFSSL\'s answer without a store', async () => {
    const response = await certinfo({ serial, authority_key_id: aki }, withoutStore);
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ code: 400, message: 'cannot lookup certificate from serial without db access' }]);
  });

  it('needs both keys: a serial alone is "no valid parameter sets found"', async () => {
    const response = await certinfo({ serial });
    expect(response.body.errors).toEqual([{ code: 400, message: 'no valid parameter sets found' }]);
  });
});
