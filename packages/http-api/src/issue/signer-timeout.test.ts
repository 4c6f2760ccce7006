/**
 * The signer timeout of the issuing path: a signer that never answers (`sign`, `signRequest`,
 * `getCertificate`, `info`) fails the request with 2500 `signer "<label>" did not answer within N ms`
 * instead of holding it forever, and the other labels keep working.
 */
import { parseSigningPolicy } from '@certsmith/issuer';
import type { Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.js';
import { closeHttpServer, createHttpServer, listen } from '../http-server.js';
import type { ApiServer } from '../http-server.js';
import { createInlineTaskRunner } from '@certsmith/worker-pool';
import { SignerTimeoutError } from './errors.js';
import { createInfoOperation } from './info-operation.js';
import { createNewcertOperation } from './newcert-operation.js';
import { createSignOperation } from './sign-operation.js';
import { createSignerDirectory } from './signer-directory.js';
import { withSignerTimeout } from './signing.js';

const pki = new TestPki();
const ca = pki.root({ CN: 'Timeout Unit CA' }, { key: 'ecdsa-p256' });
const policy = parseSigningPolicy({ signing: { default: { expiry: '1h', usages: ['signing', 'server auth'] } } });
const never = <T>(): Promise<T> => new Promise<T>(() => {});

const working: Signer = {
  algorithms: algorithmsForKeyObject(ca.key.privateKey),
  getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
  sign: (tbs, algorithm) => signWithKeyObject(ca.key.privateKey, tbs, algorithm),
  close: async () => {},
};
/** An HSM whose signing call hangs. */
const hangingSign: Signer = { ...working, sign: () => never() };
/** A remote CA that accepts the connection and never answers. */
const hangingRemote: Signer = { algorithms: [], getCertificate: () => never(), signRequest: () => never(), info: () => never(), close: async () => {} };

let server: ApiServer;
let url: string;

beforeAll(async () => {
  const signers = createSignerDirectory([
    { label: 'default', signer: working, policy },
    { label: 'stuck', signer: hangingSign, policy },
    { label: 'remote', signer: hangingRemote, policy },
  ]);
  const options = { signers, bundler: null, signerTimeoutMs: 300 };
  const app = createApp({
    operations: [createNewcertOperation(options), createSignOperation(options), createInfoOperation(options)],
    taskRunner: createInlineTaskRunner(),
  });
  server = createHttpServer(app);
  ({ url } = await listen(server, 0, '127.0.0.1'));
});

afterAll(async () => {
  await closeHttpServer(server, { timeoutMs: 2000 });
});

async function post(name: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${url}/api/v1/cfssl/${name}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(20_000) });
  return { status: response.status, json: await response.json() };
}

describe('signer timeout', () => {
  it('fails newcert on a hanging signer with 2500 naming the label, and keeps other labels working', async () => {
    const stuck = await post('newcert', { label: 'stuck', request: { CN: 'a.example', hosts: ['a.example'] } });
    expect(stuck.status).toBe(400);
    expect(stuck.json.errors).toEqual([{ code: 2500, message: 'signer "stuck" did not answer within 300 ms' }]);
    const fine = await post('newcert', { request: { CN: 'b.example', hosts: ['b.example'] } });
    expect(fine.status).toBe(200);
  });

  it('fails newcert and info on a remote CA that never answers', async () => {
    const remote = await post('newcert', { label: 'remote', request: { CN: 'c.example', hosts: ['c.example'] } });
    expect(remote.json.errors).toEqual([{ code: 2500, message: 'signer "remote" did not answer within 300 ms' }]);
    const info = await post('info', { label: 'remote' });
    expect(info.json.errors).toEqual([{ code: 2500, message: 'signer "remote" did not answer within 300 ms' }]);
  });

  it('withSignerTimeout passes results and failures through and swallows late rejections', async () => {
    await expect(withSignerTimeout({ label: 'x' }, 1000, async () => 42)).resolves.toBe(42);
    await expect(withSignerTimeout({ label: 'x' }, 1000, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    let rejectLate!: (error: Error) => void;
    const late = new Promise<never>((_, reject) => (rejectLate = reject));
    await expect(withSignerTimeout({ label: 'late' }, 20, () => late)).rejects.toBeInstanceOf(SignerTimeoutError);
    rejectLate(new Error('too late')); // must not become an unhandled rejection (vitest would fail the run)
    await new Promise((resolve) => setTimeout(resolve, 10));
  });
});
