/**
 * The signer conformance suite (`@certsmith/signer-testkit`) against this plugin. The remote is a
 * small CFSSL-speaking CA on 127.0.0.1 built from certsmith's own issuer (`/info`, `/authsign` with
 * the HMAC token, CFSSL envelope and error codes), so the suite runs without Go peers; the real
 * multirootca is exercised by test/multiroot-signer.test.ts. The signer has no raw `sign`: the kit
 * issues through `signRequest`.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { authenticateSignRequest, parseSigningPolicy, signCertificateRequest, signerInfo } from '@certsmith/issuer';
import type { SigningPolicy } from '@certsmith/issuer';
import type { Signer } from '@certsmith/signer-api';
import { createSignerContext } from '@certsmith/signer-api';
import { createTestCa, describeSignerConformance } from '@certsmith/signer-testkit';
import { isCodedError } from '@certsmith/x509-core';
import { afterAll, beforeAll } from 'vitest';

import plugin from './index.js';

const AUTH_KEY_HEX = '0123456789abcdef0123456789abcdef';

let server: Server;
let url: string;
let caSigner: Signer;

const policy: SigningPolicy = parseSigningPolicy({
  signing: { default: { usages: ['signing', 'key encipherment', 'server auth', 'client auth'], expiry: '168h', auth_key: 'conformance' } },
  auth_keys: { conformance: { type: 'standard', key: AUTH_KEY_HEX } },
});

const envelope = (result: unknown): string => `${JSON.stringify({ success: true, result, errors: [], messages: [] })}\n`;

/** Answer one CFSSL API call the way `cfssl serve` / multirootca do (behaviour doc 4.4–4.6). */
async function answer(path: string, body: string): Promise<{ status: number; body: string }> {
  try {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    if (path === '/api/v1/cfssl/info') return { status: 200, body: envelope(await signerInfo(caSigner, policy, parsed.profile as string)) };
    if (path === '/api/v1/cfssl/authsign') {
      const request = authenticateSignRequest(parsed, policy);
      return { status: 200, body: envelope({ certificate: (await signCertificateRequest(request, caSigner, policy)).certificatePem }) };
    }
    return { status: 404, body: `${JSON.stringify({ success: false, result: null, errors: [{ code: 404, message: 'not found' }], messages: [] })}\n` };
  } catch (error) {
    const code = isCodedError(error) ? error.code : 1000;
    return { status: 400, body: `${JSON.stringify({ success: false, result: null, errors: [{ code, message: (error as Error).message }], messages: [] })}\n` };
  }
}

beforeAll(async () => {
  caSigner = (await createTestCa({ commonName: 'stub remote CA' })).createSigner();
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void answer(request.url ?? '', Buffer.concat(chunks).toString('utf8')).then(({ status, body }) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(body);
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await caSigner.close();
});

describeSignerConformance(plugin, () => ({ remotes: [url], authKey: 'env:CONFORMANCE_AUTH_KEY', timeoutMs: 10_000 }), {
  title: '@certsmith/signer-multiroot conformance (stub CFSSL remote, authsign)',
  context: () => createSignerContext({ env: { CONFORMANCE_AUTH_KEY: AUTH_KEY_HEX } }),
  invalidOptions: [
    { title: 'a remote that is not http(s)', options: { remotes: ['ftp://127.0.0.1:1'] } },
    { title: 'certFile without keyFile', options: () => ({ remotes: [url], certFile: 'client.pem' }) },
    { title: 'an auth key variable that is not set', options: () => ({ remotes: [url], authKey: 'env:CONFORMANCE_UNSET' }), code: 2001 },
  ],
});
