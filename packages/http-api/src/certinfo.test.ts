import { X509Certificate } from 'node:crypto';
import type { Server } from 'node:http';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { certinfoOperation } from './certinfo-operation.js';
import { formatKeyId, serialToDecimal, toCertinfoName } from './certinfo-result.js';
import { certinfoTask } from './certinfo-task.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import { createWorkerPool } from './worker-pool.js';
import type { WorkerPool } from './worker-pool.js';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const root = pki.root({ C: 'US', O: 'Test Org', OU: 'PKI', CN: 'Throwaway Test Root CA' }, { key: 'ecdsa-p256' });
const leaf = pki.issue({
  subject: { C: 'US', ST: 'California', L: 'San Francisco', O: 'Example Inc', OU: 'Web', CN: 'www.example.com' },
  issuer: root,
  key: 'ecdsa-p256',
  serialHex: '03fcd0',
  notBefore: new Date('2026-11-22T03:22:00Z'),
  notAfter: new Date('2027-11-22T03:22:00Z'),
  dns: ['www.example.com'],
  ips: ['192.168.1.10'],
  emails: ['admin@example.com'],
  uris: ['spiffe://example.org/svc'],
});

describe('certinfoTask.run', () => {
  it('describes a certificate in CFSSL certinfo\'s format and key order', () => {
    const result = certinfoTask.run({ certificate: leaf.pem });
    const node = new X509Certificate(leaf.pem);
    expect(result).toEqual({
      subject: {
        common_name: 'www.example.com',
        country: 'US',
        organization: 'Example Inc',
        organizational_unit: 'Web',
        locality: 'San Francisco',
        province: 'California',
        names: ['US', 'California', 'San Francisco', 'Example Inc', 'Web', 'www.example.com'],
      },
      issuer: {
        common_name: 'Throwaway Test Root CA',
        country: 'US',
        organization: 'Test Org',
        organizational_unit: 'PKI',
        names: ['US', 'Test Org', 'PKI', 'Throwaway Test Root CA'],
      },
      serial_number: BigInt(`0x${node.serialNumber}`).toString(10),
      sans: ['www.example.com', '192.168.1.10', 'admin@example.com', 'spiffe://example.org/svc'],
      not_before: '2026-11-22T03:22:00Z',
      not_after: '2027-11-22T03:22:00Z',
      sigalg: 'ECDSAWithSHA256',
      authority_key_id: formatKeyId(root.subjectKeyId),
      subject_key_id: formatKeyId(leaf.subjectKeyId),
      pem: leaf.pem,
    });
    expect(Object.keys(result)).toEqual([
      'subject',
      'issuer',
      'serial_number',
      'sans',
      'not_before',
      'not_after',
      'sigalg',
      'authority_key_id',
      'subject_key_id',
      'pem',
    ]);
    expect(result.subject_key_id).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
  });

  it('omits sans and gives an empty authority_key_id for a self-signed root without AKI', () => {
    const result = certinfoTask.run({ certificate: root.pem });
    expect(result).not.toHaveProperty('sans');
    expect(result.authority_key_id).toBe('');
  });

  it('fails with 1002 for text without a certificate', () => {
    expect(() => certinfoTask.run({ certificate: 'this is not a certificate' })).toThrow(
      expect.objectContaining({ code: 1002 }),
    );
  });

  it('fails with 1003 and CFSSL\'s message for more than one certificate', () => {
    expect(() => certinfoTask.run({ certificate: chainPem(leaf, root) })).toThrow(
      expect.objectContaining({ code: 1003, message: 'the PEM file should contain only one object' }),
    );
  });
});

describe('toCertinfoName', () => {
  it('joins repeated attributes with commas and keeps the last common name', () => {
    const name = toCertinfoName({
      der: new Uint8Array(),
      rdns: [
        [{ oid: '2.5.4.6', value: 'GB' }, { oid: '2.5.4.6', value: 'US' }],
        [{ oid: '2.5.4.3', value: 'first' }],
        [{ oid: '2.5.4.3', value: 'second' }],
        [{ oid: '1.2.840.113549.1.9.1', value: 'a@b.c' }],
      ],
    });
    expect(name).toEqual({ common_name: 'second', country: 'GB,US', names: ['GB', 'US', 'first', 'second', 'a@b.c'] });
  });
});

describe('serialToDecimal', () => {
  it('reads DER INTEGER content as two\'s complement', () => {
    expect(serialToDecimal('00ff')).toBe('255');
    expect(serialToDecimal('7f')).toBe('127');
    expect(serialToDecimal('ff01')).toBe('-255');
    expect(serialToDecimal('03fcd09a')).toBe(String(0x03fcd09a));
  });
});

describe('POST /api/v1/cfssl/certinfo', () => {
  let pool: WorkerPool;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    pool = createWorkerPool({ size: 1, tasks: [certinfoTask] });
    server = createHttpServer(createApp({ operations: [certinfoOperation], taskRunner: pool }));
    ({ url } = await listen(server, 0, '127.0.0.1'));
  });
  afterAll(async () => {
    await closeHttpServer(server, { timeoutMs: 2000 });
    await pool.close();
  });

  const certinfo = async (body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${url}/api/v1/cfssl/certinfo`, { method: 'POST', body: JSON.stringify(body) });
    expect(response.headers.get('content-type')).toBe('application/json');
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('returns the certinfo result computed on a worker', async () => {
    const { status, body } = await certinfo({ certificate: leaf.pem });
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, result: certinfoTask.run({ certificate: leaf.pem }), errors: [], messages: [] });
  });

  it.each([
    [{ certificate: 'this is not a certificate' }, 400, 1002, 'Failed to decode certificate'],
    [{ certificate: null }, 400, 1002, 'Failed to decode certificate'],
    [{ certificate: chainPem(leaf, root) }, 400, 1003, 'the PEM file should contain only one object'],
    [{}, 400, 400, 'no valid parameter sets found'],
    [{ flavor: 'optimal' }, 400, 400, 'no valid parameter sets found'],
    [{ certificate: true }, 400, 400, 'certificate must be a string, got boolean'],
    [{ serial: '1', authority_key_id: 'AB' }, 400, 400, 'cannot lookup certificate from serial without db access'],
  ])('answers %j with %i code %i', async (request, status, code, message) => {
    const response = await certinfo(request);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ success: false, result: null, errors: [{ code, message }], messages: [] });
  });
});
