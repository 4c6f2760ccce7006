/**
 * Every certificate certsmith signs is recorded, with its label, before it is returned — through
 * the built CLI and real servers on 127.0.0.1:
 *
 * - `newcert`, `sign` and `authsign` on a server with two local signers (labels `default`, `b`) and
 *   its default SQLite store: every 200 has its row, with the signer's label; certinfo by serial and
 *   the inventory find them; the metrics count them;
 * - a PostgreSQL store stopped while newcerts keep arriving: every answer is a 200 whose certificate
 *   has its row or a coded 503 with `Retry-After` — never a 500, never a certificate without its row
 *   — and issuing resumes when the database is back, without restarting certsmith;
 * - a certsmith in front of another (`@certsmith/signer-multiroot`): the one that signs records, the
 *   one that forwards does not;
 * - `certsmith gencert` / `sign` with `-db-config`.
 */
import { execFile } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { openStore, serialToDecimal } from '@certsmith/cert-store';
import type { DbConfig, Store } from '@certsmith/cert-store';
import { prepareOcspResponse } from '@certsmith/revocation';
import { decodePemBlock, parseCertificate, toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TLS_USAGES, authenticatedRequest, createScratch, makeCsr, makeRootCa, post, startServer } from './fixtures-issue.js';
import type { OpensslCa, Scratch, Server } from './fixtures-issue.js';
import { CLI_PATH, killAllCertsmith } from './helpers/certsmith-process.js';
import { startPostgresCluster } from './helpers/postgres.js';
import type { PostgresCluster } from './helpers/postgres.js';

const run = promisify(execFile);
const AUTH_KEY = '00112233445566778899aabbccddeeff';

let scratch: Scratch;
const roots: Record<'default' | 'b', OpensslCa> = {} as Record<'default' | 'b', OpensslCa>;

/** The store row key of a certificate: CFSSL's decimal serial and lower-hex AKI. */
function rowKey(pem: string): { serial: string; aki: string } {
  const certificate = parseCertificate(decodePemBlock(pem)!.block.bytes);
  return { serial: serialToDecimal(certificate.serialNumberHex), aki: toHex(certificate.authorityKeyId!) };
}

/** A second connection to a server's database (SQLite in WAL mode lets it read beside the server). */
async function peek<T>(config: DbConfig, read: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(config, { migrations: 'off', sqlite: { thread: false } });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

const sqliteIn = (dataDir: string): DbConfig => ({ driver: 'sqlite3', dataSource: join(dataDir, 'certs.db') });

function localSigner(root: OpensslCa) {
  return {
    plugin: '@certsmith/signer-local',
    options: { certFile: root.certFile, keyFile: root.keyFile },
    signing: { default: { expiry: '720h', usages: TLS_USAGES }, profiles: { client: { expiry: '24h', usages: ['signing', 'client auth'], auth_key: 'clients' } } },
  };
}

beforeAll(async () => {
  scratch = await createScratch('store-recording');
  roots.default = await makeRootCa(scratch, 'default', 'Recording Root');
  roots.b = await makeRootCa(scratch, 'b', 'Recording Root B');
}, 60_000);

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('a server with its default SQLite store', () => {
  let server: Server;
  const dataDir = (): string => scratch.path('data-sqlite');
  beforeAll(async () => {
    const config = await scratch.write('two-labels.json', {
      auth_keys: { clients: { type: 'standard', key: AUTH_KEY } },
      signers: { default: localSigner(roots.default), b: localSigner(roots.b) },
    });
    server = await startServer(['--config', config, '--data-dir', dataDir(), '--workers', '2']);
  }, 60_000);

  it('records every newcert, sign and authsign before answering, with the label of the signer', async () => {
    const newcerts = await Promise.all(
      Array.from({ length: 24 }, (_, index) => post(server.url, 'newcert', { ...(index % 2 === 1 ? { label: 'b' } : {}), request: { CN: `r${index}.example`, hosts: [`r${index}.example`] } })),
    );
    const { csrPem } = await makeCsr(scratch, 'recorded', 'signed.example');
    const signed = await post(server.url, 'sign', { certificate_request: csrPem, hosts: ['signed.example'], label: 'b' });
    const authsigned = await post(server.url, 'authsign', authenticatedRequest({ certificate_request: csrPem, hosts: ['client.example'], profile: 'client' }, AUTH_KEY));
    const answers = [...newcerts.map((reply, index) => ({ reply, label: index % 2 === 1 ? 'b' : 'default' })), { reply: signed, label: 'b' }, { reply: authsigned, label: 'default' }];

    for (const { reply } of answers) expect(reply.status, reply.text).toBe(200);
    const stored = await peek(sqliteIn(dataDir()), async (store) =>
      Promise.all(
        answers.map(async ({ reply }) => {
          const { serial, aki } = rowKey(reply.envelope.result.certificate as string);
          return { row: await store.getCertificate(serial, aki), ocsp: await store.getOcspResponse(serial, aki) };
        }),
      ),
    );
    const rows = stored.map((entry) => entry.row);
    rows.forEach((row, index) => {
      expect(row, `answer ${index} has no row`).not.toBeNull();
      expect(row).toMatchObject({ label: answers[index]!.label, status: 'good', reason: 0, revokedAt: null, pem: answers[index]!.reply.envelope.result.certificate });
    });
    // The CA signs OCSP for itself by default: each certificate has its "good" response from the start.
    stored.forEach(({ row, ocsp }, index) => {
      expect(ocsp, `answer ${index} has no OCSP response`).not.toBeNull();
      const response = prepareOcspResponse(ocsp!.body);
      expect({ serial: response.serial, status: response.single.status }).toEqual({ serial: row!.serial, status: 'good' });
    });
    expect(rows[0]).toMatchObject({ commonName: 'r0.example', sans: ['r0.example'], metadata: null });
    expect(rows.filter((row) => row!.label === 'b')).toHaveLength(13);
  });

  it('finds what it issued by serial (certinfo), in the inventory and in the metrics', async () => {
    const issued = await post(server.url, 'newcert', { request: { CN: 'find-me.example', hosts: ['find-me.example'] } });
    const { serial, aki } = rowKey(issued.envelope.result.certificate as string);
    const info = await post(server.url, 'certinfo', { serial, authority_key_id: aki });
    expect(info.envelope.result).toMatchObject({ serial_number: serial, subject: { common_name: 'find-me.example' } });
    const listed = (await (await fetch(`${server.url}/api/v1/certsmith/certificates?name=find-me.example`)).json()) as { result: { certificates: Array<{ serial_number: string; ca_label: string }> } };
    expect(listed.result.certificates).toEqual([expect.objectContaining({ serial_number: serial, ca_label: 'default' })]);
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/certsmith_certificates\{label="default",status="good"\} 14\n/);
    expect(metrics).toMatch(/certsmith_certificates\{label="b",status="good"\} 13\n/);
    expect(metrics).toMatch(/certsmith_ca_certificate_expiry_seconds\{label="b"\} \d+/);
  });
});

describe('a PostgreSQL store that goes away while certificates are being issued', () => {
  let cluster: PostgresCluster;
  let config: DbConfig;
  let server: Server;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
    config = { driver: 'postgres', dataSource: await cluster.createDatabase('recording') };
    const dbConfig = await scratch.write('pg.json', { driver: config.driver, data_source: config.dataSource });
    server = await startServer(['--ca', roots.default.certFile, '--ca-key', roots.default.keyFile, '--db-config', dbConfig, '--data-dir', scratch.path('data-pg'), '--workers', '2']);
  }, 120_000);
  afterAll(() => cluster?.stop());

  it('answers a recorded certificate or a coded 503 with Retry-After — never a 500, never a certificate without its row — and resumes without a restart', async () => {
    type Answer = { status: number; retryAfter: string | null; body: { result: { certificate?: string } | null; errors: Array<{ code: number; message: string }> } };
    const answers: Answer[] = [];
    let stop = false;
    // 8 clients issuing until told to stop (bounded: 400 requests each at most).
    const clients = Array.from({ length: 8 }, async (_, client) => {
      for (let index = 0; index < 400 && !stop; index += 1) {
        const response = await fetch(`${server.url}/api/v1/cfssl/newcert`, { method: 'POST', body: JSON.stringify({ request: { CN: `c${client}-${index}.example` } }) });
        answers.push({ status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as Answer['body'] });
      }
    });
    const waitForAnswers = async (count: number): Promise<void> => {
      for (let spin = 0; spin < 600 && answers.length < count; spin += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    };
    await waitForAnswers(40);
    cluster.stopServer();
    const atStop = answers.length;
    await waitForAnswers(atStop + 40);
    cluster.startServer();
    const atStart = answers.length;
    // Until 40 more 200s arrive after the restart (bounded by the clients' own limit).
    for (let spin = 0; spin < 600 && answers.slice(atStart).filter((answer) => answer.status === 200).length < 40; spin += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    stop = true;
    await Promise.all(clients);

    const ok = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(refused.length, 'no request failed while PostgreSQL was down').toBeGreaterThan(0);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(answer.body.errors).toEqual([{ code: 503, message: 'the certificate store is unavailable; retry later' }]);
    }
    expect(answers.slice(atStart).filter((answer) => answer.status === 200).length, 'issuing resumed after the restart').toBeGreaterThanOrEqual(40);
    const stored = await peek(config, async (store) =>
      Promise.all(
        ok.map(async (answer) => {
          const { serial, aki } = rowKey(answer.body.result!.certificate!);
          return { serial, row: await store.getCertificate(serial, aki), ocsp: await store.getOcspResponse(serial, aki) };
        }),
      ),
    );
    expect(stored.filter((entry) => entry.row === null).map((entry) => entry.serial), 'certificates answered without their row').toEqual([]);
    expect(stored.filter((entry) => entry.ocsp === null).map((entry) => entry.serial), 'certificates answered without their OCSP response').toEqual([]);
  });
});

describe('a certsmith in front of another', () => {
  it('records where the certificate is signed: the back, not the forwarding front', async () => {
    const backConfig = await scratch.write('back.json', { auth_keys: { clients: { type: 'standard', key: AUTH_KEY } }, signers: { a: localSigner(roots.default) } });
    const back = await startServer(['--config', backConfig, '--data-dir', scratch.path('data-back')]);
    const frontConfig = await scratch.write('front.json', { signers: { default: { plugin: '@certsmith/signer-multiroot', options: { remotes: [back.url], timeoutMs: 20_000 } } } });
    const front = await startServer(['--config', frontConfig, '--data-dir', scratch.path('data-front')]);
    const reply = await post(front.url, 'newcert', { label: 'a', request: { CN: 'forwarded.example', hosts: ['forwarded.example'] } });
    expect(reply.status, reply.text).toBe(200);
    const { serial, aki } = rowKey(reply.envelope.result.certificate as string);
    expect(await peek(sqliteIn(scratch.path('data-back')), (store) => store.getCertificate(serial, aki))).toMatchObject({ label: 'a', commonName: 'forwarded.example' });
    expect(await peek(sqliteIn(scratch.path('data-front')), (store) => store.listCertificates())).toEqual({ certificates: [], nextCursor: null });
  });
});

describe('certsmith gencert and sign with -db-config', () => {
  it('records the certificate with the -label (default: default) before printing it', async () => {
    const dbConfig = await scratch.write('cli-db.json', { driver: 'sqlite3', data_source: scratch.path('cli.db') });
    const csrJson = await scratch.write('cli-csr.json', { CN: 'cli.example', hosts: ['cli.example'] });
    const gencert = await run(process.execPath, [CLI_PATH, 'gencert', '-ca', roots.default.certFile, '-ca-key', roots.default.keyFile, '-db-config', dbConfig, csrJson], { cwd: scratch.dir });
    const { csrPem } = await makeCsr(scratch, 'cli-sign', 'cli-sign.example');
    const csrFile = await scratch.write('cli-sign.csr', csrPem);
    const signed = await run(process.execPath, [CLI_PATH, 'sign', '-ca', roots.b.certFile, '-ca-key', roots.b.keyFile, '-db-config', dbConfig, '-label', 'web', '-hostname', 'cli-sign.example', csrFile], { cwd: scratch.dir });
    const fromGencert = rowKey((JSON.parse(gencert.stdout) as { cert: string }).cert);
    const fromSign = rowKey((JSON.parse(signed.stdout) as { cert: string }).cert);
    const rows = await peek({ driver: 'sqlite3', dataSource: scratch.path('cli.db') }, async (store) => [await store.getCertificate(fromGencert.serial, fromGencert.aki), await store.getCertificate(fromSign.serial, fromSign.aki)]);
    expect(rows[0]).toMatchObject({ label: 'default', commonName: 'cli.example' });
    expect(rows[1]).toMatchObject({ label: 'web', commonName: 'cli-sign.example' });
  });

  it('prints no certificate and exits 2 with a coded error when the database cannot be reached', async () => {
    // A loopback port nothing listens on.
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const dbConfig = await scratch.write('cli-down.json', { driver: 'postgres', data_source: `postgres://certsmith:hunter2@127.0.0.1:${port}/certdb?sslmode=disable&connect_timeout=2` });
    const csrJson = await scratch.write('cli-down-csr.json', { CN: 'down.example', hosts: ['down.example'] });
    const failed = await run(process.execPath, [CLI_PATH, 'gencert', '-ca', roots.default.certFile, '-ca-key', roots.default.keyFile, '-db-config', dbConfig, csrJson], { cwd: scratch.dir }).then(
      () => null,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failed).toMatchObject({ code: 2, stdout: '' });
    expect(JSON.parse(failed!.stderr)).toMatchObject({ code: 503 });
    expect(failed!.stderr).not.toContain('hunter2');
  });
});
