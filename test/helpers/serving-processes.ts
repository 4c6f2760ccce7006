/**
 * A client for a `certsmith serve --processes N` under test: requests on fresh connections (the
 * leader hands each new connection to the next process), which process answered what (read from
 * the JSON request log, which names the answering `pid`), and the check that a revocation made
 * through one process reaches every process's OCSP answers and CRL. Shared by the
 * serve-processes tests of each store driver.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseLogLine } from './certsmith-process.js';
import type { CertsmithProcess } from './certsmith-process.js';
import { within } from './within.js';

/** One answer, with its body as text and as bytes. */
export interface Reply {
  status: number;
  retryAfter: string | undefined;
  text: string;
  bytes: Buffer;
}

/** An answer of a CFSSL-style endpoint, its envelope parsed. */
export type ApiReply = Reply & { envelope: { success: boolean; result: any; errors: Array<{ code: number; message: string }> } };

/** Where the server under test is; getters, because a test file starts (and may restart) it in `beforeAll`. */
export interface ServingProcessesTarget {
  server: () => CertsmithProcess;
  url: () => string;
  /** The directory `run` runs commands in. */
  cwd: () => string;
  /** Every certificate `newcert` returned is appended here. */
  issued: string[];
}

/** The client; see the module comment. */
export function servingProcesses(target: ServingProcessesTarget) {
  /** The JSON log lines so far. */
  const logs = (): Record<string, unknown>[] => target.server().lines.map(parseLogLine).filter((line): line is Record<string, unknown> => line !== null);

  /** The pids of the serving processes that listen now, the leader's first (listened, and not seen to exit). */
  const servingPids = (): number[] => {
    const exited = new Set(logs().filter((line) => line['msg'] === 'worker process exited; starting another').map((line) => line['worker']));
    return [...new Set(logs().filter((line) => line['msg'] === 'listening').map((line) => line['pid'] as number))].filter((pid) => !exited.has(pid));
  };

  /**
   * Wait until every serving process has logged a finished `operation` request — with `status` when
   * given — among the log lines from index `from` (a line is written a few ms after its answer).
   */
  const answeredByEach = (operation: string, status?: number, from = 0): Promise<number> =>
    within(5_000, async () => {
      const pids = new Set(
        logs()
          .slice(from)
          .filter((line) => line['msg'] === 'request' && line['operation'] === operation && (status === undefined || line['status'] === status))
          .map((line) => line['pid']),
      );
      return servingPids().every((pid) => pids.has(pid));
    });

  /** One request on a connection of its own, so that the leader hands each to the next process. A string body is sent as is. */
  const fresh = (method: string, path: string, body?: unknown): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const request = httpRequest(`${target.url()}${path}`, { method, agent: false, headers: payload === undefined ? {} : { 'content-type': 'application/json' }, timeout: 30_000 }, (response) => {
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

  const api = async (operation: string, body: unknown): Promise<ApiReply> => {
    const reply = await fresh('POST', `/api/v1/cfssl/${operation}`, body);
    return { ...reply, envelope: JSON.parse(reply.text) };
  };

  /** Run a command in `cwd`; its stdout and stderr together, whatever its exit. */
  const run = (command: string, args: readonly string[], input?: Buffer): Promise<string> =>
    new Promise((resolve) => {
      const child = execFile(command, [...args], { cwd: target.cwd(), encoding: 'utf8', timeout: 30_000 }, (_error, stdout, stderr) => resolve(`${stdout}${stderr}`));
      if (input !== undefined) child.stdin!.end(input);
    });

  /** An ECDSA P-256 newcert for `name`, which must succeed; its certificate. */
  const newcert = async (name: string): Promise<string> => {
    const { status, envelope } = await api('newcert', { request: { CN: name, hosts: [name], key: { algo: 'ecdsa', size: 256 } } });
    expect(status, JSON.stringify(envelope.errors)).toBe(200);
    target.issued.push(envelope.result.certificate as string);
    return envelope.result.certificate as string;
  };

  /**
   * Issue a certificate for `name`, have every process answer OCSP "good" for it (and cache it), revoke
   * it through one process, then wait until OCSP answers and CRLs of every process name it revoked;
   * `caFile` (relative to `cwd` or absolute) verifies both.
   */
  const expectRevocationReachesEach = async (name: string, caFile: string): Promise<void> => {
    const pem = await newcert(name);
    await writeFile(join(target.cwd(), 'revoked.pem'), pem);
    const info = (await api('certinfo', { certificate: pem })).envelope.result as { serial_number: string; authority_key_id: string };
    const aki = info.authority_key_id.replace(/:/g, '').toLowerCase();
    const ocsp = () => run('openssl', ['ocsp', '-issuer', caFile, '-cert', 'revoked.pem', '-url', `${target.url()}/ocsp`, '-CAfile', caFile, '-no_nonce']);
    // Both processes have looked it up (and cached "good") before the revocation.
    for (const answer of await Promise.all([ocsp(), ocsp()])) expect(answer).toMatch(/revoked\.pem: good/);
    const revoked = await api('revoke', { serial: info.serial_number, authority_key_id: aki, reason: 'keyCompromise' });
    expect(revoked.envelope, JSON.stringify(revoked.envelope.errors)).toMatchObject({ success: true });
    // Each check asks both processes (fresh connections alternate); the other one learns it from the store's change feed.
    await within(10_000, async () => (await Promise.all([ocsp(), ocsp()])).every((answer) => /revoked\.pem: revoked/.test(answer)));
    const crlListsIt = async (): Promise<boolean> => {
      const crl = await fresh('GET', '/api/v1/certsmith/crl/default');
      const text = await run('openssl', ['crl', '-inform', 'DER', '-CAfile', caFile, '-noout', '-text'], crl.bytes);
      return text.includes('verify OK') && text.includes(new X509Certificate(pem).serialNumber.replace(/^0+(?=..)/, ''));
    };
    await within(10_000, async () => (await Promise.all([crlListsIt(), crlListsIt()])).every(Boolean));
  };

  return { logs, servingPids, answeredByEach, fresh, api, run, newcert, expectRevocationReachesEach };
}
