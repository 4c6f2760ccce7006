/**
 * What tools/fuzz found in x509-core's parsers, proven through the real server (issue 19 item 2).
 * A SEC 1 private key whose scalar was a long constructed OCTET STRING made Node's
 * `asymmetricKeyDetails` hit a native assertion: one `bundle` request with it as `private_key`
 * aborted the whole certsmith process. It is now refused with 2003 before OpenSSL sees it.
 */
import { generateKeyPairSync } from 'node:crypto';
import { DerReader, derConstructed, derSequence, derTlv, elementBytes, encodePem } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import { createScratch, makeRootCa, post, startServer } from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';

let scratch: Scratch;
let ca: OpensslCa;
let server: Server;

beforeAll(async () => {
  scratch = await createScratch('parser-findings');
  ca = await makeRootCa(scratch, 'ca', 'Findings CA');
  server = await startServer(['--data-dir', scratch.path('data'), '--ca-bundle', ca.certFile]);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** The fuzzer's key, rebuilt from a fresh P-521 key: its scalar replaced by 160 × 66 octets in a constructed OCTET STRING. */
function abortingKeyPem(): string {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-521' }).privateKey;
  const der = new Uint8Array(key.export({ type: 'sec1', format: 'der' }));
  const reader = new DerReader(der).sequence();
  const fields: Uint8Array[] = [];
  while (reader.hasMore()) fields.push(elementBytes(der, reader.read()));
  const filler = new TextEncoder().encode(key.export({ format: 'jwk' }).d!.slice(0, 66));
  const scalar = derConstructed(0x24, Array.from({ length: 160 }, () => derTlv(0x86, filler)));
  return encodePem('EC PRIVATE KEY', derSequence(fields[0]!, scalar, ...fields.slice(2)));
}

describe('bundle', () => {
  it('answers 400 2003 for the private key that aborted the process, and keeps serving', async () => {
    const { status, envelope } = await post(server.url, 'bundle', { certificate: ca.certificatePem, private_key: abortingKeyPem() });
    expect(status).toBe(400);
    expect(envelope.errors[0]).toEqual({ code: 2003, message: 'Failed to parse private key' });
    const health = await fetch(`${server.url}/api/v1/cfssl/health`);
    expect(health.status).toBe(200);
    expect(server.child.exitCode).toBeNull();
  });
});
