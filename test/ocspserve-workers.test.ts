/**
 * `certsmith ocspserve` end to end on `@certsmith/http1-server`, with two worker processes (the
 * default on a 2-core machine, and forced here): `openssl ocsp` gets good and revoked answers, HTTP
 * caching fields and 304 are as before, an unknown serial is unauthorized, other methods 405,
 * pipelined GET and POST are answered in order on one connection, a chunked POST (node:http's
 * default without a length) is decoded, and SIGTERM stops the command and its workers. With
 * `-db-config`, each worker reads the store: a revocation (`certsmith revoke` + `ocsprefresh`) shows
 * in every worker's answers within the source's 5 s.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { openStore } from '@certsmith/cert-store';
import type { CertificateRecord } from '@certsmith/cert-store';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratch } from './fixtures-issue.js';
import type { Scratch } from './fixtures-issue.js';
import { CLI_PATH, killAllCertsmith, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { within } from './helpers/within.js';

const pki = new TestPki();
const ca = pki.root({ O: 'certsmith e2e', CN: 'ocspserve e2e CA' }, { key: 'ecdsa-p256', keyLabel: 'ocspserve-e2e-ca' });
const good = pki.leaf('good.ocspserve.test', ca, { key: 'ecdsa-p256', keyLabel: 'ocspserve-e2e-good' });
const revoked = pki.leaf('revoked.ocspserve.test', ca, { key: 'ecdsa-p256', keyLabel: 'ocspserve-e2e-revoked' });
const unknown = pki.leaf('unknown.ocspserve.test', ca, { key: 'ecdsa-p256', keyLabel: 'ocspserve-e2e-unknown' });
const UNAUTHORIZED = Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x06]);

let scratch: Scratch;
let server: CertsmithProcess;
let url: string;

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve) => {
    execFile(command, [...args], { cwd: scratch.dir, encoding: 'utf8', timeout: 60_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
  });
}

/** The DER OCSP request openssl makes for a certificate file. */
async function requestDer(name: string): Promise<Buffer> {
  await run('openssl', ['ocsp', '-issuer', 'ca.pem', '-cert', `${name}.pem`, '-no_nonce', '-reqout', `${name}.req`]);
  return readFile(scratch.path(`${name}.req`));
}

/** One raw exchange on a fresh connection: everything the server sent until it closed or `until` matched. */
function exchange(bytes: Buffer, until: (text: string) => boolean): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer: ${Buffer.concat(chunks).toString('latin1')}`));
    }, 10_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      const all = Buffer.concat(chunks);
      if (until(all.toString('latin1'))) {
        clearTimeout(timer);
        socket.destroy();
        resolve(all);
      }
    });
    socket.on('error', reject);
    socket.write(bytes);
  });
}

/** Split raw answers into heads and bodies by Content-Length. */
function answersOf(raw: Buffer): Array<{ status: number; head: string; body: Buffer }> {
  const answers = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at, 'latin1');
    if (end === -1) break;
    const head = raw.toString('latin1', at, end);
    const length = Number(/\r\nContent-Length: (\d+)/i.exec(head)?.[1] ?? 0);
    answers.push({ status: Number(head.slice(9, 12)), head, body: raw.subarray(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return answers;
}

const complete = (count: number) => (text: string) => {
  const answers = answersOf(Buffer.from(text, 'latin1'));
  return answers.length >= count && answers.every((answer) => answer.body.length === Number(/Content-Length: (\d+)/.exec(answer.head)?.[1] ?? 0));
};

beforeAll(async () => {
  scratch = await createScratch('ocspserve-workers');
  for (const [name, certificate] of Object.entries({ ca, good, revoked, unknown })) {
    await scratch.write(`${name}.pem`, certificate.pem);
    await scratch.write(`${name}-key.pem`, certificate.key.traditionalPem);
  }
  const sign = (name: string, status: string[]) =>
    (JSON.parse(execFileSync(process.execPath, [CLI_PATH, 'ocspsign', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-cert', `${name}.pem`, ...status], { cwd: scratch.dir, encoding: 'utf8' })) as { ocspResponse: string }).ocspResponse;
  await scratch.write('responses.txt', `${sign('good', ['-status', 'good'])}\n${sign('revoked', ['-status', 'revoked', '-reason', 'keyCompromise'])}\n`);
  server = spawnCertsmith(['ocspserve', '-responses', 'responses.txt', '-port', '0', '-ca', 'ca.pem', '--workers', '2'], process.env, scratch.dir);
  url = /listening on (\S+)/.exec(await server.waitForLine((line) => line.includes('listening on')))![1]!;
}, 120_000);

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('certsmith ocspserve --workers 2', () => {
  it('runs two worker processes', () => {
    const children = execFileSync('ps', ['--ppid', String(server.child.pid), '-o', 'args='], { encoding: 'utf8' });
    expect(children.match(/ocsp-worker-process\.js/g)).toHaveLength(2);
  });

  it('answers openssl ocsp good and revoked, with the reason', async () => {
    for (let i = 0; i < 4; i++) {
      // Fresh connections each time: both workers answer some of them.
      const answer = await run('openssl', ['ocsp', '-issuer', 'ca.pem', '-cert', 'good.pem', '-url', url, '-CAfile', 'ca.pem', '-no_nonce']);
      expect(answer).toContain('Response verify OK');
      expect(answer).toContain('good.pem: good');
    }
    const answer = await run('openssl', ['ocsp', '-issuer', 'ca.pem', '-cert', 'revoked.pem', '-url', url, '-CAfile', 'ca.pem', '-no_nonce']);
    expect(answer).toContain('Response verify OK');
    expect(answer).toContain('revoked.pem: revoked');
    expect(answer).toContain('Reason: keyCompromise');
  });

  it('answers a GET with the caching fields, and 304 to a matching If-None-Match', async () => {
    const der = await requestDer('good');
    const path = `/${encodeURIComponent(der.toString('base64'))}`;
    const [first] = answersOf(await exchange(Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`, 'latin1'), complete(1)));
    expect(first!.status).toBe(200);
    expect(first!.head).toMatch(/\r\nContent-Type: application\/ocsp-response\r\n/);
    expect(first!.head).toMatch(/\r\nLast-Modified: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n/);
    expect(first!.head).toMatch(/\r\nExpires: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT\r\n/);
    expect(first!.head).toMatch(/\r\nCache-Control: max-age=\d+, public, no-transform, must-revalidate\r\n/);
    expect(first!.head).toMatch(/\r\nDate: /);
    const etag = /\r\nETag: ("[0-9A-F]{64}")/.exec(first!.head)![1]!;
    const [again] = answersOf(await exchange(Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${etag}\r\n\r\n`, 'latin1'), (text) => text.includes('\r\n\r\n')));
    expect(again!.status).toBe(304);
    expect(again!.head).toContain(`ETag: ${etag}`);
    expect(again!.head).not.toContain('Content-Length');
  });

  it('answers pipelined GET, POST and an unknown serial in order on one connection', async () => {
    const [goodDer, revokedDer, unknownDer] = [await requestDer('good'), await requestDer('revoked'), await requestDer('unknown')];
    const post = (der: Buffer) => Buffer.concat([Buffer.from(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/ocsp-request\r\nContent-Length: ${der.length}\r\n\r\n`, 'latin1'), der]);
    const raw = await exchange(Buffer.concat([Buffer.from(`GET /${encodeURIComponent(goodDer.toString('base64'))} HTTP/1.1\r\nHost: x\r\n\r\n`, 'latin1'), post(revokedDer), post(unknownDer)]), complete(3));
    const answers = answersOf(raw);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.head).toContain('ETag');
    expect(answers[1]!.head).toContain('ETag');
    expect(answers[0]!.body.equals(answers[1]!.body)).toBe(false);
    expect(answers[2]!.body.equals(UNAUTHORIZED)).toBe(true);
  });

  it('decodes a chunked POST body', async () => {
    const der = await requestDer('good');
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(url, { method: 'POST', headers: { 'Content-Type': 'application/ocsp-request' } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      request.on('error', reject);
      request.write(der.subarray(0, 10));
      request.end(der.subarray(10));
    });
    expect(status).toBe(200);
  });

  it('answers HEAD and DELETE 405 with Allow, and a body over 64 KiB 413', async () => {
    for (const method of ['HEAD', 'DELETE']) {
      const [answer] = answersOf(await exchange(Buffer.from(`${method} / HTTP/1.1\r\nHost: x\r\n\r\n`, 'latin1'), (text) => text.includes('\r\n\r\n')));
      expect(answer!.status).toBe(405);
      expect(answer!.head).toContain('\r\nAllow: GET, POST');
    }
    const [tooLarge] = answersOf(await exchange(Buffer.from('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n', 'latin1'), (text) => text.includes('\r\n\r\n')));
    expect(tooLarge!.status).toBe(413);
    expect(tooLarge!.head).toContain('Connection: close');
  });

  it('stops on SIGTERM with its workers', async () => {
    const pid = server.child.pid!;
    server.child.kill('SIGTERM');
    expect(await server.waitForExit(15_000)).toEqual({ code: 0, signal: null });
    expect(execFileSync('ps', ['-eo', 'ppid='], { encoding: 'utf8' }).split('\n').filter((line) => Number(line) === pid)).toEqual([]);
  });
});

describe('certsmith ocspserve -db-config --workers 2', () => {
  let record: CertificateRecord;
  let stored: CertsmithProcess;
  let storeUrl: string;
  const cli = (args: string[]) => execFileSync(process.execPath, [CLI_PATH, ...args], { cwd: scratch.dir, encoding: 'utf8' });
  const ask = (name: string) => run('openssl', ['ocsp', '-issuer', 'ca.pem', '-cert', `${name}.pem`, '-url', storeUrl, '-CAfile', 'ca.pem', '-no_nonce']);

  beforeAll(async () => {
    await scratch.write('db.json', { driver: 'sqlite3', data_source: scratch.path('certs.db') });
    const store = await openStore({ driver: 'sqlite3', dataSource: scratch.path('certs.db') }, { sqlite: { thread: false } });
    record = await store.recordCertificate({ certificate: good.pem });
    await store.close();
    cli(['ocsprefresh', '-db-config', 'db.json', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem']);
    stored = spawnCertsmith(['ocspserve', '-db-config', 'db.json', '-port', '0', '--workers', '2'], process.env, scratch.dir);
    storeUrl = /listening on (\S+)/.exec(await stored.waitForLine((line) => line.includes('listening on')))![1]!;
  }, 120_000);

  it('answers from the store in every worker, and shows a revocation in all of them once the 5 s cache expires', async () => {
    for (let i = 0; i < 4; i++) expect(await ask('good')).toContain('good.pem: good');
    cli(['revoke', '-db-config', 'db.json', '-serial', record.serial, '-aki', record.authorityKeyId, '-reason', 'keyCompromise']);
    cli(['ocsprefresh', '-db-config', 'db.json', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem']);
    // Fresh connections, handed to the workers in turn: four revoked answers in a row means both see it.
    let streak = 0;
    const elapsed = await within(10_000, async () => {
      streak = (await ask('good')).includes('good.pem: revoked') ? streak + 1 : 0;
      return streak >= 4;
    });
    expect(elapsed).toBeLessThan(10_000);
    stored.child.kill('SIGTERM');
    expect(await stored.waitForExit(15_000)).toEqual({ code: 0, signal: null });
  });
});

describe('certsmith ocspserve --workers 2 on a port in use', () => {
  it('exits 2 with the listen error on one line, leaving no worker behind', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((blocker.address() as AddressInfo).port);
      const failed = spawnCertsmith(['ocspserve', '-responses', 'responses.txt', '-port', port, '--workers', '2'], process.env, scratch.dir);
      const status = await failed.waitForExit(30_000);
      expect(status.code).toBe(2);
      // node:cluster says `bind EADDRINUSE 127.0.0.1:<port>` where one process says `listen EADDRINUSE: …`.
      expect(failed.stderr().trim()).toMatch(new RegExp(`^\\{"code":0,"message":"[a-z]+ EADDRINUSE[^"]*127\\.0\\.0\\.1:${port}"\\}$`));
      expect(execFileSync('ps', ['-eo', 'ppid='], { encoding: 'utf8' }).split('\n').filter((line) => Number(line) === failed.child.pid)).toEqual([]);
    } finally {
      blocker.close();
    }
  });
});
