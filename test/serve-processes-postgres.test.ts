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
import { X509Certificate } from 'node:crypto';
import { readFile, readdir, readlink } from 'node:fs/promises';
import pg from 'pg';
import { iterateCertificates, openStore, serialToDecimal } from '@certsmith/cert-store';
import type { CertificateRecord, DbConfig } from '@certsmith/cert-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import { servingProcesses } from './helpers/serving-processes.js';
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

const { logs, servingPids, answeredByEach, fresh, api, newcert, expectRevocationReachesEach } = servingProcesses({
  server: () => server,
  url: () => url,
  cwd: () => scratch.dir,
  issued,
});

const newcertRequest = (name: string) => ({ request: { CN: name, hosts: [name], key: { algo: 'ecdsa', size: 256 } } });

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
    await answeredByEach('newcert', 200);
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
    await answeredByEach('metrics', 200);
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
      await answeredByEach('newcert', 503, from);
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
    await answeredByEach('newcert', 200, from);
    expect(server.child.exitCode).toBeNull();
    expect(servingPids()).toHaveLength(2);
  });

  it("shows a revocation made through one process in both processes' OCSP answers and CRLs", async () => {
    await expectRevocationReachesEach('revoked.processes-pg.test', ca.certFile);
    await answeredByEach('crl_der', 200);
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
