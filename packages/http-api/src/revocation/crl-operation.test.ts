import type { Server } from 'node:http';
import type { Crl } from '@certsmith/revocation';
import { CertsmithError } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { closeHttpServer, createHttpServer, listen } from '../http-server.js';
import { createCrlFileOperation, createCrlOperation } from './crl-operation.js';

const DER = Uint8Array.of(0x30, 0x03, 0x02, 0x01, 0x05);
const crl: Crl = {
  der: DER,
  crlNumber: 42n,
  thisUpdate: new Date('2026-11-26T00:00:00Z'),
  nextUpdate: new Date('2026-12-03T00:00:00Z'),
  entryCount: 0,
  issuerKeyId: 'abcd',
};
const asked: Array<string | undefined> = [];
const options = {
  validityMs: 168 * 3_600_000,
  crlFor: async (label: string | undefined): Promise<Crl> => {
    asked.push(label);
    if (label === 'nope') throw new CertsmithError(5200, 'unknown label "nope": no signer is configured for it');
    return crl;
  },
};

describe('CRL endpoints', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createHttpServer(createApp({ operations: [createCrlOperation(options), createCrlFileOperation(options)] }));
    ({ url } = await listen(server, 0, '127.0.0.1'));
  });
  afterAll(async () => {
    await closeHttpServer(server, { timeoutMs: 1000 });
  });

  it("GET /api/v1/cfssl/crl answers CFSSL's JSON: the base64 DER as result", async () => {
    const response = await fetch(`${url}/api/v1/cfssl/crl`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ success: true, result: Buffer.from(DER).toString('base64'), errors: [], messages: [] });
  });

  it('takes a label, and says so when an expiry other than the CRL validity was asked for', async () => {
    const response = await fetch(`${url}/api/v1/cfssl/crl?expiry=1h&label=hsm`);
    const body = (await response.json()) as { messages: Array<{ message: string }> };
    expect(asked.at(-1)).toBe('hsm');
    expect(body.messages).toEqual([{ code: 400, message: expect.stringContaining('expiry 1h not applied') }]);
    expect(((await (await fetch(`${url}/api/v1/cfssl/crl?expiry=168h`)).json()) as { messages: unknown[] }).messages).toEqual([]);
  });

  it("refuses an expiry that is not a Go duration with Go's text (CFSSL: 500, code 0)", async () => {
    const response = await fetch(`${url}/api/v1/cfssl/crl?expiry=10`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errors: [{ code: 400, message: 'time: missing unit in duration "10"' }] });
  });

  it('GET /api/v1/certsmith/crl/{label} answers the DER as application/pkix-crl with caching headers', async () => {
    const response = await fetch(`${url}/api/v1/certsmith/crl/default`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/pkix-crl');
    expect(response.headers.get('last-modified')).toBe('Thu, 26 Nov 2026 00:00:00 GMT');
    expect(response.headers.get('expires')).toBe('Thu, 03 Dec 2026 00:00:00 GMT');
    expect(response.headers.get('etag')).toBe('"abcd-2a"');
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(DER);
  });

  it('answers an unknown label in the envelope (5200)', async () => {
    const response = await fetch(`${url}/api/v1/certsmith/crl/nope`);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ errors: [{ code: 5200 }] });
  });
});
