/**
 * `certsmith serve --processes 2` over TLS with client certificates (`--tls-cert`, `--mutual-tls-ca`,
 * `--mutual-tls-cn`): the first process accepts every TCP connection and hands every other one to
 * the second process before any TLS byte is read, so each process runs the handshake of the
 * connections it serves — with the same certificate, client CA and CN check as one process.
 */
import { request as httpsRequest } from 'node:https';
import type { RequestOptions } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { createScratch, makeLeaf, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { within } from './helpers/within.js';

const HTTPS_LISTENING = /^certsmith listening on (https:\/\/\S+)$/;

let scratch: Scratch;
let tlsCa: OpensslCa;
let issuingCa: OpensslCa;
let server: CertsmithProcess;
let url: string;
let goodClient: { cert: string; key: string };
let badCnClient: { cert: string; key: string };

/** One request over HTTPS on a connection of its own (so the connections alternate between the processes). */
function request(path: string, options: RequestOptions = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${url}/api/v1/cfssl/${path}`, { ca: tlsCa.certificatePem, agent: false, timeout: 30_000, ...options }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

const logs = (): Record<string, unknown>[] => server.lines.map(parseLogLine).filter((line): line is Record<string, unknown> => line !== null);
const listeningPids = (): Set<unknown> => new Set(logs().filter((line) => line['msg'] === 'listening').map((line) => line['pid']));

beforeAll(async () => {
  scratch = await createScratch('serve-processes-tls');
  [tlsCa, issuingCa] = await Promise.all([makeRootCa(scratch, 'tls-ca'), makeRootCa(scratch, 'issuing')]);
  const serverCert = await makeLeaf(scratch, tlsCa, 'server', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  goodClient = await makeLeaf(scratch, tlsCa, 'client-good', 'ops-client-7', 'extendedKeyUsage=clientAuth\n');
  badCnClient = await makeLeaf(scratch, tlsCa, 'client-bad', 'mallory', 'extendedKeyUsage=clientAuth\n');
  server = spawnCertsmith([
    'serve', '--processes', '2', '--port', '0', '--loglevel', 'info', '--no-store', '--data-dir', scratch.path('data'),
    '--tls-cert', serverCert.certFile, '--tls-key', serverCert.keyFile, '--mutual-tls-ca', tlsCa.certFile, '--mutual-tls-cn', '^ops-client-[0-9]+$',
    '--ca', issuingCa.certFile, '--ca-key', issuingCa.keyFile,
  ]);
  url = HTTPS_LISTENING.exec(await server.waitForLine((line) => line.startsWith('certsmith listening on '), 60_000))![1]!;
  expect(listeningPids().size).toBe(2);
}, 90_000);

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

describe('serve --processes 2 over mutual TLS', () => {
  it('answers a client with a good certificate from both processes, and refuses the others as one process does', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => request('health', { cert: goodClient.cert, key: goodClient.key })));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
    await within(5_000, async () => {
      const answered = new Set(logs().filter((line) => line['msg'] === 'request' && line['operation'] === 'health').map((line) => line['pid']));
      return [...listeningPids()].every((pid) => answered.has(pid));
    });
    // No client certificate: no connection, whichever process runs the handshake.
    for (const _ of [1, 2]) await expect(request('health')).rejects.toThrow();
    // A certificate whose CN does not match: 403 Invalid CN from both.
    const refused = await Promise.all([1, 2].map(() => request('health', { cert: badCnClient.cert, key: badCnClient.key })));
    for (const answer of refused) expect(answer).toMatchObject({ status: 403, text: expect.stringContaining('Invalid CN') });
    // Each process logs the refusals of the connections it served.
    await within(5_000, async () => new Set(logs().filter((line) => line['clientCn'] === 'mallory').map((line) => line['pid'])).size === 2);
  });

  it('stops both processes on SIGTERM and exits 0', async () => {
    server.child.kill('SIGTERM');
    expect(await server.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    expect(new Set(logs().filter((line) => line['msg'] === 'stopped').map((line) => line['pid']))).toEqual(listeningPids());
  });
});
