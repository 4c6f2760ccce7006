/**
 * `certsmith serve --processes 2` on a real PostgreSQL (initdb + pg_ctl on loopback), end to end:
 * the forked process opens a pool of its own (apps/server/src/cluster/worker-postgres-store.ts)
 * instead of reaching the leader's store over IPC.
 *
 * - each process holds its own connections to PostgreSQL, the forked one at most its pool and its
 *   `LISTEN` connection;
 * - concurrent newcerts answered by both processes: exactly one row per returned certificate, no
 *   two serials alike;
 * - `/metrics` from either process counts each certificate once (the store's gauges are the
 *   leader's);
 * - PostgreSQL stopped: both processes answer newcert with a coded 503 and Retry-After, and so does
 *   a forked process started meanwhile (replacing one killed); started again: both issue again,
 *   certsmith not restarted;
 * - a revocation through one process reaches both processes' OCSP answers and CRLs (each follows
 *   the change feed on its own connection);
 * - SIGTERM: both processes close (their pools with them), exit 0, no session left in PostgreSQL;
 *   the data source's password is never printed.
 *
 * Bounded: every wait is for a log line, a count of answers or a condition, with a deadline.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import pg from 'pg';
import { iterateCertificates, openStore, serialToDecimal } from '@certsmith/cert-store';
import type { CertificateRecord, DbConfig } from '@certsmith/cert-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { startPostgresCluster } from './helpers/postgres.js';
import type { PostgresCluster } from './helpers/postgres.js';
import { within } from './helpers/within.js';

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;
/** In the data source; the cluster trusts loopback, so it is sent to no one — and must be printed nowhere. */
const PASSWORD = 'pw-never-printed-7d1c';
/** A forked process's pool (WORKER_PROCESS_POSTGRES_CONNECTIONS) and its LISTEN connection. */
const WORKER_CONNECTIONS_AT_MOST = 5 + 1;

let scratch: Scratch;
let ca: OpensslCa;
let cluster: PostgresCluster;
let dbConfig: DbConfig;
let server: CertsmithProcess;
let url: string;
/** Every certificate a newcert returned. */
const issued: string[] = [];

const logs = (): Record<string, unknown>[] => server.lines.map(parseLogLine).filter((line): line is Record<string, unknown> => line !== null);

/** The pids of the serving processes, the leader's first (each logs `listening` once; the leader logs a worker's exit). */
const servingPids = (): number[] => {
  const exited = new Set(logs().filter((line) => line['msg'] === 'worker process exited; starting another').map((line) => line['worker']));
  return [...new Set(logs().filter((line) => line['msg'] === 'listening').map((line) => line['pid'] as number))].filter((pid) => !exited.has(pid));
};

/** The pids that logged a finished `operation` request with `status`, among log lines from index `from`. */
const pidsAnswered = (operation: string, status: number, from = 0): Set<unknown> =>
  new Set(
    logs()
      .slice(from)
      .filter((line) => line['msg'] === 'request' && line['operation'] === operation && line['status'] === status)
      .map((line) => line['pid']),
  );

/** Wait until both processes have logged a finished `operation` with `status` since log line `from` (log lines follow the answer by a few ms). */
const answeredByBoth = (operation: string, status: number, from = 0): Promise<number> =>
  within(5_000, async () => {
    const pids = pidsAnswered(operation, status, from);
    return servingPids().every((pid) => pids.has(pid));
  });

interface Reply {
  status: number;
  retryAfter: string | undefined;
  text: string;
  bytes: Buffer;
}

/** One request on a connection of its own: the leader hands new connections to the processes in turn. */
function fresh(method: string, path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const request = httpRequest(`${url}${path}`, { method, agent: false, headers: payload === undefined ? {} : { 'content-type': 'application/json' }, timeout: 30_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const bytes = Buffer.concat(chunks);
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode!, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, text: bytes.toString('utf8'), bytes });
      });
    });
    request.on('timeout', () => request.destroy(new Error(`${method} ${path}: no answer`)));
    request.on('error', reject);
    request.end(payload);
  });
}

async function api(operation: string, body: unknown): Promise<Reply & { envelope: { success: boolean; result: any; errors: Array<{ code: number; message: string }> } }> {
  const reply = await fresh('POST', `/api/v1/cfssl/${operation}`, body);
  return { ...reply, envelope: JSON.parse(reply.text) };
}

const newcertRequest = (name: string) => ({ request: { CN: name, hosts: [name], key: { algo: 'ecdsa', size: 256 } } });

async function newcert(name: string): Promise<string> {
  const { status, envelope } = await api('newcert', newcertRequest(name));
  expect(status, JSON.stringify(envelope.errors)).toBe(200);
  issued.push(envelope.result.certificate as string);
  return envelope.result.certificate as string;
}

function run(command: string, args: readonly string[], input?: Buffer): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(command, [...args], { cwd: scratch.dir, encoding: 'utf8', timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
    if (input !== undefined) child.stdin!.end(input);
  });
}

/**
 * The established TCP connections from process `pid` to PostgreSQL's port: its socket file
 * descriptors (/proc/PID/fd) matched by inode against the kernel's table (/proc/net/tcp).
 */
async function postgresConnectionsOf(pid: number): Promise<number> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const match = /^socket:\[(\d+)\]$/.exec(target);
    if (match !== null) inodes.add(match[1]!);
  }
  const remote = `:${cluster.port.toString(16).toUpperCase().padStart(4, '0')}`;
  const tables = await Promise.all(['/proc/net/tcp', '/proc/net/tcp6'].map((file) => readFile(file, 'utf8').catch(() => '')));
  return tables
    .flatMap((table) => table.split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    // sl local remote state … inode (field 9); state 01 is ESTABLISHED.
    .filter((fields) => fields[2]?.endsWith(remote) === true && fields[3] === '01' && inodes.has(fields[9]!)).length;
}

/** Sessions of certsmith (its application_name) in PostgreSQL now. */
async function certsmithSessions(): Promise<number> {
  const client = new pg.Client({ host: '127.0.0.1', port: cluster.port, user: 'postgres', database: 'postgres' });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'certsmith'`);
    return Number(rows[0]!.n);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  scratch = await createScratch('processes-pg');
  [ca, cluster] = await Promise.all([makeRootCa(scratch, 'ca', 'Processes PostgreSQL CA'), startPostgresCluster()]);
  const dataSource = (await cluster.createDatabase('certdb')).replace('postgres@', `postgres:${PASSWORD}@`);
  dbConfig = { driver: 'postgres', dataSource };
  const dbConfigFile = await scratch.write('db.json', { driver: 'postgres', data_source: dataSource });
  // The default --db-migrations apply: the leader migrates the fresh database before it listens.
  server = spawnCertsmith([
    'serve', '--processes', '2', '--port', '0', '--loglevel', 'debug', '--data-dir', scratch.path('data'),
    '--ca', ca.certFile, '--ca-key', ca.keyFile, '--db-config', dbConfigFile, '--ocsp-path', '/ocsp', '--tidy-interval', '0',
  ]);
  url = LISTENING.exec(await server.waitForLine((line) => LISTENING.test(line), 60_000))![1]!;
}, 120_000);

afterAll(async () => {
  await killAllCertsmith();
  cluster?.stop();
  await scratch?.cleanup();
});

describe('serve --processes 2 on PostgreSQL', () => {
  it('starts both processes, each connected to PostgreSQL itself', async () => {
    const pids = servingPids();
    expect(pids).toHaveLength(2);
    expect(pids[0]).toBe(server.child.pid);
    const opened = logs().filter((line) => line['msg'] === 'certificate store opened');
    expect(new Set(opened.map((line) => line['pid']))).toEqual(new Set(pids));
    for (const line of opened) expect(line['store']).toMatchObject({ driver: 'postgres' });
    // The forked process's change feed is its own LISTEN connection, open from start-up.
    await within(10_000, async () => (await postgresConnectionsOf(pids[1]!)) >= 1);
    expect(await postgresConnectionsOf(pids[0]!)).toBeGreaterThanOrEqual(1);
  });

  it('issues concurrently through both processes: one row per certificate, serials never collide', async () => {
    const certificates = await Promise.all(Array.from({ length: 24 }, (_, index) => newcert(`p${index}.processes-pg.test`)));
    await answeredByBoth('newcert', 200);
    const caCertificate = new X509Certificate(ca.certificatePem);
    const serials = certificates.map((pem) => {
      const certificate = new X509Certificate(pem);
      expect(certificate.verify(caCertificate.publicKey)).toBe(true);
      return serialToDecimal(certificate.serialNumber.toLowerCase());
    });
    expect(new Set(serials).size).toBe(24);
    const store = await openStore(dbConfig, { migrations: 'off' });
    try {
      const rows = new Map<string, CertificateRecord[]>();
      for await (const row of iterateCertificates(store, {})) rows.set(row.serial, [...(rows.get(row.serial) ?? []), row]);
      for (const [index, serial] of serials.entries()) expect([serial, rows.get(serial)?.map((row) => row.pem.trim())]).toEqual([serial, [certificates[index]!.trim()]]);
      expect(rows.size).toBe(24);
    } finally {
      await store.close();
    }
    // The forked process wrote through its own pool: its connections to PostgreSQL, bounded by it.
    const worker = servingPids()[1]!;
    const connections = await postgresConnectionsOf(worker);
    expect(connections).toBeGreaterThanOrEqual(2);
    expect(connections).toBeLessThanOrEqual(WORKER_CONNECTIONS_AT_MOST);
  });

  it('answers /metrics from either process counting each certificate once', async () => {
    const scrapes = await Promise.all([fresh('GET', '/metrics'), fresh('GET', '/metrics')]);
    await answeredByBoth('metrics', 200);
    const newcerts = logs().filter((line) => line['msg'] === 'request' && line['operation'] === 'newcert' && line['status'] === 200).length;
    for (const scrape of scrapes) {
      expect(scrape.status).toBe(200);
      const values = (pattern: RegExp) => [...scrape.text.matchAll(pattern)].map((match) => Number(match[1]));
      expect(values(/^certsmith_certificates\{label="default",status="good"\} (\S+)$/gm)).toEqual([issued.length]);
      expect(values(/^certsmith_certificate_store_up (\S+)$/gm)).toEqual([1]);
      expect(values(/^certsmith_http_requests_total\{endpoint="newcert",method="POST",status="200",code=""\} (\S+)$/gm)).toEqual([newcerts]);
    }
  });

  it('answers coded 503s with Retry-After from both processes while PostgreSQL is down — a replaced process too — and both issue again once it is back', async () => {
    await cluster.stopServerAsync();
    let from: number;
    /** Eight newcerts on fresh connections, which alternate between the two processes: each answers four, all coded 503s. */
    const expectCoded503s = async (): Promise<void> => {
      from = server.lines.length;
      const replies = [];
      for (let index = 0; index < 8; index++) replies.push(await api('newcert', newcertRequest(`down${index}.processes-pg.test`)));
      for (const reply of replies) {
        expect([reply.status, reply.envelope.success, reply.envelope.errors[0]?.code], reply.text).toEqual([503, false, 503]);
        expect(Number(reply.retryAfter), reply.text).toBeGreaterThanOrEqual(1);
      }
      await answeredByBoth('newcert', 503, from);
    };
    try {
      await expectCoded503s();
      // A forked process that dies while the database is down is replaced, and the replacement
      // starts (it connects on its first query, not at start-up) and answers as the others do.
      const victim = servingPids()[1]!;
      process.kill(victim, 'SIGKILL');
      await server.waitForLine((line) => parseLogLine(line)?.['msg'] === 'worker process exited; starting another' && parseLogLine(line)?.['worker'] === victim, 30_000);
      await within(30_000, async () => servingPids().length === 2);
      expect(servingPids()).not.toContain(victim);
      await expectCoded503s();
    } finally {
      await cluster.startServerAsync();
    }
    from = server.lines.length;
    for (let index = 0; index < 4; index++) await newcert(`up${index}.processes-pg.test`);
    await answeredByBoth('newcert', 200, from);
    expect(server.child.exitCode).toBeNull();
    expect(servingPids()).toHaveLength(2);
  });

  it("shows a revocation made through one process in both processes' OCSP answers and CRLs", async () => {
    const pem = await newcert('revoked.processes-pg.test');
    await writeFile(scratch.path('revoked.pem'), pem);
    const info = (await api('certinfo', { certificate: pem })).envelope.result as { serial_number: string; authority_key_id: string };
    const aki = info.authority_key_id.replace(/:/g, '').toLowerCase();
    const ocsp = () => run('openssl', ['ocsp', '-issuer', ca.certFile, '-cert', 'revoked.pem', '-url', `${url}/ocsp`, '-CAfile', ca.certFile, '-no_nonce']);
    // Both processes have looked it up (and cached "good") before the revocation.
    for (const answer of await Promise.all([ocsp(), ocsp()])) expect(answer).toMatch(/revoked\.pem: good/);
    const revoked = await api('revoke', { serial: info.serial_number, authority_key_id: aki, reason: 'keyCompromise' });
    expect(revoked.envelope, JSON.stringify(revoked.envelope.errors)).toMatchObject({ success: true });
    // Each check asks both processes; the other one learns it through its own LISTEN connection.
    await within(10_000, async () => (await Promise.all([ocsp(), ocsp()])).every((answer) => /revoked\.pem: revoked/.test(answer)));
    const crlListsIt = async (): Promise<boolean> => {
      const crl = await fresh('GET', '/api/v1/certsmith/crl/default');
      const text = await run('openssl', ['crl', '-inform', 'DER', '-CAfile', ca.certFile, '-noout', '-text'], crl.bytes);
      return text.includes('verify OK') && text.includes(new X509Certificate(pem).serialNumber.replace(/^0+(?=..)/, ''));
    };
    await within(10_000, async () => (await Promise.all([crlListsIt(), crlListsIt()])).every(Boolean));
    await answeredByBoth('crl_der', 200);
  });

  it('stops both processes on SIGTERM, closing their pools, and never prints the password', async () => {
    const pids = servingPids();
    server.child.kill('SIGTERM');
    expect((await server.waitForExit(30_000)).code).toBe(0);
    // `stopped` is logged after the server closed its store.
    expect(new Set(logs().filter((line) => line['msg'] === 'stopped').map((line) => line['pid']))).toEqual(new Set(pids));
    await within(10_000, async () => (await certsmithSessions()) === 0);
    expect(server.lines.join('\n')).not.toContain(PASSWORD);
    expect(server.stderr()).not.toContain(PASSWORD);
  });
});
