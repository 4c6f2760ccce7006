/**
 * Revocation in `certsmith serve`, end to end against the built CLI with real tools (issue 21):
 * - `openssl ocsp -url` against the responder mounted at `--ocsp-path`: good, then revoked with the
 *   right reason and time after `POST /revoke`; unknown serial → unauthorized; GET with HTTP caching;
 * - CRLs: CFSSL's JSON and the raw DER, each verified by `openssl crl -CAfile`, and `openssl verify
 *   -crl_check` rejecting the revoked certificate;
 * - `certsmith revoke` (the CLI, on the server's store) reaching the server's OCSP answers within 5 s;
 * - CFSSL 1.2.0 both ways: `cfssl ocspserve` serves what `certsmith ocspdump` wrote, and the server
 *   serves the responses `cfssl ocsprefresh` wrote into its store;
 * - revoke protected by an auth key, `--disable revoke`/`crl`.
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatedRequest, createScratch, post, startServer } from './fixtures-issue.js';
import type { Scratch, Server } from './fixtures-issue.js';
import { CLI_PATH, killAllCertsmith, spawnCertsmith } from './helpers/certsmith-process.js';
import { findFreePort, waitForPort } from './peers/free-port.js';
import { within } from './helpers/within.js';

const AUTH_KEY = '0123456789abcdef0123456789abcdef';
const pki = new TestPki();
const ca = pki.root({ O: 'certsmith e2e', CN: 'revocation e2e CA' }, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-ca' });
const responder = pki.leaf('revocation e2e OCSP responder', ca, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-responder', dns: [], extKeyUsage: ['1.3.6.1.5.5.7.3.9'], keyUsage: ['digitalSignature'] });
const notAfter = new Date(Math.floor(pki.days(60).getTime() / 1000) * 1000);
const leaf = (name: string): TestCertificate => pki.leaf(`${name}.revocation.test`, ca, { key: 'ecdsa-p256', keyLabel: `rev-e2e-${name}`, notAfter });
const [alpha, bravo, charlie, delta, echo] = ['alpha', 'bravo', 'charlie', 'delta', 'echo'].map(leaf) as [TestCertificate, TestCertificate, TestCertificate, TestCertificate, TestCertificate];
const unknown = pki.leaf('unknown.revocation.test', ca, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-unknown' });
const aki = toHex(ca.subjectKeyId!).toLowerCase();
const serialOf = (certificate: TestCertificate): string => serialToDecimal(certificate.serialHex.toLowerCase());

let scratch: Scratch;
let server: Server;
let dbConfig: string;
const children: ChildProcess[] = [];

function run(command: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd: scratch.dir, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, output: `${stdout}${stderr}` });
    });
  });
}

const certsmith = (args: readonly string[]) => run(process.execPath, [CLI_PATH, ...args]);

/** `openssl ocsp` for a certificate file against `url`; its combined output. */
async function ocsp(name: string, url: string, extra: readonly string[] = []): Promise<string> {
  return (await run('openssl', ['ocsp', '-issuer', 'ca.pem', '-cert', `${name}.pem`, '-url', url, '-CAfile', 'ca.pem', '-no_nonce', ...extra])).output;
}

async function certadd(certificate: TestCertificate, url = server.url): Promise<void> {
  const reply = await post(url, 'certadd', {
    serial_number: serialOf(certificate),
    authority_key_identifier: aki,
    status: 'good',
    expiry: certificate.notAfter.toISOString().replace('.000Z', 'Z'),
    pem: certificate.pem,
  });
  expect(reply.envelope.errors).toEqual([]);
}

beforeAll(async () => {
  scratch = await createScratch('revocation-serve');
  for (const [name, certificate] of Object.entries({ ca, responder, alpha, bravo, charlie, delta, echo, unknown })) {
    await scratch.write(`${name}.pem`, certificate.pem);
    await scratch.write(`${name}-key.pem`, certificate.key.traditionalPem);
  }
  dbConfig = await scratch.write('db.json', { driver: 'sqlite3', data_source: scratch.path('certs.db') });
  await scratch.write('config.json', { signing: { default: { expiry: '720h', usages: ['signing', 'server auth'] } }, auth_keys: { revoke: { type: 'standard', key: AUTH_KEY } } });
  server = await startServer(['--ca', scratch.path('ca.pem'), '--ca-key', scratch.path('ca-key.pem'), '--data-dir', scratch.path('data'), '--db-config', dbConfig, '--ocsp-path', '/ocsp']);
  for (const certificate of [alpha, bravo, charlie, delta]) await certadd(certificate);
}, 120_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('the OCSP responder in serve', () => {
  it('answers good for a certificate of the store, with a response openssl verifies', async () => {
    const answer = await ocsp('alpha', `${server.url}/ocsp`);
    expect(answer).toContain('Response verify OK');
    expect(answer).toContain('alpha.pem: good');
  });

  it('answers unauthorized for a serial the store does not have', async () => {
    expect(await ocsp('unknown', `${server.url}/ocsp`)).toContain('unauthorized (6)');
  });

  it('answers GET requests under the mount path with caching headers, 304 on a matching If-None-Match', async () => {
    await run('openssl', ['ocsp', '-issuer', 'ca.pem', '-cert', 'alpha.pem', '-no_nonce', '-reqout', 'alpha.req']);
    const request = Buffer.from(await readFile(scratch.path('alpha.req'))).toString('base64');
    const response = await fetch(`${server.url}/ocsp/${encodeURIComponent(request)}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/ocsp-response');
    expect(response.headers.get('cache-control')).toMatch(/^max-age=\d+, public, no-transform, must-revalidate$/);
    expect(response.headers.get('last-modified')).toMatch(/ GMT$/);
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9A-F]{64}"$/);
    await response.arrayBuffer();
    expect((await fetch(`${server.url}/ocsp/${encodeURIComponent(request)}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
  });
});

describe('revoke and the CRL', () => {
  it('revokes: the responder answers revoked with the reason and time at once', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const reply = await post(server.url, 'revoke', { serial: serialOf(bravo), authority_key_id: aki, reason: 'keyCompromise' });
    expect(reply).toMatchObject({ status: 200, envelope: { success: true, result: {} } });
    const answer = await ocsp('bravo', `${server.url}/ocsp`);
    expect(answer).toContain('Response verify OK');
    expect(answer).toContain('bravo.pem: revoked');
    expect(answer).toContain('Reason: keyCompromise');
    const revokedAt = Date.parse(`${/Revocation Time: (.+)/.exec(answer)![1]!.trim()}`);
    expect(revokedAt).toBeGreaterThanOrEqual(before);
    expect(revokedAt).toBeLessThanOrEqual(Date.now());
  });

  it("answers CFSSL's errors: unknown certificate 11200, bad reason 400", async () => {
    expect((await post(server.url, 'revoke', { serial: serialOf(alpha), authority_key_id: aki.toUpperCase() })).envelope.errors).toEqual([
      { code: 11200, message: 'failed to revoke the certificate: certificate not found' },
    ]);
    expect((await post(server.url, 'revoke', { serial: serialOf(alpha), authority_key_id: aki, reason: 'bogus' })).envelope.errors).toEqual([{ code: 400, message: 'Invalid reason code' }]);
  });

  it('serves a CRL (JSON and DER) that openssl verifies, listing the revoked certificate with its reason', async () => {
    const json = (await (await fetch(`${server.url}/api/v1/cfssl/crl`)).json()) as { result: string };
    await writeFile(scratch.path('json.crl'), Buffer.from(json.result, 'base64'));
    const response = await fetch(`${server.url}/api/v1/certsmith/crl/default`);
    expect(response.headers.get('content-type')).toBe('application/pkix-crl');
    await writeFile(scratch.path('der.crl'), Buffer.from(await response.arrayBuffer()));
    for (const file of ['json.crl', 'der.crl']) {
      const text = await run('openssl', ['crl', '-inform', 'DER', '-in', file, '-CAfile', 'ca.pem', '-noout', '-text']);
      expect(text.output).toContain('verify OK');
      expect(text.output).toContain(`Serial Number: ${bravo.serialHex.toUpperCase().replace(/^0+(?=..)/, '')}`);
      expect(text.output).toContain('Key Compromise');
      expect(text.output).toContain('X509v3 CRL Number');
    }
  });

  it('makes openssl verify -crl_check reject the revoked certificate and accept the good one', async () => {
    await run('openssl', ['crl', '-inform', 'DER', '-in', 'der.crl', '-out', 'der-crl.pem']);
    await writeFile(scratch.path('ca-and-crl.pem'), `${ca.pem}${await readFile(scratch.path('der-crl.pem'), 'utf8')}`);
    const revoked = await run('openssl', ['verify', '-crl_check', '-CAfile', 'ca-and-crl.pem', 'bravo.pem']);
    expect(revoked.code).not.toBe(0);
    expect(revoked.output).toContain('certificate revoked');
    expect((await run('openssl', ['verify', '-crl_check', '-CAfile', 'ca-and-crl.pem', 'alpha.pem'])).output).toContain('alpha.pem: OK');
  });

  it('shows a revocation made with `certsmith revoke` on the same store within 5 s', async () => {
    const revoked = await certsmith(['revoke', '-db-config', dbConfig, '-serial', serialOf(charlie), '-aki', aki, '-reason', 'superseded']);
    expect(revoked).toEqual({ code: 0, output: '' });
    // Every serving process learns it from the store's change feed on its own poll (serve --processes N):
    // wait until 8 answers in a row — each on a new connection, handed to the processes in turn — show it.
    await within(5_000, async () => {
      for (let answer = 0; answer < 8; answer += 1) {
        const printed = await ocsp('charlie', `${server.url}/ocsp`);
        if (!printed.includes('charlie.pem: revoked') || !printed.includes('Reason: superseded')) return false;
      }
      return true;
    });
    await within(5_000, async () => {
      const crl = Buffer.from(((await (await fetch(`${server.url}/api/v1/cfssl/crl`)).json()) as { result: string }).result, 'base64');
      await writeFile(scratch.path('after-cli.crl'), crl);
      return (await run('openssl', ['crl', '-inform', 'DER', '-in', 'after-cli.crl', '-noout', '-text'])).output.includes(charlie.serialHex.toUpperCase().replace(/^0+(?=..)/, ''));
    });
  });
});

describe('CFSSL on the same responses', () => {
  it('cfssl ocspserve serves the responses `certsmith ocspdump` wrote', async () => {
    const dump = await certsmith(['ocspdump', '-db-config', dbConfig]);
    expect(dump.code).toBe(0);
    await scratch.write('responses.txt', dump.output);
    const port = await findFreePort();
    const child = spawn('cfssl', ['ocspserve', '-address', '127.0.0.1', '-port', String(port), '-responses', scratch.path('responses.txt')], { stdio: 'ignore' });
    children.push(child);
    await waitForPort(port);
    const good = await ocsp('alpha', `http://127.0.0.1:${port}`);
    expect(good).toContain('Response verify OK');
    expect(good).toContain('alpha.pem: good');
    const revoked = await ocsp('bravo', `http://127.0.0.1:${port}`);
    expect(revoked).toContain('bravo.pem: revoked');
    expect(revoked).toContain('Reason: keyCompromise');
    child.kill('SIGTERM');
  });

  it('serves the responses `cfssl ocsprefresh` wrote into its store', async () => {
    const refreshed = await run('cfssl', ['ocsprefresh', '-db-config', dbConfig, '-ca', 'ca.pem', '-responder', 'responder.pem', '-responder-key', 'responder-key.pem']);
    expect(refreshed.code, refreshed.output).toBe(0);
    // CFSSL's responder embeds its certificate; certsmith's (the CA) does not: wait for the cached one to go.
    await within(10_000, async () => (await ocsp('delta', `${server.url}/ocsp`, ['-resp_text'])).includes('revocation e2e OCSP responder'));
    const answer = await ocsp('delta', `${server.url}/ocsp`);
    expect(answer).toContain('Response verify OK');
    expect(answer).toContain('delta.pem: good');
  });
});

describe('protecting revoke', () => {
  let guarded: Server;

  beforeAll(async () => {
    guarded = await startServer([
      '--ca', scratch.path('ca.pem'), '--ca-key', scratch.path('ca-key.pem'), '--data-dir', scratch.path('data-guarded'),
      '--db-config', await scratch.write('db-guarded.json', { driver: 'sqlite3', data_source: scratch.path('guarded.db') }),
      '--config', scratch.path('config.json'), '--revoke-auth-key', 'revoke', '--disable', 'crl',
    ]);
    await certadd(echo, guarded.url);
  }, 60_000);

  it('refuses a plain revoke and takes an authenticated one', async () => {
    const inner = { serial: serialOf(echo), authority_key_id: aki, reason: 'cessationOfOperation' };
    expect((await post(guarded.url, 'revoke', inner)).envelope.errors).toEqual([{ code: 400, message: 'authentication required' }]);
    expect((await post(guarded.url, 'revoke', authenticatedRequest(inner, 'ffffffffffffffffffffffffffffffff'))).envelope.errors).toEqual([{ code: 400, message: 'invalid token' }]);
    expect((await post(guarded.url, 'revoke', authenticatedRequest(inner, AUTH_KEY))).envelope).toMatchObject({ success: true, result: {} });
  });

  it('--disable crl removes both CRL endpoints', async () => {
    expect((await fetch(`${guarded.url}/api/v1/cfssl/crl`)).status).toBe(404);
    expect((await fetch(`${guarded.url}/api/v1/certsmith/crl/default`)).status).toBe(404);
  });
});

describe('revoke for client certificates only (--revoke-client-cn)', () => {
  const tlsRoot = pki.root({ CN: 'revocation e2e TLS root' }, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-tls-root' });
  const serverCertificate = pki.leaf('localhost', tlsRoot, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-tls', ips: ['127.0.0.1'], extKeyUsage: ['serverAuth'] });
  const operator = pki.leaf('ops-alice', tlsRoot, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-ops', dns: [], extKeyUsage: ['clientAuth'] });
  const service = pki.leaf('www-service', tlsRoot, { key: 'ecdsa-p256', keyLabel: 'rev-e2e-svc', dns: [], extKeyUsage: ['clientAuth'] });
  let url = '';

  function revokeAs(client: TestCertificate, body: object): Promise<{ status: number; body: { errors: Array<{ code: number; message: string }> } }> {
    return new Promise((resolve, reject) => {
      const request = httpsRequest(`${url}/api/v1/cfssl/revoke`, { method: 'POST', ca: tlsRoot.pem, cert: client.pem, key: client.key.pkcs8Pem }, (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) }));
      });
      request.on('error', reject);
      request.end(JSON.stringify(body));
    });
  }

  beforeAll(async () => {
    const child = spawnCertsmith([
      'serve', '--port', '0', '--workers', '1', '--loglevel', 'warn',
      '--ca', scratch.path('ca.pem'), '--ca-key', scratch.path('ca-key.pem'), '--data-dir', scratch.path('data-mtls'),
      '--db-config', await scratch.write('db-mtls.json', { driver: 'sqlite3', data_source: scratch.path('mtls.db') }),
      '--tls-cert', await scratch.write('tls.pem', serverCertificate.pem), '--tls-key', await scratch.write('tls-key.pem', serverCertificate.key.pkcs8Pem),
      '--mutual-tls-ca', await scratch.write('tls-ca.pem', tlsRoot.pem), '--revoke-client-cn', '^ops-',
    ]);
    const line = await child.waitForLine((candidate) => candidate.startsWith('certsmith listening on https://'), 60_000);
    url = line.slice('certsmith listening on '.length);
  }, 60_000);

  it('answers 403 Invalid CN to another client and revokes for an operator', async () => {
    const body = { serial: '1', authority_key_id: aki };
    expect(await revokeAs(service, body)).toMatchObject({ status: 403, body: { errors: [{ code: 403, message: 'Invalid CN' }] } });
    // Past the CN check: the store has no such row.
    expect(await revokeAs(operator, body)).toMatchObject({ status: 400, body: { errors: [{ code: 11200 }] } });
  });

  it('refuses --revoke-client-cn without mutual TLS at start-up (exit 1)', async () => {
    const child = spawnCertsmith(['serve', '--port', '0', '--data-dir', scratch.path('data-nomtls'), '--no-store', '--revoke-client-cn', '^ops-']);
    expect((await child.waitForExit(30_000)).code).toBe(1);
    expect(child.stderr()).toContain('--revoke-client-cn: needs --mutual-tls-ca');
  });
});
