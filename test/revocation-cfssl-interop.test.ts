/**
 * OCSP responses cross between certsmith and CFSSL (Debian's `cfssl` 1.2.0), both ways, checked by
 * `openssl ocsp -url` against real responders on 127.0.0.1:
 * - `cfssl ocspserve -responses` serves a file of responses certsmith signed (`formatOcspResponseFile`,
 *   the `ocspdump` format);
 * - certsmith's responder serves, from its `-responses` file source, a response `cfssl ocspsign` made.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { OcspSigningIdentity } from '@certsmith/revocation';
import {
  OcspResponder,
  buildOcspResponse,
  createOcspFileSource,
  createOcspIssuer,
  createOcspSigningIdentity,
  createRevocationSigner,
  formatOcspResponseFile,
  ocspValidity,
} from '@certsmith/revocation';
import { algorithmsForKeyObject, signWithKeyObject } from '@certsmith/signer-api';
import type { TestCertificate } from '@certsmith/test-pki';
import { TestPki } from '@certsmith/test-pki';
import { parseCertificate } from '@certsmith/x509-core';

import { findFreePort, waitForPort } from './peers/free-port.js';

const dir = mkdtempSync(join(tmpdir(), 'certsmith-revocation-cfssl-'));
const pki = new TestPki();
const ca = pki.root({ O: 'certsmith tests', CN: 'interop CA' }, { key: 'ecdsa-p256', keyLabel: 'interop-ca' });
const responderCert = pki.leaf('interop OCSP responder', ca, { key: 'ecdsa-p256', keyLabel: 'interop-responder', dns: [], extKeyUsage: ['1.3.6.1.5.5.7.3.9'], keyUsage: ['digitalSignature'] });
const good = pki.leaf('good.interop.test', ca, { keyLabel: 'interop-good' });
const revoked = pki.leaf('revoked.interop.test', ca, { keyLabel: 'interop-revoked' });
const file = (name: string, content: string | Uint8Array): string => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const caFile = file('ca.pem', ca.pem);
const goodFile = file('good.pem', good.pem);
const revokedFile = file('revoked.pem', revoked.pem);
let identity: OcspSigningIdentity;
const children: ChildProcess[] = [];
const servers: Server[] = [];

function opensslOcsp(certFile: string, url: string): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn('openssl', ['ocsp', '-issuer', caFile, '-cert', certFile, '-url', url, '-CAfile', caFile, '-no_nonce'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

function serialOf(certificate: TestCertificate): bigint {
  return BigInt(`0x${parseCertificate(certificate.der).serialNumberHex}`);
}

beforeAll(async () => {
  const key = responderCert.key.privateKey;
  const signer = await createRevocationSigner({
    algorithms: algorithmsForKeyObject(key),
    getCertificate: async () => ({ der: responderCert.der, pem: responderCert.pem }),
    sign: (tbs, algorithm) => signWithKeyObject(key, tbs, algorithm),
    close: async () => {},
  });
  identity = createOcspSigningIdentity({ issuer: ca.der, signer });
});

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  rmSync(dir, { recursive: true, force: true });
});

describe('cfssl ocspserve serving responses certsmith signed', () => {
  it('answers good and revoked (keyCompromise) and openssl verifies both', async () => {
    const now = new Date();
    const responses = [
      (await buildOcspResponse({ identity, serialNumber: serialOf(good), status: 'good', ...ocspValidity(now) })).der,
      (await buildOcspResponse({ identity, serialNumber: serialOf(revoked), status: 'revoked', revokedAt: now, reason: 1, ...ocspValidity(now, undefined, now) })).der,
    ];
    const responsesFile = file('responses.txt', formatOcspResponseFile(responses));
    const port = await findFreePort();
    const child = spawn('cfssl', ['ocspserve', '-address', '127.0.0.1', '-port', String(port), '-responses', responsesFile], { stdio: 'ignore' });
    children.push(child);
    await waitForPort(port);
    const goodAnswer = await opensslOcsp(goodFile, `http://127.0.0.1:${port}`);
    expect(goodAnswer).toContain('Response verify OK');
    expect(goodAnswer).toContain('good.pem: good');
    const revokedAnswer = await opensslOcsp(revokedFile, `http://127.0.0.1:${port}`);
    expect(revokedAnswer).toContain('Response verify OK');
    expect(revokedAnswer).toContain('revoked.pem: revoked');
    expect(revokedAnswer).toContain('Reason: keyCompromise');
  });
});

describe('certsmith responder serving a response cfssl ocspsign made', () => {
  it('serves it from the -responses file source and openssl verifies it', async () => {
    const output = execFileSync(
      'cfssl',
      ['ocspsign', '-ca', caFile, '-responder', file('responder.pem', responderCert.pem), '-responder-key', file('responder-key.pem', responderCert.key.traditionalPem),
        '-cert', revokedFile, '-status', 'revoked', '-reason', 'superseded'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    const { ocspResponse } = JSON.parse(output) as { ocspResponse: string };
    const source = createOcspFileSource(`${ocspResponse}\n`);
    expect(source.size).toBe(1);
    const responder = new OcspResponder({ source, issuers: [createOcspIssuer(ca.der)] });
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        void responder.handle({ method: request.method ?? 'GET', path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks) }).then((answer) => {
          response.writeHead(answer.status, answer.headers);
          response.end(answer.body);
        });
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const answer = await opensslOcsp(revokedFile, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    expect(answer).toContain('Response verify OK');
    expect(answer).toContain('revoked.pem: revoked');
    expect(answer).toContain('Reason: superseded');
    // A certificate cfssl signed nothing for is unauthorized, as in CFSSL.
    expect(await opensslOcsp(goodFile, `http://127.0.0.1:${(server.address() as AddressInfo).port}`)).toContain('unauthorized');
  });
});
