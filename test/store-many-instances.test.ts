/**
 * Many instances on one certificate store (issue 20), end to end: two `certsmith serve` processes
 * on one real PostgreSQL (initdb + pg_ctl on loopback), behind a real HAProxy running the
 * configuration of docs/deploy.md (its bind and server addresses moved to loopback ports, its
 * health checks made faster, and a response header naming the instance that answered).
 *
 * - concurrent newcerts through HAProxy reach both instances; every 200 has exactly one row and no
 *   two serials are the same;
 * - certinfo by serial + AKI answers on the instance that did not issue the certificate;
 * - PostgreSQL stopped and started again while newcerts keep arriving: every answer is a 200 or a
 *   coded 503 with Retry-After (never a 500, never HAProxy's own error page), and both instances
 *   issue again without being restarted;
 * - one instance killed under load: HAProxy marks it down and the other keeps serving, without a
 *   failed request; restarted, it is checked back in; another stopped with SIGTERM drains without a
 *   failed request;
 * - at the end, every certificate any client received is in the database, once, as it was returned.
 *
 * Bounded: every phase waits for a count of answers or for a log line, with a deadline; the load
 * has a ceiling of requests.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { iterateCertificates, openStore, serialToDecimal } from '@certsmith/cert-store';
import type { CertificateRecord, DbConfig } from '@certsmith/cert-store';
import { decodePemBlock, parseCertificate, toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { killAllCertsmith, spawnCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';
import { markedBlocks } from './helpers/doc-examples.js';
import { startHaproxy, stopAllHaproxy } from './helpers/haproxy.js';
import type { HaproxyProcess } from './helpers/haproxy.js';
import { startPostgresCluster } from './helpers/postgres.js';
import type { PostgresCluster } from './helpers/postgres.js';
import { findFreePort } from './peers/free-port.js';

const DEPLOY_PAGE = fileURLToPath(new URL('../docs/deploy.md', import.meta.url));
const NEWCERT = JSON.stringify({ request: { CN: 'many.example', hosts: ['many.example'] } });

let scratch: Scratch;
let ca: OpensslCa;
let cluster: PostgresCluster;
let dbConfig: DbConfig;
let dbConfigFile: string;
const instances: Record<'ca1' | 'ca2', StartedCertsmith> = {} as Record<'ca1' | 'ca2', StartedCertsmith>;
let haproxy: HaproxyProcess;
/** Every newcert answer of every phase: the final check looks each 200's certificate up. */
const allReplies: Reply[] = [];

interface Reply {
  status: number;
  /** The instance that answered (`X-Served-By`, set by HAProxy), or `null`. */
  servedBy: string | null;
  retryAfter: string | null;
  text: string;
  body: { success?: boolean; result?: any; errors?: Array<{ code: number; message: string }> } | null;
}

async function send(url: string, path: string, body?: string): Promise<Reply> {
  try {
    const response = await fetch(`${url}${path}`, { method: body === undefined ? 'GET' : 'POST', body, signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    let parsed: Reply['body'] = null;
    try {
      parsed = JSON.parse(text) as Reply['body'];
    } catch {
      // HAProxy's own error pages are HTML: kept as text, and they fail the checks below.
    }
    return { status: response.status, servedBy: response.headers.get('x-served-by'), retryAfter: response.headers.get('retry-after'), text, body: parsed };
  } catch (error) {
    return { status: 0, servedBy: null, retryAfter: null, text: String((error as Error).message), body: null };
  }
}

/**
 * Closed-loop newcerts through HAProxy: `concurrency` loops, each sending its next request when the
 * previous answer is in, until `stop()` or `ceiling` answers. `until` awaits a condition on the
 * answers so far (checked at each answer), with a deadline.
 */
function startLoad(concurrency: number, ceiling = 4000) {
  const replies: Reply[] = [];
  const waiters = new Set<() => void>();
  let stopped = false;
  const loop = async (): Promise<void> => {
    while (!stopped && replies.length < ceiling) {
      const reply = await send(haproxy.url, '/api/v1/cfssl/newcert', NEWCERT);
      replies.push(reply);
      allReplies.push(reply);
      for (const waiter of waiters) waiter();
    }
  };
  const loops = Promise.all(Array.from({ length: concurrency }, loop)).then(() => {
    for (const waiter of waiters) waiter();
  });
  return {
    replies,
    until(what: string, condition: (replies: Reply[]) => boolean, timeoutMs = 20_000): Promise<void> {
      if (condition(replies)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`load: ${what} not reached within ${timeoutMs} ms (${summary(replies)})`));
        }, timeoutMs);
        const check = (): void => {
          const done = condition(replies);
          if (!done && !stopped && replies.length < ceiling) return;
          clearTimeout(timer);
          waiters.delete(check);
          if (done) resolve();
          else reject(new Error(`load: ${what} not reached before the load ended (${summary(replies)})`));
        };
        waiters.add(check);
      });
    },
    async stop(): Promise<Reply[]> {
      stopped = true;
      await loops;
      return replies;
    },
  };
}

/** "200×120 (ca1 61, ca2 59), 503×4" */
function summary(replies: readonly Reply[]): string {
  const byStatus = new Map<number, Reply[]>();
  for (const reply of replies) byStatus.set(reply.status, [...(byStatus.get(reply.status) ?? []), reply]);
  return [...byStatus]
    .map(([status, list]) => {
      const servers = new Map<string, number>();
      for (const reply of list) servers.set(reply.servedBy ?? '?', (servers.get(reply.servedBy ?? '?') ?? 0) + 1);
      return `${status}×${list.length} (${[...servers].map(([name, n]) => `${name} ${n}`).join(', ')})`;
    })
    .join(', ');
}

const ok = (replies: readonly Reply[]): Reply[] => replies.filter((reply) => reply.status === 200);
const count = (replies: readonly Reply[], predicate: (reply: Reply) => boolean): number => replies.filter(predicate).length;

/** Every answer is a 200 with a certificate or certsmith's coded 503 with Retry-After — nothing else. */
function expectOnlyCertificatesOrCoded503(replies: readonly Reply[]): void {
  for (const reply of replies) {
    if (reply.status === 200) {
      expect(reply.body?.success, reply.text).toBe(true);
      expect(reply.body?.result?.certificate, reply.text).toMatch(/^-----BEGIN CERTIFICATE-----/);
      continue;
    }
    expect(reply.status, `an answer other than 200 or 503: ${reply.status} ${reply.text.slice(0, 300)} (${summary(replies)})`).toBe(503);
    expect(reply.body, `a 503 that is not certsmith's envelope: ${reply.text.slice(0, 300)}`).toMatchObject({ success: false, errors: [{ code: 503 }] });
    expect(Number(reply.retryAfter), `Retry-After of ${reply.text}`).toBeGreaterThanOrEqual(1);
  }
}

/** The store row key of a certificate: CFSSL's decimal serial and lower-hex AKI. */
function rowKey(pem: string): { serial: string; aki: string } {
  const certificate = parseCertificate(decodePemBlock(pem)!.block.bytes);
  return { serial: serialToDecimal(certificate.serialNumberHex), aki: toHex(certificate.authorityKeyId!) };
}

/**
 * The deploy page's HAProxy configuration, made to run here: its frontend on `port`, each `server`
 * on the loopback port of the instance of that name, health checks every 100 ms instead of the
 * page's seconds, and `X-Served-By` naming the instance that answered (for the checks only).
 */
async function loopbackHaproxyConfig(port: number, servers: Record<string, string>): Promise<string> {
  const blocks = markedBlocks(await readFile(DEPLOY_PAGE, 'utf8')).filter((block) => block.language === 'haproxy');
  expect(blocks, 'docs/deploy.md has one HAProxy configuration').toHaveLength(1);
  let config = blocks[0]!.body;
  expect(config).toMatch(/^\s*bind \S+$/m);
  config = config.replace(/^(\s*bind )\S+$/m, `$1127.0.0.1:${port}`);
  const named = [...config.matchAll(/^\s*server (\S+) \S+/gm)].map((match) => match[1]!);
  expect(named.sort()).toEqual(Object.keys(servers).sort());
  config = config.replace(/^(\s*server (\S+) )\S+(.*)$/gm, (_line, start: string, name: string, rest: string) => `${start}${new URL(servers[name]!).host}${rest.replace(/ inter \S+/, ' inter 100ms')}`);
  config = config.replace(/^(backend \S+)$/m, '$1\n    http-response set-header X-Served-By %s');
  return `${config}\n`;
}

/** An instance as docs/deploy.md runs them: the shared CA, the shared database, migrations checked only. */
function serve(name: string, port = '0'): Promise<StartedCertsmith> {
  return startCertsmith(
    ['--port', port, '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path(`${name}-data`), '--ca', ca.certFile, '--ca-key', ca.keyFile, '--db-config', dbConfigFile, '--db-migrations', 'check', '--tidy-interval', '0'],
    60_000,
  );
}

beforeAll(async () => {
  scratch = await createScratch('store-many');
  [ca, cluster] = await Promise.all([makeRootCa(scratch, 'shared', 'Shared Issuing CA'), startPostgresCluster()]);
  dbConfig = { driver: 'postgres', dataSource: await cluster.createDatabase('certdb') };
  dbConfigFile = await scratch.write('db.json', { driver: 'postgres', data_source: dbConfig.dataSource });
  // As docs/deploy.md says: migrate once from the deployment job, instances start in check mode.
  const migrate = spawnCertsmith(['db', 'migrate', '--db-config', dbConfigFile]);
  expect((await migrate.waitForExit(60_000)).code, migrate.stderr()).toBe(0);
  [instances.ca1, instances.ca2] = await Promise.all([serve('ca1'), serve('ca2')]);
  const port = await findFreePort();
  haproxy = await startHaproxy(await loopbackHaproxyConfig(port, { ca1: instances.ca1.url, ca2: instances.ca2.url }), scratch.path('haproxy.cfg'), port);
});

afterAll(async () => {
  await stopAllHaproxy();
  await killAllCertsmith();
  cluster?.stop();
  await scratch?.cleanup();
});

describe('two instances on one PostgreSQL behind HAProxy', () => {
  it('issues concurrently through both instances, each certificate with exactly one row and its own serial', async () => {
    const load = startLoad(16);
    await load.until('160 answers', (replies) => replies.length >= 160);
    const replies = await load.stop();
    expect(count(replies, (reply) => reply.status !== 200), summary(replies)).toBe(0);
    expectOnlyCertificatesOrCoded503(replies);
    // leastconn over two equal instances: both take a share.
    expect(count(replies, (reply) => reply.servedBy === 'ca1'), summary(replies)).toBeGreaterThan(16);
    expect(count(replies, (reply) => reply.servedBy === 'ca2'), summary(replies)).toBeGreaterThan(16);
    const keys = replies.map((reply) => rowKey(reply.body!.result.certificate));
    expect(new Set(keys.map((key) => key.serial)).size).toBe(keys.length);
    const store = await openStore(dbConfig, { migrations: 'off' });
    try {
      const rows: CertificateRecord[] = [];
      for await (const row of iterateCertificates(store, {})) rows.push(row);
      // Nothing but these certificates was issued yet: one row each, no more.
      expect(rows.map((row) => `${row.serial}/${row.authorityKeyId}`).sort()).toEqual(keys.map((key) => `${key.serial}/${key.aki}`).sort());
    } finally {
      await store.close();
    }
  });

  it('answers certinfo by serial on the instance that did not issue the certificate', async () => {
    const issued = { ca1: [] as string[], ca2: [] as string[] };
    for (const reply of ok(allReplies)) issued[reply.servedBy as 'ca1' | 'ca2'].push(reply.body!.result.certificate);
    for (const [issuer, other] of [['ca1', 'ca2'], ['ca2', 'ca1']] as const) {
      for (const pem of issued[issuer].slice(0, 5)) {
        const { serial, aki } = rowKey(pem);
        const info = await send(instances[other].url, '/api/v1/cfssl/certinfo', JSON.stringify({ serial, authority_key_id: aki.toUpperCase() }));
        expect(info.status, info.text).toBe(200);
        expect(info.body!.result).toMatchObject({ serial_number: serial, subject: { common_name: 'many.example' } });
        expect(info.body!.result.pem.trim()).toBe(pem.trim());
        const row = await send(instances[other].url, `/api/v1/certsmith/certificates/${aki}/${serial}`);
        expect([row.status, row.body?.result?.pem?.trim()], row.text).toEqual([200, pem.trim()]);
      }
    }
  });

  it('answers coded 503s while PostgreSQL restarts under load, and both instances issue again without a restart', async () => {
    const pids = [instances.ca1.child.pid, instances.ca2.child.pid];
    const load = startLoad(8);
    await load.until('20 certificates before the restart', (replies) => ok(replies).length >= 20);
    const stopping = cluster.stopServerAsync();
    let before: number;
    try {
      await load.until('10 answers 503 while PostgreSQL is down', (replies) => count(replies, (reply) => reply.status === 503) >= 10);
    } finally {
      await stopping;
      before = load.replies.length;
      await cluster.startServerAsync();
    }
    await load.until('a certificate from each instance after the restart', (replies) => {
      const after = replies.slice(before);
      return after.some((reply) => reply.status === 200 && reply.servedBy === 'ca1') && after.some((reply) => reply.status === 200 && reply.servedBy === 'ca2');
    });
    const replies = await load.stop();
    expectOnlyCertificatesOrCoded503(replies);
    expect([instances.ca1.child.pid, instances.ca2.child.pid, instances.ca1.child.exitCode, instances.ca2.child.exitCode]).toEqual([...pids, null, null]);
    // The outage shows in health without taking either instance out of HAProxy (the store is shared).
    expect(haproxy.stderr()).not.toMatch(/is DOWN/);
  });

  it('keeps serving through HAProxy when one instance is killed, and takes it back when it returns', async () => {
    const load = startLoad(8);
    await load.until('20 certificates before the kill', (replies) => ok(replies).length >= 20);
    const downFrom = haproxy.stderr().length;
    instances.ca2.child.kill('SIGKILL');
    await haproxy.waitForLog(/Server certsmith\/ca2 is DOWN/, { from: downFrom });
    const killedAt = load.replies.length;
    await load.until('40 certificates after ca2 was marked down', (replies) => ok(replies.slice(killedAt)).length >= 40);
    expect(load.replies.slice(killedAt).every((reply) => reply.servedBy === 'ca1'), summary(load.replies.slice(killedAt))).toBe(true);
    // Restarted on its port (as systemd would), it is checked back in and takes requests again.
    const upFrom = haproxy.stderr().length;
    instances.ca2 = await serve('ca2', new URL(instances.ca2.url).port);
    await haproxy.waitForLog(/Server certsmith\/ca2 is UP/, { from: upFrom });
    const backAt = load.replies.length;
    await load.until('10 certificates from ca2 once it is back', (replies) => count(replies.slice(backAt), (reply) => reply.status === 200 && reply.servedBy === 'ca2') >= 10);
    const replies = await load.stop();
    // Requests caught on the killed instance were retried on the other (retry-on conn-failure empty-response).
    expectOnlyCertificatesOrCoded503(replies);
    expect(count(replies, (reply) => reply.status !== 200), summary(replies)).toBe(0);
  });

  it('drains an instance stopped with SIGTERM without failing a request', async () => {
    const load = startLoad(8);
    await load.until('20 certificates before the stop', (replies) => ok(replies).length >= 20);
    const downFrom = haproxy.stderr().length;
    instances.ca1.child.kill('SIGTERM');
    expect((await instances.ca1.waitForExit(20_000)).code).toBe(0);
    await haproxy.waitForLog(/Server certsmith\/ca1 is DOWN/, { from: downFrom });
    const stoppedAt = load.replies.length;
    await load.until('20 certificates after ca1 was marked down', (replies) => ok(replies.slice(stoppedAt)).length >= 20);
    const replies = await load.stop();
    expectOnlyCertificatesOrCoded503(replies);
    expect(count(replies, (reply) => reply.status !== 200), summary(replies)).toBe(0);
    expect(replies.slice(stoppedAt).every((reply) => reply.servedBy === 'ca2'), summary(replies.slice(stoppedAt))).toBe(true);
  });

  it('has every certificate a client received in the database, once, as it was returned', async () => {
    const received = ok(allReplies).map((reply) => reply.body!.result.certificate as string);
    expect(received.length).toBeGreaterThan(250);
    const store = await openStore(dbConfig, { migrations: 'off' });
    try {
      const rows = new Map<string, CertificateRecord[]>();
      for await (const row of iterateCertificates(store, {})) rows.set(row.serial, [...(rows.get(row.serial) ?? []), row]);
      const missing: string[] = [];
      for (const pem of received) {
        const { serial, aki } = rowKey(pem);
        const found = rows.get(serial) ?? [];
        if (found.length !== 1) missing.push(`${serial}: ${found.length} rows`);
        else expect([found[0]!.authorityKeyId, found[0]!.pem.trim()]).toEqual([aki, pem.trim()]);
      }
      expect(missing, 'certificates returned without exactly one row').toEqual([]);
      expect(new Set(received.map((pem) => rowKey(pem).serial)).size, 'serials never collide').toBe(received.length);
      // Rows may outnumber the certificates received (a commit whose answer was lost with the
      // killed instance or the restarting database), never the other way round.
      expect(rows.size).toBeGreaterThanOrEqual(received.length);
    } finally {
      await store.close();
    }
  });
});
