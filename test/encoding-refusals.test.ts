/**
 * Issue 19, "500s on bad input": every request value that cannot be written as DER (OIDs, extension
 * values, strings, duplicate extensions…) is refused with a coded 4xx on every path from request JSON
 * to DER — newcert and newkey (the CSR path: 9300, as CFSSL's csr.Generate) and sign (the certificate
 * path: 1000, as CFSSL's local signer answers when x509.CreateCertificate refuses). The checks live in
 * x509-core's DER writer; this proves them through the real server, and that it stays healthy.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith } from './helpers/certsmith-process.js';
import { TLS_USAGES, certificateText, createScratch, makeRootCa, openssl, post, startServer } from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';

let scratch: Scratch;
let ca: OpensslCa;
let server: Server;

beforeAll(async () => {
  scratch = await createScratch('encoding-refusals');
  ca = await makeRootCa(scratch, 'ca', 'Encoding CA');
  const config = await scratch.write('certsmith.json', {
    signing: {
      default: { expiry: '8760h', usages: TLS_USAGES },
      profiles: { copying: { expiry: '1h', usages: ['server auth'], copy_extensions: true } },
    },
  });
  server = await startServer(['--config', config, '--ca', ca.certFile, '--ca-key', ca.keyFile, '--data-dir', scratch.path('data')]);
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** Request bodies (the CertificateRequest part) that cannot become a CSR, with what the message must say. */
const UNENCODABLE_REQUESTS: [name: string, request: object, reason: RegExp][] = [
  ['the issue 19 body: extension OID 7.1', { extensions: [{ id: [7, 1], value: 'BQA=' }] }, /invalid object identifier 7\.1 \(the first arc must be 0, 1 or 2\)/],
  ['extension OID 3.1', { extensions: [{ id: [3, 1], value: 'BQA=' }] }, /the first arc must be 0, 1 or 2/],
  ['extension OID 1.40 (second arc over 39 under arc 1)', { extensions: [{ id: [1, 40], value: 'BQA=' }] }, /the second arc must be 0-39/],
  ['extension OID 0.45.3', { extensions: [{ id: [0, 45, 3], value: 'BQA=' }] }, /the second arc must be 0-39/],
  ['extension OID with one arc', { extensions: [{ id: [1], value: 'BQA=' }] }, /at least two arcs/],
  ['extension OID with no arcs', { extensions: [{ id: [], value: 'BQA=' }] }, /at least two arcs/],
  ['extension OID with a negative arc', { extensions: [{ id: [1, 2, -1], value: 'BQA=' }] }, /not a non-negative decimal number/],
  ['extension OID with 129 arcs', { extensions: [{ id: Array.from({ length: 129 }, () => 1), value: 'BQA=' }] }, /more than 128 arcs/],
  ['the issue 19 value AA== (not one DER element)', { extensions: [{ id: [1, 2, 3, 4], value: 'AA==' }] }, /extension 1\.2\.3\.4: value is not one DER element/],
  ['an empty extension value', { extensions: [{ id: [1, 2, 3, 4], value: '' }] }, /value is not one DER element/],
  ['a malformed SAN extension value', { extensions: [{ id: [2, 5, 29, 17], value: 'BQA=' }] }, /extension 2\.5\.29\.17: malformed value/],
  ['the same extension twice', { extensions: [{ id: [1, 2, 3], value: 'BQA=' }, { id: [1, 2, 3], value: 'BQA=' }] }, /duplicate extension 1\.2\.3/],
  ['a subject OID with first arc 7', { names: [{ OID: { '7.1': 'x' } }] }, /invalid OID 7\.1/],
  ['a subject OID with an arc past 2^128', { names: [{ OID: { [`2.25.${(1n << 128n).toString()}`]: 'x' } }] }, /invalid OID 2\.25\./],
  ['a non-ASCII DNS name', { hosts: ['ü.example'] }, /cannot be encoded as an IA5String/],
  ['a non-ASCII email address', { hosts: ['ü@example.com'] }, /cannot be encoded as an IA5String/],
  ['a non-ASCII URI', { hosts: ['spiffe://ü.example/x'] }, /cannot be encoded as an IA5String/],
];

describe('newcert', () => {
  it.each(UNENCODABLE_REQUESTS)('answers 400 9300 for %s', async (_name, request, reason) => {
    const { status, envelope } = await post(server.url, 'newcert', { request: { CN: 'a.example', hosts: ['a.example'], ...request } });
    expect(status).toBe(400);
    expect(envelope).toMatchObject({ success: false, result: null });
    expect(envelope.errors[0]!.code).toBe(9300);
    expect(envelope.errors[0]!.message).toMatch(reason);
  });

  it('still issues when the extension is well formed, and the server stays healthy', async () => {
    const { status, envelope } = await post(server.url, 'newcert', {
      request: { CN: 'a.example', hosts: ['a.example'], extensions: [{ id: [2, 999, 1], value: 'BQA=' }, { id: [1, 2, 3, 4], value: 'DAF4' }] },
    });
    expect(status).toBe(200);
    expect(envelope.success).toBe(true);
    const health = await fetch(`${server.url}/api/v1/cfssl/health`);
    expect(health.status).toBe(200);
  });
});

describe('newkey', () => {
  it.each(UNENCODABLE_REQUESTS)('answers 400 9300 for %s', async (_name, request, reason) => {
    const { status, envelope } = await post(server.url, 'newkey', { CN: 'a.example', hosts: ['a.example'], ...request });
    expect(status).toBe(400);
    expect(envelope.errors[0]!.code).toBe(9300);
    expect(envelope.errors[0]!.message).toMatch(reason);
  });
});

describe('sign', () => {
  /** A CSR carrying extension 1.2.3.4 with the raw value `hex` (openssl writes it as given). */
  async function csrWithRawExtension(name: string, hex: string): Promise<string> {
    const file = scratch.path(`${name}.csr`);
    await openssl(['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', scratch.path(`${name}-key.pem`), '-out', file, '-subj', `/CN=${name}.example`, '-addext', `1.2.3.4=DER:${hex}`]);
    return readFile(file, 'utf8');
  }

  it('answers 400 1000 when a copied CSR extension value is not one DER element', async () => {
    const csr = await csrWithRawExtension('raw', '00');
    const { status, envelope } = await post(server.url, 'sign', { certificate_request: csr, profile: 'copying' });
    expect(status).toBe(400);
    expect(envelope.errors[0]).toEqual({ code: 1000, message: 'extension 1.2.3.4: value is not one DER element' });
  });

  it('copies a well-formed CSR extension', async () => {
    const csr = await csrWithRawExtension('good', '0500');
    const { status, envelope } = await post(server.url, 'sign', { certificate_request: csr, profile: 'copying' });
    expect(status).toBe(200);
    const text = await certificateText(scratch, envelope.result.certificate as string);
    expect(text).toContain('1.2.3.4');
  });

  it('answers 400 with a CFSSL code for hosts that cannot be IA5Strings', async () => {
    const csr = await csrWithRawExtension('hosts', '0500');
    for (const host of ['ü.example', 'ü@example.com', 'spiffe://ü.example/x']) {
      const { status, envelope } = await post(server.url, 'sign', { certificate_request: csr, hosts: [host] });
      expect(status).toBe(400);
      expect(envelope.errors[0]!.message).toBe(`x509: ${JSON.stringify(host)} cannot be encoded as an IA5String`);
      expect(envelope.errors[0]!.code).toBeGreaterThanOrEqual(1000);
    }
  });
});
