import type { Store } from '@certsmith/cert-store';
import { serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStore, serveApp } from '../test-support/store-app.js';
import type { ServedApp } from '../test-support/store-app.js';
import { createCertaddOperation } from './certadd-operation.js';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const root = pki.root({ CN: 'certadd test root' }, { key: 'ecdsa-p256' });
const leaf = pki.leaf('www.example.com', root, { key: 'ecdsa-p256', notAfter: new Date('2027-11-25T23:22:00Z') });
const other = pki.leaf('other.example.com', root, { key: 'ecdsa-p256', notAfter: new Date('2027-11-25T23:22:00Z') });
const serial = serialToDecimal(leaf.serialHex.toLowerCase());
const aki = toHex(root.subjectKeyId!);

/** A valid request for `leaf`, with `overrides`. */
const request = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  serial_number: serial,
  authority_key_identifier: aki,
  status: 'good',
  expiry: '2027-11-25T23:22:00Z',
  pem: leaf.pem,
  ...overrides,
});

describe('POST /api/v1/cfssl/certadd', () => {
  let store: Store;
  let app: ServedApp;
  beforeAll(async () => {
    store = await memoryStore();
    app = await serveApp({ operations: [createCertaddOperation({ store })] });
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  const add = (body: unknown) => app.call('/api/v1/cfssl/certadd', { method: 'POST', body: typeof body === 'string' ? body : JSON.stringify(body) });

  // CFSSL's checks in CFSSL's order (lifecycle spec §3.5): each case breaks one rule and keeps the later ones valid.
  it.each<[string, unknown, string]>([
    ['a body that is not JSON', '{', 'Unable to parse certificate addition request'],
    ['an array', '[]', 'Unable to parse certificate addition request'],
    ['a number for the serial', request({ serial_number: 5 }), 'Unable to parse certificate addition request'],
    ['a reason of 1.0', '{"serial_number":"1","reason":1.0}', 'Unable to parse certificate addition request'],
    ['an expiry that is not RFC 3339', request({ expiry: '2027-11-25 23:22:00' }), 'Unable to parse certificate addition request'],
    ['a 30 February', request({ revoked_at: '2027-02-30T00:00:00Z' }), 'Unable to parse certificate addition request'],
    ['no serial', request({ serial_number: '' }), 'Serial number is required but not provided'],
    ['no AKI', request({ authority_key_identifier: undefined }), 'Authority key identifier is required but not provided'],
    ['an unknown status', request({ status: 'expired' }), 'Invalid certificate status'],
    ['a revoked one without revoked_at', request({ status: 'revoked', reason: 1 }), 'Revoked certificate should specify when it was revoked'],
    ['a revoked one with the zero time', request({ status: 'revoked', revoked_at: '0001-01-01T00:00:00Z' }), 'Revoked certificate should specify when it was revoked'],
    ['reason 7', request({ status: 'revoked', revoked_at: '2026-11-25T00:00:00Z', reason: 7 }), 'Invalid certificate status reason code'],
    ['reason 11', request({ status: 'revoked', revoked_at: '2026-11-25T00:00:00Z', reason: 11 }), 'Invalid certificate status reason code'],
    ['no PEM', request({ pem: '' }), 'The provided certificate is empty'],
    ['no expiry', request({ expiry: undefined }), 'Expiry is required but not provided'],
    ['a PEM that is not a certificate', request({ pem: 'hello' }), 'Unable to parse PEM encoded certificates'],
    ['two certificates', request({ pem: leaf.pem + other.pem }), 'Unable to parse PEM encoded certificates'],
    ['text after the certificate', request({ pem: `${leaf.pem}trailing` }), 'Unable to parse PEM encoded certificates'],
    ['a hex serial', request({ serial_number: leaf.serialHex }), 'Unable to parse serial key of request'],
    ['another serial', request({ serial_number: '12345' }), 'Serial key of request and certificate do not match'],
    ['an AKI that is not hex', request({ authority_key_identifier: 'zz' }), 'Unable to decode authority key identifier'],
    ['an AKI with colons', request({ authority_key_identifier: aki.match(/../g)!.join(':') }), 'Unable to decode authority key identifier'],
    ['another AKI', request({ authority_key_identifier: '00'.repeat(20) }), 'Authority key identifier of request and certificate do not match'],
    ['another expiry', request({ expiry: '2027-11-25T23:22:01Z' }), 'Expiry of request and certificate do not match'],
    ['the same instant with +00:00', request({ expiry: '2027-11-25T23:22:00+00:00' }), 'Expiry of request and certificate do not match'],
    ['a fraction of a second more', request({ expiry: '2027-11-25T23:22:00.000001Z' }), 'Expiry of request and certificate do not match'],
  ])('answers %s with 400 and CFSSL\'s message', async (_case, body, message) => {
    const response = await add(body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, result: null, errors: [{ code: 400, message }], messages: [] });
  });

  it('inserts the row with the values as given and answers {}', async () => {
    const upperAki = aki.toUpperCase();
    const response = await add({
      ...request({ authority_key_identifier: upperAki, expiry: '2027-11-25T23:22:00.000Z' }),
      CA_Label: 'imported',
      issued_at: '2026-11-20T10:00:00+02:00',
      metadata: { team: 'payments' },
      common_name: 'www.example.com',
      unknown_key: 'ignored',
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ success: true, result: {} });
    // Stored as given: the upper-case AKI makes a row an exact lookup finds only with that text.
    const row = await store.getCertificate(serial, upperAki);
    expect(row).toMatchObject({
      serial,
      authorityKeyId: upperAki,
      label: 'imported',
      status: 'good',
      reason: 0,
      expiry: new Date('2027-11-25T23:22:00Z'),
      revokedAt: null,
      issuedAt: new Date('2026-11-20T08:00:00Z'),
      metadata: { team: 'payments' },
      commonName: 'www.example.com',
      pem: leaf.pem,
    });
    expect(await store.getCertificate(serial, aki)).toBeNull();
  });

  it('stores a revoked certificate with its reason and time', async () => {
    const response = await add(request({ pem: other.pem, serial_number: serialToDecimal(other.serialHex.toLowerCase()), status: 'revoked', reason: 1, revoked_at: '2026-11-24T12:00:00Z' }));
    expect(response.status).toBe(200);
    expect(await store.getCertificate(serialToDecimal(other.serialHex.toLowerCase()), aki)).toMatchObject({ status: 'revoked', reason: 1, revokedAt: new Date('2026-11-24T12:00:00Z'), label: '', commonName: null });
  });

  it('answers a duplicate (serial, AKI) with 11000 and the driver\'s text, as CFSSL', async () => {
    expect((await add(request())).status).toBe(200);
    const response = await add(request());
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ code: 11000, message: 'UNIQUE constraint failed: certificates.serial_number, certificates.authority_key_identifier' }]);
  });
});
