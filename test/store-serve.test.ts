/**
 * `certsmith serve` with its certificate store, end to end against the built CLI: a real PostgreSQL
 * (initdb + pg_ctl on loopback) named by CFSSL's `-db-config` file with a password in the data
 * source; certadd, the inventory and certinfo by serial through HTTP; PostgreSQL stopped under a
 * running server → coded 503 with `Retry-After`, never a 500 and never the driver's text, then
 * recovery without restarting certsmith; the password in no log line; start-up failures with exit
 * code 2; the inventory behind mutual TLS.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { request as httpsRequest } from 'node:https';
import { loadDbConfigFile, openStore, serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { killAllCertsmith, spawnCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';
import { startPostgresCluster } from './helpers/postgres.js';
import type { PostgresCluster } from './helpers/postgres.js';

const PASSWORD = 'hunter2-store-secret';

const pki = new TestPki();
const root = pki.root({ CN: 'store e2e root' }, { key: 'ecdsa-p256' });
const aki = toHex(root.subjectKeyId!);
const imported = pki.leaf('imported.example', root, { key: 'ecdsa-p256', notAfter: new Date(Math.floor(pki.days(40).getTime() / 1000) * 1000) });
const importedSerial = serialToDecimal(imported.serialHex.toLowerCase());

let scratch: Scratch;
let cluster: PostgresCluster;
let dbConfigFile: string;
let server: StartedCertsmith;

interface Reply {
  status: number;
  retryAfter: string | null;
  body: { success: boolean; result: any; errors: Array<{ code: number; message: string }> };
}

async function call(path: string, body?: unknown, base = server.url): Promise<Reply> {
  const response = await fetch(`${base}${path}`, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Reply['body'] };
}

const certaddBody = (certificate = imported, serial = importedSerial) => ({
  serial_number: serial,
  authority_key_identifier: aki,
  ca_label: 'imported',
  status: 'good',
  expiry: certificate.notAfter.toISOString().replace('.000Z', 'Z'),
  pem: certificate.pem,
});

beforeAll(async () => {
  scratch = await createScratch('store-serve');
  cluster = await startPostgresCluster();
  const source = (await cluster.createDatabase('certdb')).replace('postgres@', `postgres:${PASSWORD}@`);
  dbConfigFile = await scratch.write('db.json', { driver: 'postgres', data_source: source });
  server = await startCertsmith(['--port', '0', '--workers', '1', '--loglevel', 'info', '--data-dir', scratch.path('data'), '-db-config', dbConfigFile], 60_000);
});

afterAll(async () => {
  await killAllCertsmith();
  cluster?.stop();
  await scratch?.cleanup();
});

describe('serve -db-config with PostgreSQL', () => {
  it('logs the store it opened, without the password', async () => {
    const line = await server.waitForLine((candidate) => candidate.includes('"msg":"certificate store opened"'));
    expect(JSON.parse(line)).toMatchObject({ store: { driver: 'postgres', location: expect.stringContaining('postgres:***@127.0.0.1'), migrations: 'apply' } });
  });

  it('adds a certificate with certadd, lists it, and answers certinfo by serial', async () => {
    expect((await call('/api/v1/cfssl/certadd', certaddBody())).body).toMatchObject({ success: true, result: {} });
    const listed = await call('/api/v1/certsmith/certificates?label=imported');
    expect(listed.body.result.certificates).toEqual([expect.objectContaining({ serial_number: importedSerial, authority_key_identifier: aki, ca_label: 'imported', common_name: null })]);
    const info = await call('/api/v1/cfssl/certinfo', { serial: importedSerial, authority_key_id: aki.toUpperCase() });
    expect(info.body.result).toMatchObject({ serial_number: importedSerial, subject: { common_name: 'imported.example' } });
    const health = await call('/api/v1/cfssl/health');
    expect(health.body.result).toMatchObject({ healthy: true, store: { healthy: true, driver: 'postgres' } });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('certsmith_certificates{label="(other)",status="good"} 1');
    expect(metrics).toContain('certsmith_certificate_store_up 1');
  });

  it('answers 503 with Retry-After while PostgreSQL is down, never a 500, and recovers without a restart', async () => {
    cluster.stopServer();
    try {
      const requests: Array<() => Promise<Reply>> = [
        () => call('/api/v1/certsmith/certificates'),
        () => call(`/api/v1/certsmith/certificates/${aki}/${importedSerial}`),
        () => call('/api/v1/cfssl/certinfo', { serial: importedSerial, authority_key_id: aki }),
        () => call('/api/v1/cfssl/certadd', certaddBody()),
      ];
      for (const request of requests) {
        const reply = await request();
        expect(reply.status, JSON.stringify(reply.body)).toBe(503);
        expect(Number(reply.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(reply.body.errors).toEqual([{ code: 503, message: 'the certificate store is unavailable; retry later' }]);
      }
      const health = await call('/api/v1/cfssl/health');
      expect(health.status).toBe(200);
      // Shown, but the instance stays in the load balancer: every instance shares this database.
      expect(health.body.result).toMatchObject({ healthy: true, store: { healthy: false, driver: 'postgres', message: 'the certificate store is unavailable' } });
      // Bundling and issuing do not need the store's reads: the server stays up.
      expect((await call('/api/v1/cfssl/certinfo', { certificate: imported.pem })).status).toBe(200);
    } finally {
      cluster.startServer();
    }
    // The pool reconnects by itself; the first queries after the restart may still meet a
    // connection the server closed. Bounded: 50 attempts.
    let reply: Reply | undefined;
    for (let attempt = 0; attempt < 50; attempt += 1) {
      reply = await call('/api/v1/certsmith/certificates?label=imported');
      if (reply.status === 200) break;
      expect(reply.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(reply!.status).toBe(200);
    expect(reply!.body.result.certificates).toHaveLength(1);
  });

  it('never writes the password to its output', async () => {
    // The outage above was logged (driver text, once per 10 s): still no password.
    await server.waitForLine((line) => line.includes('certificate store unavailable'));
    expect(server.lines.join('\n')).not.toContain(PASSWORD);
    expect(server.stderr()).not.toContain(PASSWORD);
  });
});

describe('tidy from several instances on one database', () => {
  it('removes each expired certificate once between runs that overlap, and nothing else', async () => {
    const config = await loadDbConfigFile(dbConfigFile);
    const [first, second] = await Promise.all([openStore(config), openStore(config)]);
    try {
      const expired = Array.from({ length: 40 }, (_, index) => pki.leaf(`expired-${index}.example`, root, { key: 'ecdsa-p256', notBefore: pki.days(-90), notAfter: pki.days(-10 - index) }));
      const current = pki.leaf('current.example', root, { key: 'ecdsa-p256', notAfter: pki.days(30) });
      const revoked = pki.leaf('revoked-recent.example', root, { key: 'ecdsa-p256', notBefore: pki.days(-30), notAfter: pki.days(-1) });
      await Promise.all([...expired, current, revoked].map((certificate) => first.recordCertificate({ certificate: certificate.pem, label: 'tidy' })));
      await first.revokeCertificate(serialToDecimal(revoked.serialHex.toLowerCase()), aki, 1);
      // Small batches so the two runs interleave; a 3-day buffer keeps the revoked one (expired 1 day ago).
      const results = await Promise.all([first.tidy({ bufferMs: 72 * 3_600_000, batchSize: 3 }), second.tidy({ bufferMs: 72 * 3_600_000, batchSize: 3 })]);
      expect(results[0]!.certificates + results[1]!.certificates).toBe(40);
      const left = await first.listCertificates({ label: 'tidy' });
      expect(left.certificates.map((row) => row.commonName).sort()).toEqual(['current.example', 'revoked-recent.example']);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});

describe('the certsmith executable (node with its V8 flags)', () => {
  it('opens its default SQLite store in the data directory', async () => {
    // The executable runs node with --max-semi-space-size and --single-threaded-gc, which threads
    // must not inherit: the store's thread has to start under them too.
    const bin = fileURLToPath(new URL('../apps/server/bin/certsmith.js', import.meta.url));
    const child = spawn(bin, ['serve', '--port', '0', '--workers', '1', '--data-dir', scratch.path('data-bin')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const listening = await Promise.race([
        new Promise<boolean>((resolve) => child.stdout.on('data', () => output.includes('certsmith listening on') && resolve(true))),
        exited.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 30_000).unref()),
      ]);
      expect(listening, output).toBe(true);
      expect(output).toMatch(/"msg":"certificate store opened"/);
      expect(output).toContain(`"location":"${scratch.path('data-bin/certs.db')}"`);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

describe('serve start-up with a store it cannot open', () => {
  const failedStart = async (args: string[]): Promise<{ code: number | null; stderr: string }> => {
    const child = spawnCertsmith(['serve', '--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path('data-fail'), ...args]);
    const status = await child.waitForExit(30_000);
    return { code: status.code, stderr: child.stderr() };
  };

  it('exits 2 with CFSSL\'s 5200 for a db-config file it cannot read', async () => {
    const { code, stderr } = await failedStart(['-db-config', scratch.path('missing.json')]);
    expect(code).toBe(2);
    expect(stderr).toBe(`certsmith: certificate store (--db-config ${scratch.path('missing.json')}): could not read configuration file (code 5200)\n`);
  });

  it('exits 2 with 503 when the database does not answer, naming it without the password', async () => {
    cluster.stopServer();
    try {
      const { code, stderr } = await failedStart(['--db-config', dbConfigFile]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/^certsmith: certificate store postgres postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/certdb\?sslmode=disable \(--db-config .*db\.json\): the certificate database is unavailable: .* \(code 503\)\n$/);
      expect(stderr).not.toContain(PASSWORD);
    } finally {
      cluster.startServer();
    }
  });

  it('exits 1 for --no-store with --db-config', async () => {
    const { code, stderr } = await failedStart(['--no-store', '--db-config', dbConfigFile]);
    expect(code).toBe(1);
    expect(stderr).toContain('--no-store: contradicts --db-config: give one of them');
  });
});

describe('the inventory behind mutual TLS', () => {
  it('needs a client certificate the server trusts', async () => {
    const tlsRoot = pki.root({ CN: 'store e2e TLS root' }, { key: 'ecdsa-p256' });
    const serverCertificate = pki.leaf('localhost', tlsRoot, { key: 'ecdsa-p256', ips: ['127.0.0.1'], extKeyUsage: ['serverAuth'] });
    const client = pki.leaf('inventory-reader', tlsRoot, { key: 'ecdsa-p256', extKeyUsage: ['clientAuth'] });
    const files = {
      cert: await scratch.write('tls.pem', serverCertificate.pem),
      key: await scratch.write('tls-key.pem', serverCertificate.key.pkcs8Pem),
      ca: await scratch.write('tls-ca.pem', tlsRoot.pem),
    };
    const child = spawnCertsmith(['serve', '--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path('data-tls'), '--tls-cert', files.cert, '--tls-key', files.key, '--mutual-tls-ca', files.ca]);
    const line = await child.waitForLine((candidate) => candidate.startsWith('certsmith listening on https://'), 60_000);
    const url = new URL(`${line.slice('certsmith listening on '.length)}/api/v1/certsmith/certificates`);
    const get = (withClient: boolean): Promise<number> =>
      new Promise((resolve, reject) => {
        const request = httpsRequest(url, { ca: tlsRoot.pem, ...(withClient ? { cert: client.pem, key: client.key.pkcs8Pem } : {}) }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end();
      });
    await expect(get(false)).rejects.toThrow();
    expect(await get(true)).toBe(200);
    child.child.kill('SIGTERM');
    expect((await child.waitForExit()).code).toBe(0);
    expect(await readFile(scratch.path('data-tls/certs.db')).then((bytes) => bytes.length)).toBeGreaterThan(0);
  });
});
