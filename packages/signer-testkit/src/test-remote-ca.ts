/**
 * A CFSSL-speaking CA on 127.0.0.1 for tests of remote-signer plugins: `/api/v1/cfssl/info`,
 * `/sign` and `/authsign` answered by certsmith's issuer over a {@link createTestCa} key, in CFSSL's
 * envelope and with its error codes (behaviour doc 4.4–4.6), so a plugin that forwards sign
 * requests can be proven without Go peers. Loopback only.
 */
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { DEFAULT_LABEL, createIssuer, createSignerDirectory, decodeInfoRequest, decodeSignRequest, defaultSigningPolicy, parseSigningPolicy } from '@certsmith/issuer';
import type { Issuer } from '@certsmith/issuer';
import type { Signer } from '@certsmith/signer-api';
import { isCodedError } from '@certsmith/x509-core';

import { createTestCa } from './test-ca.js';
import type { TestCa } from './test-ca.js';

/** Options of {@link startTestRemoteCa}. */
export interface TestRemoteCaOptions {
  /** The CA (default: a fresh `createTestCa({ commonName: 'certsmith testkit remote CA' })`). */
  ca?: TestCa;
  /**
   * A CFSSL config (`{ signing: { default, profiles }, auth_keys }`, as a JSON value) the CA signs
   * under; profiles with an `auth_key` need `/authsign` (default: CFSSL's default policy).
   */
  config?: unknown;
}

/** A running test remote CA. */
export interface TestRemoteCa {
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly ca: TestCa;
  /** Paths of the API calls received, in order (`/api/v1/cfssl/authsign`…). */
  readonly calls: readonly string[];
  /** Stop listening, drop connections and close the CA's signer. */
  close(): Promise<void>;
}

const envelope = (result: unknown): string => `${JSON.stringify({ success: true, result, errors: [], messages: [] })}\n`;
const failure = (code: number, message: string): string => `${JSON.stringify({ success: false, result: null, errors: [{ code, message }], messages: [] })}\n`;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Answer one API call the way `cfssl serve` and multirootca do. */
async function answer(issuer: Issuer, path: string, text: string): Promise<{ status: number; body: string }> {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    switch (path) {
      case '/api/v1/cfssl/info':
        return { status: 200, body: envelope(await issuer.info(decodeInfoRequest(body))) };
      case '/api/v1/cfssl/sign':
        return { status: 200, body: envelope({ certificate: (await issuer.signCertificate(decodeSignRequest(body))).certificatePem }) };
      case '/api/v1/cfssl/authsign':
        return { status: 200, body: envelope({ certificate: (await issuer.authsign(body)).certificatePem }) };
      default:
        return { status: 404, body: failure(404, 'not found') };
    }
  } catch (error) {
    return { status: 400, body: failure(isCodedError(error) ? error.code : 1000, (error as Error).message) };
  }
}

/** Start a test remote CA on 127.0.0.1 (an ephemeral port). */
export async function startTestRemoteCa(options: TestRemoteCaOptions = {}): Promise<TestRemoteCa> {
  const ca = options.ca ?? (await createTestCa({ commonName: 'certsmith testkit remote CA' }));
  const signer: Signer = ca.createSigner();
  const policy = options.config === undefined ? defaultSigningPolicy() : parseSigningPolicy(options.config);
  const issuer = createIssuer({ signers: createSignerDirectory([{ label: DEFAULT_LABEL, signer, policy }]) });
  const calls: string[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '';
    calls.push(path);
    void readBody(request)
      .then((text) => answer(issuer, path, text))
      .then(({ status, body }) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(body);
      });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ca,
    calls,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await signer.close();
    },
  };
}
