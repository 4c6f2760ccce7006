/**
 * `certsmith serve --processes 2` end to end (docs/adr/0004-http-threads.md): the process started
 * (the leader) serves as one process does, with the default SQLite store, and once it listens forks
 * a second serving process, to which it hands every other connection and serves the store. No CA is
 * given, so the leader creates the development CA in the fresh data directory before it listens.
 * Checked: one CA for both; concurrent newcerts answered by both processes, each certificate recorded once;
 * certadd and certinfo; a revocation through either process reaching both processes' OCSP answers
 * and CRLs; `/metrics` counting the whole server; a killed worker replaced while the service keeps
 * answering; SIGTERM finishing a request in flight; start-up failures printed once, as one process
 * prints them, with the same exit code.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { serialToDecimal } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import { servingProcesses } from './helpers/serving-processes.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { TRUST_FILES, isCurrentlyValid, readTrustCertificates } from './helpers/trust-dir.js';
import { within } from './helpers/within.js';

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;

let scratch: Scratch;
let server: CertsmithProcess;
let url: string;
/** The certificates issued by the tests, PEM. */
const issued: string[] = [];

const { logs, servingPids, answeredByEach, fresh, api, newcert, expectRevocationReachesEach } = servingProcesses({
  server: () => server,
  url: () => url,
  cwd: () => scratch.dir,
  issued,
});

/** Start `serve --processes 2 …args` and wait until it listens. */
async function startCluster(args: readonly string[]): Promise<{ process: CertsmithProcess; url: string }> {
  const child = spawnCertsmith(['serve', '--processes', '2', '--port', '0', ...args]);
  const line = await child.waitForLine((candidate) => LISTENING.test(candidate), 60_000);
  return { process: child, url: LISTENING.exec(line)![1]! };
}

beforeAll(async () => {
  scratch = await createScratch('serve-processes');
  // debug: the tests see which process started and answered each request.
  ({ process: server, url } = await startCluster([
    '--data-dir', scratch.path('data'), '--ocsp-path', '/ocsp', '--loglevel', 'debug',
    '--ca-bundle', TRUST_FILES.caBundle, '--int-bundle', TRUST_FILES.intBundle, '--metadata', TRUST_FILES.metadata,
  ]));
}, 90_000);

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('serve --processes 2', () => {
  it('answers from the process started first, and prints the listening line once, when both processes listen', () => {
    expect(server.lines.filter((line) => LISTENING.test(line))).toHaveLength(1);
    const printed = server.lines.findIndex((line) => LISTENING.test(line));
    const leaderListened = server.lines.findIndex((line) => parseLogLine(line)?.['msg'] === 'listening' && parseLogLine(line)?.['pid'] === server.child.pid);
    const otherListened = server.lines.findIndex((line) => parseLogLine(line)?.['msg'] === 'listening' && parseLogLine(line)?.['pid'] !== server.child.pid);
    expect(leaderListened).toBeGreaterThanOrEqual(0);
    expect(otherListened).toBeGreaterThan(leaderListened);
    expect(printed).toBeGreaterThan(otherListened);
    expect(servingPids()).toHaveLength(2);
    expect(servingPids()).toContain(server.child.pid);
  });

  it('creates one development CA in the data directory, which both processes sign with', async () => {
    const devCa = logs().filter((line) => typeof line['msg'] === 'string' && (line['msg'] as string).startsWith('no CA configured'));
    expect(new Set(devCa.map((line) => line['pid']))).toEqual(new Set(servingPids()));
    expect(devCa.filter((line) => line['created'] === true)).toHaveLength(1);
    await writeFile(scratch.path('dev-ca.pem'), await readFile(scratch.path('data/dev-ca/ca.pem')));
  });

  it('loads the trust files in both processes and bundles alike through either', async () => {
    const loaded = logs().filter((line) => line['msg'] === 'trust files loaded');
    expect(new Set(loaded.map((line) => line['pid']))).toEqual(new Set(servingPids()));
    expect(loaded[0]!['trust']).toMatchObject({ roots: expect.any(Number), intermediates: expect.any(Number) });
    expect(loaded[1]!['trust']).toEqual(loaded[0]!['trust']);
    const intermediate = readTrustCertificates(TRUST_FILES.intBundle).find(({ x509 }) => isCurrentlyValid(x509))!;
    const answers = await Promise.all([1, 2, 3, 4].map(() => api('bundle', { certificate: intermediate.pem, flavor: 'optimal' })));
    for (const answer of answers) expect(answer.envelope).toEqual(answers[0]!.envelope);
    await answeredByEach('bundle');
  });

  it('issues concurrently through both processes and records each certificate once', async () => {
    const certificates = await Promise.all(Array.from({ length: 24 }, (_, index) => newcert(`p${index}.processes.test`)));
    await answeredByEach('newcert');
    const ca = new X509Certificate(await readFile(scratch.path('dev-ca.pem')));
    const serials = certificates.map((pem) => {
      const certificate = new X509Certificate(pem);
      expect(certificate.verify(ca.publicKey)).toBe(true);
      return serialToDecimal(certificate.serialNumber.toLowerCase());
    });
    expect(new Set(serials).size).toBe(24);
    const inventory = JSON.parse((await fresh('GET', '/api/v1/certsmith/certificates?limit=1000')).text) as { result: { certificates: Array<{ serial_number: string }> } };
    const rows = inventory.result.certificates.map((row) => row.serial_number);
    for (const serial of serials) expect(rows.filter((row) => row === serial)).toHaveLength(1);
    const aki = (await api('certinfo', { certificate: certificates[0] })).envelope.result.authority_key_id as string;
    const infos = await Promise.all(serials.slice(0, 4).map((serial) => api('certinfo', { serial, authority_key_id: aki })));
    for (const [index, info] of infos.entries()) expect(info.envelope.result).toMatchObject({ serial_number: serials[index] });
  });

  it('adds a certificate with certadd in one process and answers certinfo by serial in the other', async () => {
    const pki = new TestPki();
    const root = pki.root({ CN: 'processes imported root' }, { key: 'ecdsa-p256' });
    const leaf = pki.leaf('imported.processes.test', root, { key: 'ecdsa-p256', notAfter: new Date(Math.floor(pki.days(40).getTime() / 1000) * 1000) });
    const serial = serialToDecimal(leaf.serialHex.toLowerCase());
    const aki = toHex(root.subjectKeyId!);
    const added = await api('certadd', { serial_number: serial, authority_key_identifier: aki, ca_label: 'imported', status: 'good', expiry: leaf.notAfter.toISOString().replace('.000Z', 'Z'), pem: leaf.pem });
    expect(added.envelope).toMatchObject({ success: true });
    // Fresh connections alternate between the two processes: both answer.
    const infos = await Promise.all([1, 2, 3, 4].map(() => api('certinfo', { serial, authority_key_id: aki })));
    for (const info of infos) expect(info.envelope.result).toMatchObject({ serial_number: serial, subject: { common_name: 'imported.processes.test' } });
    await answeredByEach('certinfo');
  });

  it('shows a revocation made through one process in both processes\' OCSP answers and CRLs', async () => {
    await expectRevocationReachesEach('revoked.processes.test', 'dev-ca.pem');
    await answeredByEach('crl_der');
  });

  it('answers /metrics for the whole server from either process', async () => {
    const newcerts = logs().filter((line) => line['msg'] === 'request' && line['operation'] === 'newcert' && line['status'] === 200).length;
    const scrapes = await Promise.all([fresh('GET', '/metrics'), fresh('GET', '/metrics')]);
    await answeredByEach('metrics');
    for (const scrape of scrapes) {
      expect(scrape.status).toBe(200);
      const value = (pattern: RegExp) => Number(pattern.exec(scrape.text)?.[1]);
      expect(value(/^certsmith_http_requests_total\{endpoint="newcert",method="POST",status="200",code=""\} (\S+)$/m)).toBe(newcerts);
      expect(value(/^certsmith_build_info\{version="[^"]+"\} (\S+)$/m)).toBe(1);
      // One count of the one database, not one per process.
      expect(value(/^certsmith_certificates\{label="default",status="good"\} (\S+)$/m)).toBe(issued.length - 1);
      expect(value(/^certsmith_certificate_store_up (\S+)$/m)).toBe(1);
      expect(value(/^process_cpu_seconds_total (\S+)$/m)).toBeGreaterThan(0);
    }
  });

  it('replaces a worker process that dies, and keeps answering meanwhile', async () => {
    const survivor = server.child.pid!;
    const victim = servingPids().find((pid) => pid !== survivor);
    process.kill(victim!, 'SIGKILL');
    // A connection the leader hands to the worker in the instant it dies is lost with it; once the
    // leader has seen the exit, it answers every connection while the replacement starts.
    await server.waitForLine((line) => parseLogLine(line)?.['msg'] === 'worker process exited; starting another' && parseLogLine(line)?.['worker'] === victim, 30_000);
    for (let index = 0; index < 4; index++) expect((await fresh('GET', '/api/v1/cfssl/health')).status).toBe(200);
    await within(30_000, async () => servingPids().length === 2);
    expect(servingPids()).toContain(survivor);
    expect(servingPids()).not.toContain(victim);
    // The replacement logs 'listening' just before the leader hears it over IPC and gives it a turn:
    // connections in between all go to the survivor. Wait until the replacement has answered one.
    const replacement = servingPids().find((pid) => pid !== survivor);
    await within(30_000, async () => {
      expect((await fresh('GET', '/api/v1/cfssl/health')).status).toBe(200);
      return logs().some((line) => line['msg'] === 'request' && line['pid'] === replacement);
    });
    // The replacement serves too, and reaches the store.
    await Promise.all([1, 2, 3, 4].map((index) => newcert(`after-restart-${index}.processes.test`)));
    await Promise.all([1, 2, 3, 4].map(() => fresh('GET', '/api/v1/cfssl/health')));
    await answeredByEach('health');
    await answeredByEach('newcert');
    const health = JSON.parse((await fresh('GET', '/api/v1/cfssl/health')).text) as { result: unknown };
    expect(health.result).toMatchObject({ healthy: true, store: { healthy: true, driver: 'sqlite3' } });
  });

  it('finishes a request in flight on SIGTERM, then stops every process and exits 0', async () => {
    const workers = servingPids();
    const body = JSON.stringify({ certificate: issued[0] });
    const half = Math.floor(body.length / 2);
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const started = logs().filter((line) => line['msg'] === 'request started').length;
    socket.write(`POST /api/v1/cfssl/certinfo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`);
    await within(10_000, async () => logs().filter((line) => line['msg'] === 'request started').length > started);

    server.child.kill('SIGTERM');
    await within(10_000, async () => new Set(logs().filter((line) => line['msg'] === 'shutting down').map((line) => line['pid'])).size === workers.length);
    socket.write(body.slice(half));
    await ended;
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4))).toMatchObject({ success: true, result: { subject: { common_name: new X509Certificate(issued[0]!).subject.replace(/^[\s\S]*CN=/, '').trim() } } });

    expect(await server.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    const stopped = logs().filter((line) => line['msg'] === 'stopped');
    expect(new Set(stopped.map((line) => line['pid']))).toEqual(new Set([...workers, server.child.pid]));
    // The leader stops last: after the workers, it closed the store.
    expect(stopped.at(-1)).toMatchObject({ pid: server.child.pid });
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe('serve --processes 2 start-up failures', () => {
  /** Exit code and stderr of `serve …args`, with and without --processes 2. */
  async function bothWays(args: readonly string[]): Promise<Array<{ code: number | null; stderr: string }>> {
    return await Promise.all(
      [['--processes', '2'], []].map(async (layout) => {
        const child = spawnCertsmith(['serve', ...layout, '--port', '0', '--data-dir', scratch.path('failing'), ...args]);
        const { code } = await child.waitForExit(60_000);
        return { code, stderr: child.stderr() };
      }),
    );
  }

  it('prints an unknown flag once, as one process does, and exits 1', async () => {
    const [cluster, single] = await bothWays(['--bogus']);
    expect(cluster).toEqual(single);
    expect(cluster).toMatchObject({ code: 1, stderr: expect.stringContaining("unknown option '--bogus'") });
  });

  it('prints a broken config file once, as one process does, and exits 2', async () => {
    await writeFile(scratch.path('broken.json'), '{"signing": {"default": {"expiry": "forever"}}}');
    const [cluster, single] = await bothWays(['--config', scratch.path('broken.json')]);
    expect(cluster).toEqual(single);
    expect(cluster).toMatchObject({ code: 2, stderr: expect.stringMatching(/^certsmith: config file .*broken\.json.* \(code \d+\)\n$/) });
  });

  it('prints a port in use as one process does, and exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const [cluster, single] = await bothWays(['--port', String((taken.address() as AddressInfo).port)]);
      expect(cluster).toEqual(single);
      expect(cluster).toMatchObject({ code: 1, stderr: expect.stringMatching(/^certsmith: listen EADDRINUSE: address already in use 127\.0\.0\.1:\d+\n$/) });
    } finally {
      taken.close();
    }
  });

  it('prints a certificate store that cannot be opened once, as one process does, and exits 2', async () => {
    await writeFile(scratch.path('bad-db.json'), JSON.stringify({ driver: 'sqlite3', data_source: scratch.path('no/such/dir/certs.db') }));
    const [cluster, single] = await bothWays(['--db-config', scratch.path('bad-db.json'), '--db-migrations', 'check']);
    expect(cluster).toEqual(single);
    expect(cluster).toMatchObject({ code: 2, stderr: expect.stringMatching(/^certsmith: certificate store sqlite3 .* \(code \d+\)\n$/) });
  });
});
