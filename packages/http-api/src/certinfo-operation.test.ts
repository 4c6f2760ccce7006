import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { certinfoTask, describeCertificatePem } from '@certsmith/bundler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { certinfoOperation, createCertinfoOperation } from './certinfo-operation.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import { createWorkerPool } from '@certsmith/worker-pool';
import type { WorkerPool } from '@certsmith/worker-pool';

const pki = new TestPki({ now: new Date('2026-11-22T03:27:22Z') });
const root = pki.root({ C: 'US', O: 'Test Org', OU: 'PKI', CN: 'Throwaway Test Root CA' }, { key: 'ecdsa-p256' });
const leaf = pki.leaf('www.example.com', root, { key: 'ecdsa-p256', ips: ['192.168.1.10'] });

describe('POST /api/v1/cfssl/certinfo', () => {
  let pool: WorkerPool;
  let server: Server;
  let url: string;
  // The same operation allowed to reach loopback, as with `--allow-private-networks`.
  let openServer: Server;
  let openUrl: string;
  let tls: TlsServer;
  let tlsPort = 0;

  beforeAll(async () => {
    pool = createWorkerPool({ size: 1, tasks: [certinfoTask] });
    server = createHttpServer(createApp({ operations: [certinfoOperation], taskRunner: pool }));
    ({ url } = await listen(server, 0, '127.0.0.1'));
    openServer = createHttpServer(createApp({ operations: [createCertinfoOperation({ allowCidrs: ['127.0.0.0/8'] })], taskRunner: pool }));
    ({ url: openUrl } = await listen(openServer, 0, '127.0.0.1'));
    tls = createTlsServer({ key: leaf.key.pkcs8Pem, cert: chainPem(leaf) }, (socket) => socket.end());
    tls.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    tlsPort = (tls.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await closeHttpServer(server, { timeoutMs: 2000 });
    await closeHttpServer(openServer, { timeoutMs: 2000 });
    await new Promise((resolve) => tls.close(resolve));
    await pool.close();
  });

  const certinfo = async (body: unknown, base = url): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${base}/api/v1/cfssl/certinfo`, { method: 'POST', body: JSON.stringify(body) });
    expect(response.headers.get('content-type')).toBe('application/json');
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('returns the certinfo result computed on a worker', async () => {
    const { status, body } = await certinfo({ certificate: leaf.pem });
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, result: describeCertificatePem(leaf.pem), errors: [], messages: [] });
  });

  it('describes the certificate a TLS server presents when given a domain', async () => {
    const { status, body } = await certinfo({ domain: `127.0.0.1:${tlsPort}` }, openUrl);
    expect(status).toBe(200);
    expect(body).toEqual({ success: true, result: describeCertificatePem(leaf.pem), errors: [], messages: [] });
  });

  it('refuses a loopback domain with 6000 unless private networks are allowed', async () => {
    const { status, body } = await certinfo({ domain: `127.0.0.1:${tlsPort}` });
    expect(status).toBe(400);
    expect(body).toMatchObject({ success: false, errors: [{ code: 6000, message: expect.stringMatching(/^refused to connect to 127\.0\.0\.1:\d+: 127\.0\.0\.1 is a loopback address/) }] });
  });

  it.each([
    [{ domain: 'localhost:99999' }, 'dial tcp: address 99999: invalid port'],
    [{ domain: 'localhost:https:1' }, 'dial tcp: lookup localhost:https:1: no such host'],
    [{ domain: 'no-such-host.invalid' }, 'dial tcp: lookup no-such-host.invalid: no such host'],
  ])('answers %j with 6000 and Go\'s text', async (request, message) => {
    const response = await certinfo(request, openUrl);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ success: false, result: null, errors: [{ code: 6000, message }], messages: [] });
  });

  it('answers 6000 with Go\'s text when nothing listens', async () => {
    const closed = createTlsServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const response = await certinfo({ domain: `127.0.0.1:${port}` }, openUrl);
    expect(response.body).toEqual({ success: false, result: null, errors: [{ code: 6000, message: `dial tcp 127.0.0.1:${port}: connect: connection refused` }], messages: [] });
  });

  it.each([
    [{ certificate: 'this is not a certificate' }, 400, 1002, 'Failed to decode certificate'],
    [{ certificate: null }, 400, 1002, 'Failed to decode certificate'],
    [{ certificate: chainPem(leaf, root) }, 400, 1003, 'the PEM file should contain only one object'],
    [{}, 400, 400, 'no valid parameter sets found'],
    [{ flavor: 'optimal' }, 400, 400, 'no valid parameter sets found'],
    [{ certificate: true }, 400, 400, 'certificate must be a string, got boolean'],
    [{ domain: 'x'.repeat(300) }, 400, 400, expect.stringMatching(/^domain\b/)],
    [{ serial: '1', authority_key_id: 'AB' }, 400, 400, 'cannot lookup certificate from serial without db access'],
  ])('answers %j with %i code %i', async (request, status, code, message) => {
    const response = await certinfo(request);
    expect(response.status).toBe(status);
    expect(response.body).toEqual({ success: false, result: null, errors: [{ code, message }], messages: [] });
  });
});
