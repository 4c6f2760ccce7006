/**
 * `certsmith serve --processes 2` with the CA key on a SoftHSMv2 token (made by
 * test/helpers/softhsm.ts, as an operator makes one): each serving process (the one started, and the
 * one it forks once it listens) opens its own PKCS#11 session, as separate instances do, and both
 * sign with the key on the token.
 */
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import type { CertsmithProcess } from './helpers/certsmith-process.js';
import { createSoftHsmToken } from './helpers/softhsm.js';
import type { SoftHsmToken } from './helpers/softhsm.js';
import { within } from './helpers/within.js';

const LISTENING = /^certsmith listening on (http:\/\/\S+)$/;

let hsm: SoftHsmToken | undefined;
let server: CertsmithProcess;
let url: string;
let caPem: string;

/** newcert on a connection of its own, so that the first process hands each request to the next process. */
function newcert(name: string): Promise<{ status: number; json: Record<string, any> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${url}/api/v1/cfssl/newcert`, { method: 'POST', agent: false, timeout: 30_000 }, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, json: JSON.parse(text) as Record<string, any> }));
    });
    request.on('timeout', () => request.destroy(new Error('newcert: no answer')));
    request.on('error', reject);
    request.end(JSON.stringify({ request: { CN: name, hosts: [name] } }));
  });
}

beforeAll(async () => {
  hsm = createSoftHsmToken({ label: 'certsmith-processes' });
  const { dir } = hsm;
  caPem = (await hsm.createCa({ keyLabel: 'ca', algo: 'ecdsa', size: 256, cn: 'HSM Processes Root' })).certificatePem;
  writeFileSync(join(dir, 'certsmith.json'), JSON.stringify({ signers: { default: hsm.signer('ca', { maxConcurrency: 2 }) } }));
  server = spawnCertsmith(['serve', '--processes', '2', '--port', '0', '--config', join(dir, 'certsmith.json'), '--data-dir', join(dir, 'data'), '--loglevel', 'info'], hsm.env);
  url = LISTENING.exec(await server.waitForLine((line) => LISTENING.test(line), 60_000))![1]!;
}, 180_000);

afterAll(async () => {
  await killAllCertsmith();
  hsm?.cleanup();
});

describe('serve --processes 2 with a PKCS#11 signer', () => {
  it('opens a session in each serving process, and both sign with the key on the token', async () => {
    const logs = () => server.lines.map(parseLogLine).filter((line): line is Record<string, unknown> => line !== null);
    const workers = new Set(logs().filter((line) => line['msg'] === 'listening').map((line) => line['pid']));
    expect(workers.size).toBe(2);
    expect(new Set(logs().filter((line) => line['msg'] === 'signer ready' && line['signer'] === 'default').map((line) => line['pid']))).toEqual(workers);

    const replies = await Promise.all(Array.from({ length: 16 }, (_, index) => newcert(`hsm-${index}.processes.test`)));
    expect(replies.filter((reply) => reply.status !== 200).map((reply) => reply.json.errors)).toEqual([]);
    const ca = new X509Certificate(caPem);
    for (const reply of replies) expect(new X509Certificate(reply.json.result.certificate as string).verify(ca.publicKey)).toBe(true);
    await within(5_000, async () => {
      const answered = new Set(logs().filter((line) => line['msg'] === 'request' && line['operation'] === 'newcert').map((line) => line['pid']));
      return [...workers].every((pid) => answered.has(pid));
    });

    const health = await (await fetch(`${url}/api/v1/cfssl/health`)).json();
    expect(health).toMatchObject({ result: { healthy: true, signers: { default: { healthy: true } } } });
  });
});
