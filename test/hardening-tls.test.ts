/**
 * `certsmith serve` with CFSSL's TLS flags and the endpoint controls, against the built CLI on
 * 127.0.0.1 (behaviour doc 5): `-tls-cert`/`-tls-key` (HTTPS, `https://` in the listening line),
 * `-min-tls-version`, `-mutual-tls-ca` (client certificates required and verified), `-mutual-tls-cn`
 * (403 `Invalid CN`), `-disable` (404; `health` cannot be disabled) and certsmith's `--require-auth`
 * (newcert/sign answer 400 `authentication required`, authsign keeps issuing). Certificates are made
 * by openssl and issued certificates checked with `openssl verify`.
 */
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { TLS_USAGES, authenticatedRequest, createScratch, makeCsr, makeLeaf, makeRootCa, post, startServer, verifyCertificate } from './fixtures-issue.js';
import type { Envelope, OpensslCa, Scratch } from './fixtures-issue.js';

const AUTH_KEY = '00112233445566778899aabbccddeeff';

let scratch: Scratch;
/** Issues the server's TLS certificate and the client certificates. */
let tlsCa: OpensslCa;
/** Signs what the API issues. */
let issuingCa: OpensslCa;
let otherCa: OpensslCa;
let serverCert: { certFile: string; keyFile: string };
let goodClient: { cert: string; key: string };
let badCnClient: { cert: string; key: string };
let foreignClient: { cert: string; key: string };

beforeAll(async () => {
  scratch = await createScratch('hardening-tls');
  [tlsCa, issuingCa, otherCa] = await Promise.all([makeRootCa(scratch, 'tls-ca'), makeRootCa(scratch, 'issuing'), makeRootCa(scratch, 'other')]);
  serverCert = await makeLeaf(scratch, tlsCa, 'server', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  goodClient = await makeLeaf(scratch, tlsCa, 'client-good', 'ops-client-7', 'extendedKeyUsage=clientAuth\n');
  badCnClient = await makeLeaf(scratch, tlsCa, 'client-bad', 'mallory', 'extendedKeyUsage=clientAuth\n');
  foreignClient = await makeLeaf(scratch, otherCa, 'client-foreign', 'ops-client-8', 'extendedKeyUsage=clientAuth\n');
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

const HTTPS_LISTENING = /^certsmith listening on (https:\/\/\S+)$/;

/** Start `certsmith serve` expecting HTTPS; returns the process and its https URL. */
async function startTls(args: readonly string[]): Promise<CertsmithProcess & { url: string }> {
  const child = spawnCertsmith(['serve', '--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path('data'), ...args]);
  const line = await child.waitForLine((candidate) => candidate.startsWith('certsmith listening on '), 30_000);
  const match = HTTPS_LISTENING.exec(line);
  if (match === null) throw new Error(`not an https listening line: ${line}`);
  return Object.assign(child, { url: match[1]! });
}

interface Answer {
  status: number;
  envelope: Envelope;
}

/** One request over HTTPS (own connection, bounded), trusting the test TLS CA. */
function request(url: string, path: string, options: RequestOptions & { body?: unknown } = {}): Promise<Answer> {
  const { body, ...tlsOptions } = options;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${url}/api/v1/cfssl/${path}`,
      { ca: tlsCa.certificatePem, agent: false, timeout: 30_000, method: body === undefined ? 'GET' : 'POST', ...tlsOptions },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          try {
            resolve({ status: response.statusCode ?? 0, envelope: JSON.parse(text) as Envelope });
          } catch (error) {
            reject(error);
          }
        });
        response.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const as = (client: { cert: string; key: string }): RequestOptions => ({ cert: client.cert, key: client.key });

async function failedStart(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawnCertsmith(['serve', '--port', '0', '--workers', '1', '--data-dir', scratch.path('data'), ...args]);
  const status = await child.waitForExit(30_000);
  return { code: status.code, stderr: child.stderr() };
}

describe('TLS', () => {
  it('serves HTTPS with -tls-cert/-tls-key, prints an https URL, and issues over it', async () => {
    const server = await startTls(['-tls-cert', serverCert.certFile, '-tls-key', serverCert.keyFile, '-ca', issuingCa.certFile, '-ca-key', issuingCa.keyFile]);
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await request(server.url, 'health');
    expect(health).toMatchObject({ status: 200, envelope: { success: true, result: { healthy: true } } });
    const issued = await request(server.url, 'newcert', { body: { request: { CN: 'tls.example', hosts: ['tls.example'] } } });
    expect(issued.status).toBe(200);
    expect(await verifyCertificate(scratch, issued.envelope.result.certificate, issuingCa.certFile)).toMatch(/: OK\n$/);
    // Plain HTTP on the TLS port gets no API answer.
    await expect(fetch(server.url.replace('https:', 'http:') + '/api/v1/cfssl/health', { signal: AbortSignal.timeout(10_000) })).rejects.toThrow();
    server.child.kill('SIGTERM');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
  });

  it('refuses TLS 1.2 clients with -min-tls-version 1.3', async () => {
    const server = await startTls(['-tls-cert', serverCert.certFile, '-tls-key', serverCert.keyFile, '-min-tls-version', '1.3']);
    await expect(request(server.url, 'health', { maxVersion: 'TLSv1.2' })).rejects.toThrow();
    expect((await request(server.url, 'health', { minVersion: 'TLSv1.3' })).status).toBe(200);
    server.child.kill('SIGKILL');
  });

  it('with -mutual-tls-ca and -mutual-tls-cn: no or foreign client certificate → no connection; wrong CN → 403 Invalid CN', async () => {
    const server = await startTls([
      '-tls-cert', serverCert.certFile, '-tls-key', serverCert.keyFile,
      '-mutual-tls-ca', tlsCa.certFile, '-mutual-tls-cn', '^ops-client-[0-9]+$',
      '-ca', issuingCa.certFile, '-ca-key', issuingCa.keyFile,
    ]);
    await expect(request(server.url, 'health')).rejects.toThrow();
    await expect(request(server.url, 'health', as(foreignClient))).rejects.toThrow();

    const refused = await request(server.url, 'newcert', { ...as(badCnClient), body: { request: { CN: 'x.example', hosts: ['x.example'] } } });
    expect(refused).toEqual({ status: 403, envelope: { success: false, result: null, errors: [{ code: 403, message: 'Invalid CN' }], messages: [] } });
    // CFSSL wraps its whole mux: health too.
    expect((await request(server.url, 'health', as(badCnClient))).status).toBe(403);
    // The refusal is logged with the CN.
    await server.waitForLine((line) => line.includes('"clientCn":"mallory"'), 10_000);

    expect((await request(server.url, 'health', as(goodClient))).status).toBe(200);
    const issued = await request(server.url, 'newcert', { ...as(goodClient), body: { request: { CN: 'm.example', hosts: ['m.example'] } } });
    expect(issued.status).toBe(200);
    expect(await verifyCertificate(scratch, issued.envelope.result.certificate, issuingCa.certFile)).toMatch(/: OK\n$/);
    server.child.kill('SIGTERM');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
  });

  it.each([
    [['-tls-cert', 'SERVER_CERT'], '--tls-cert: needs --tls-key too'],
    [['-tls-key', 'SERVER_KEY'], '--tls-key: needs --tls-cert too'],
    [['-mutual-tls-ca', 'SERVER_CERT'], '--mutual-tls-ca: needs --tls-cert and --tls-key'],
    [['-tls-cert', 'SERVER_CERT', '-tls-key', 'SERVER_KEY', '-mutual-tls-cn', 'x'], '--mutual-tls-cn: needs --mutual-tls-ca'],
    [['-tls-cert', 'SERVER_CERT', '-tls-key', 'OTHER_KEY'], '--tls-key: the private key does not match the certificate'],
    [['-min-tls-version', '1.0'], "option '--min-tls-version <version>' argument '1.0' is invalid"],
    [['-disable', 'newcert,health'], '--disable: health cannot be disabled'],
    [['--require-auth', 'info'], '--require-auth: must list endpoints among newcert, sign'],
  ])('refuses %j at startup with exit code 1', async (args, message) => {
    const files: Record<string, string> = { SERVER_CERT: serverCert.certFile, SERVER_KEY: serverCert.keyFile, OTHER_KEY: scratch.path('client-good-key.pem') };
    const { code, stderr } = await failedStart(args.map((arg) => files[arg] ?? arg));
    expect(code).toBe(1);
    expect(stderr).toContain(message);
  });
});

describe('endpoint controls', () => {
  it('-disable answers the named endpoints with JSON 404 and keeps the others', async () => {
    const server = await startServer(['-disable', 'newcert,sign,scan', '-ca', issuingCa.certFile, '-ca-key', issuingCa.keyFile, '--data-dir', scratch.path('data')]);
    try {
      for (const name of ['newcert', 'sign']) {
        const answer = await post(server.url, name, { request: { CN: 'x' } });
        expect(answer.status).toBe(404);
        expect(answer.envelope).toEqual({ success: false, result: null, errors: [{ code: 404, message: '404 page not found' }], messages: [] });
      }
      expect((await post(server.url, 'info', {})).status).toBe(200);
      expect((await fetch(`${server.url}/api/v1/cfssl/health`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it('--require-auth newcert,sign refuses every request with 400 authentication required; authsign still issues', async () => {
    const config = await scratch.write('require-auth.json', {
      signing: {
        default: { expiry: '24h', usages: TLS_USAGES },
        profiles: { tokened: { expiry: '24h', usages: TLS_USAGES, auth_key: 'k' } },
      },
      auth_keys: { k: { type: 'standard', key: AUTH_KEY } },
    });
    const server = await startServer(['--config', config, '-ca', issuingCa.certFile, '-ca-key', issuingCa.keyFile, '--require-auth', 'newcert,sign', '--data-dir', scratch.path('data')]);
    try {
      const { csrPem } = await makeCsr(scratch, 'require-auth', 'ra.example');
      const refused = { success: false, result: null, errors: [{ code: 400, message: 'authentication required' }], messages: [] };
      expect(await post(server.url, 'newcert', { request: { CN: 'ra.example', hosts: ['ra.example'] } })).toMatchObject({ status: 400, envelope: refused });
      expect(await post(server.url, 'sign', { certificate_request: csrPem })).toMatchObject({ status: 400, envelope: refused });
      const signed = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, profile: 'tokened' }, AUTH_KEY));
      expect(signed.status).toBe(200);
      expect(await verifyCertificate(scratch, signed.envelope.result.certificate, issuingCa.certFile)).toMatch(/: OK\n$/);
      // A wrong token is still refused by authsign.
      const forged = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, profile: 'tokened' }, 'ff'.repeat(16)));
      expect(forged.envelope.errors).toEqual([{ code: 400, message: 'invalid token' }]);
    } finally {
      await server.stop();
    }
  });
});
