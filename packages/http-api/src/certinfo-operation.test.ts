import type { Server } from 'node:http';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { certinfoTask, describeCertificatePem } from '@certsmith/bundler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { certinfoOperation } from './certinfo-operation.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import { createWorkerPool } from './worker-pool.js';
import type { WorkerPool } from './worker-pool.js';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const root = pki.root({ C: 'US', O: 'Test Org', OU: 'PKI', CN: 'Throwaway Test Root CA' }, { key: 'ecdsa-p256' });
const leaf = pki.leaf('www.example.com', root, { key: 'ecdsa-p256', ips: ['192.168.1.10'] });

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
    expect(body).toEqual({ success: true, result: describeCertificatePem(leaf.pem), errors: [], messages: [] });
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
