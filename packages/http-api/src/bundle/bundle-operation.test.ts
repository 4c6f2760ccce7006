import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestPki, chainPem, trimmedPem } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { closeHttpServer, createHttpServer, listen } from '../http-server.js';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import { createWorkerPool, type WorkerPool } from '@certsmith/worker-pool';
import { createBundleOperation, toBundleInput } from './bundle-operation.js';

const pki = new TestPki();
const root = pki.root('Operation Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Operation Inter', root, { key: 'ecdsa-p256' });
const leaf = pki.leaf('op.example.com', inter, { key: 'ecdsa-p256' });

describe('toBundleInput', () => {
  it('maps the CFSSL field names to the use case\'s and leaves absent fields out', () => {
    expect(toBundleInput({ certificate: 'c', private_key: 'k', flavor: 'force', domain: 'd', ip: 'i' })).toEqual({
      certificatePem: 'c',
      privateKeyPem: 'k',
      flavor: 'force',
      domain: 'd',
      ip: 'i',
    });
    expect(toBundleInput({ domain: 'd' })).toEqual({ domain: 'd' });
  });
});

describe('POST /api/v1/cfssl/bundle (bundle operation)', () => {
  let dir: string;
  let server: Server;
  let url: string;
  let poolServer: Server;
  let poolUrl: string;
  let pool: WorkerPool;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bundle-operation-'));
    await writeFile(join(dir, 'roots.pem'), root.pem);
    await writeFile(join(dir, 'inters.pem'), inter.pem);
    const operation = createBundleOperation({
      caBundleFile: join(dir, 'roots.pem'),
      intBundleFile: join(dir, 'inters.pem'),
      aia: false,
    });
    server = createHttpServer(createApp({ operations: [operation], taskRunner: createInlineTaskRunner() }));
    ({ url } = await listen(server, 0, '127.0.0.1'));
    // The real pool runs dist/ (build first): proves the task is found and runs on a worker thread.
    pool = createWorkerPool({ size: 1, tasks: operation.tasks ?? [] });
    poolServer = createHttpServer(createApp({ operations: [operation], taskRunner: pool }));
    ({ url: poolUrl } = await listen(poolServer, 0, '127.0.0.1'));
  });

  afterAll(async () => {
    await closeHttpServer(server, { timeoutMs: 2000 });
    await closeHttpServer(poolServer, { timeoutMs: 2000 });
    await pool.close();
    await rm(dir, { recursive: true, force: true });
  });

  const post = async (body: unknown, base = url): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${base}/api/v1/cfssl/bundle`, {
      method: 'POST',
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    expect(response.headers.get('content-type')).toBe('application/json');
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('returns the bundle in the success envelope', async () => {
    const { status, body } = await post({ certificate: leaf.pem });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      success: true,
      result: { bundle: chainPem(leaf, inter).trim(), root: trimmedPem(root), status: { rebundled: true } },
      errors: [],
      messages: [],
    });
  });

  it('runs the bundle task on a worker of the pool', async () => {
    const { status, body } = await post({ certificate: leaf.pem, flavor: 'force' }, poolUrl);
    expect(status).toBe(200);
    expect(body['result']).toMatchObject({ bundle: trimmedPem(leaf), root: '' });
    const failed = await post({ certificate: 'garbage' }, poolUrl);
    expect(failed).toEqual({
      status: 400,
      body: { success: false, result: null, errors: [{ code: 1002, message: 'Failed to decode certificate' }], messages: [] },
    });
  });

  it.each([
    ['certificate', { certificate: true }, 'boolean'],
    ['domain', { domain: 1 }, 'number'],
    ['private_key', { certificate: leaf.pem, private_key: {} }, 'object'],
    ['flavor', { certificate: leaf.pem, flavor: [] }, 'array'],
    ['ip', { certificate: leaf.pem, ip: 10 }, 'number'],
  ])('answers 400 code 400 naming %s when it is not a string', async (field, request, got) => {
    const { status, body } = await post(request);
    expect(status).toBe(400);
    expect(body['errors']).toEqual([{ code: 400, message: expect.stringMatching(new RegExp(`^${field} must be a string.*, got ${got}$`)) }]);
  });

  it.each([
    ['{"flavor":"optimal"}'],
    ['{}'],
    ['null'],
    ['{"CERTIFICATE":"x"}'],
  ])('answers CFSSL\'s 400 "no valid parameter sets found" for %s', async (request) => {
    const { status, body } = await post(request);
    expect(status).toBe(400);
    expect(body['errors']).toEqual([{ code: 400, message: 'no valid parameter sets found' }]);
  });

  it('treats null as an empty string, as CFSSL\'s string map', async () => {
    const { body } = await post({ certificate: null });
    expect(body['errors']).toEqual([{ code: 1002, message: 'Failed to decode certificate' }]);
  });

  it('prefers certificate mode when both certificate and domain are present', async () => {
    const { status, body } = await post({ certificate: leaf.pem, domain: '' });
    expect(status).toBe(200);
    expect((body['result'] as Record<string, unknown>)['crt']).toBe(trimmedPem(leaf));
  });

  it('passes coded errors of the use case through with 400', async () => {
    expect((await post({ certificate: leaf.pem, private_key: 'garbage' })).body['errors']).toEqual([
      { code: 2002, message: 'Failed to decode private key' },
    ]);
    expect((await post({ certificate: leaf.pem, domain: 'other.example.com' })).body['errors']).toEqual([
      { code: 1200, message: 'x509: certificate is valid for op.example.com, not other.example.com' },
    ]);
  });

  it('refuses a domain longer than a DNS name with 400 and does not echo it back', async () => {
    const domain = 'a'.repeat(100_000);
    const { status, body } = await post({ domain });
    expect(status).toBe(400);
    const errors = body['errors'] as Array<{ code: number; message: string }>;
    expect(errors[0]?.code).toBe(400);
    expect(errors[0]?.message).toContain('domain');
    expect(errors[0]?.message.length).toBeLessThan(200);
  });

  it('refuses an ip longer than any IP address text with 400', async () => {
    const { status, body } = await post({ domain: 'example.com', ip: '1'.repeat(46) });
    expect(status).toBe(400);
    expect((body['errors'] as Array<{ code: number }>)[0]?.code).toBe(400);
  });
});
