/**
 * Faults, and what the server does about them:
 *
 * (a) a worker thread that dies in the middle of a task (a test-only task, served through the
 *     `startServer({ operations })` embedding, calls `process.exit` in the worker): only that request
 *     fails, with the coded 500 envelope, and the pool replaces the worker — the next requests and
 *     requests running next to it succeed;
 * (b) a signer plugin that never answers (written at test time, as an operator would install one):
 *     the request is cut by `--signer-timeout` with 2500 `signer "<label>" did not answer within N ms`
 *     while the other labels keep issuing;
 * (c) SIGTERM while requests are in flight: all of them get complete 200 answers, new connections
 *     are refused, and the process exits 0.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { createLogger, defineOperation } from '@certsmith/http-api';
import { startServer as startEmbedded } from 'certsmith';
import type { RunningServer } from 'certsmith';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitTask } from '../packages/worker-pool/test-fixtures/crash-tasks.mjs';
import { killAllCertsmith, parseLogLine, spawnCertsmith } from './helpers/certsmith-process.js';
import { TLS_USAGES, createScratch, makeRootCa, post, startServer, verifyCertificate } from './fixtures-issue.js';
import type { Envelope, OpensslCa, Scratch } from './fixtures-issue.js';

let scratch: Scratch;
let ca: OpensslCa;

beforeAll(async () => {
  scratch = await createScratch('hardening-faults');
  ca = await makeRootCa(scratch, 'faults-ca', 'Faults CA');
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** True when `certificatePem` is signed by `issuer`, names `commonName`, and `privateKeyPem` is its key. */
function intact(result: { certificate: string; private_key: string }, issuer: OpensslCa, commonName: string): boolean {
  const certificate = new X509Certificate(result.certificate);
  const issuerCertificate = new X509Certificate(issuer.certificatePem);
  return (
    certificate.checkIssued(issuerCertificate) &&
    certificate.verify(issuerCertificate.publicKey) &&
    certificate.subject.split('\n').includes(`CN=${commonName}`) &&
    certificate.checkPrivateKey(createPrivateKey(result.private_key))
  );
}

describe('(a) a worker thread dies mid-task', () => {
  let server: RunningServer | undefined;
  const logs: Record<string, unknown>[] = [];

  afterAll(async () => {
    await server?.close();
  });

  it('fails only that request with the coded 500 envelope; the pool heals', { timeout: 120_000 }, async () => {
    const crash = defineOperation({
      name: 'crash',
      method: 'POST',
      tasks: [exitTask],
      handle: (_request, context) => context.runTask(exitTask, { code: 9 }),
    });
    const running = await startEmbedded({
      port: 0,
      workers: 1,
      maxQueue: 16,
      dataDir: scratch.path('data-a'),
      caFile: ca.certFile,
      caKeyFile: ca.keyFile,
      operations: [crash],
      logger: createLogger({ level: 'warn', destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) } }),
    });
    server = running;
    const { url } = running;

    const crashed = await post(url, 'crash', {});
    expect(crashed.status).toBe(500);
    expect(crashed.envelope).toMatchObject({ success: false, result: null, errors: [{ code: 500, message: expect.stringContaining('stopped before answering') }] });
    expect(logs.some((line) => line['msg'] === 'worker pool error')).toBe(true);

    // The only worker was replaced: CPU work runs again at once.
    const after = await post(url, 'newcert', { request: { CN: 'after.example', hosts: ['after.example'] } });
    expect(after.status).toBe(200);
    expect(intact(after.envelope.result, ca, 'after.example')).toBe(true);

    // A crash among queued requests fails only itself; the requests queued behind it are served.
    const names = Array.from({ length: 6 }, (_, i) => `q${i}.example`);
    const [again, ...others] = await Promise.all([
      post(url, 'crash', {}),
      ...names.map((name) => post(url, 'newcert', { request: { CN: name, hosts: [name] } })),
    ]);
    expect(again!.status).toBe(500);
    expect(others.map((answer) => answer.status)).toEqual(names.map(() => 200));
    others.forEach((answer, i) => expect(intact(answer.envelope.result, ca, names[i]!)).toBe(true));
    expect((await fetch(`${url}/api/v1/cfssl/health`)).status).toBe(200);
  });
});

/** A signer plugin whose `sign` never settles: an HSM that stopped answering. */
const HANGING_PLUGIN = `import { readFileSync } from 'node:fs';
export default {
  kind: 'certsmith-signer',
  meta: { name: 'acme-hanging-signer', apiVersion: '^1.0.0', version: '1.0.0' },
  optionsSchema: { type: 'object', properties: { cert: { type: 'string' } }, required: ['cert'], additionalProperties: false },
  async create(options, context) {
    const pem = readFileSync(context.resolvePath(options.cert), 'utf8');
    const body = /-----BEGIN CERTIFICATE-----([\\s\\S]*?)-----END CERTIFICATE-----/.exec(pem)[1];
    const der = new Uint8Array(Buffer.from(body.replace(/\\s+/g, ''), 'base64'));
    return {
      algorithms: ['ECDSA-SHA256'],
      async getCertificate() { return { der, pem }; },
      sign() { return new Promise(() => {}); },
      async close() {},
    };
  },
};
`;

describe('(b) a signer that hangs', () => {
  it('is cut by --signer-timeout with 2500 naming the label; other labels keep issuing', { timeout: 120_000 }, async () => {
    const stuckCa = await makeRootCa(scratch, 'stuck-ca', 'Stuck CA');
    await mkdir(scratch.path('plugins'), { recursive: true });
    await writeFile(scratch.path('plugins/hanging-signer.mjs'), HANGING_PLUGIN);
    const config = await scratch.write('hanging.json', {
      signing: { default: { expiry: '24h', usages: TLS_USAGES } },
      signers: {
        default: { plugin: '@certsmith/signer-local', options: { certFile: 'faults-ca.pem', keyFile: 'faults-ca-key.pem' } },
        stuck: { plugin: './plugins/hanging-signer.mjs', options: { cert: 'stuck-ca.pem' } },
      },
    });
    const server = await startServer(['--config', config, '--signer-timeout', '1500', '--workers', '2', '--data-dir', scratch.path('data-b')]);
    try {
      const started = Date.now();
      const [stuck1, stuck2, fine] = await Promise.all([
        post(server.url, 'newcert', { label: 'stuck', request: { CN: 's1.example', hosts: ['s1.example'] } }),
        post(server.url, 'newcert', { label: 'stuck', request: { CN: 's2.example', hosts: ['s2.example'] } }),
        post(server.url, 'newcert', { request: { CN: 'fine.example', hosts: ['fine.example'] } }),
      ]);
      const elapsed = Date.now() - started;
      for (const stuck of [stuck1!, stuck2!]) {
        expect(stuck.status).toBe(400);
        expect(stuck.envelope.errors).toEqual([{ code: 2500, message: 'signer "stuck" did not answer within 1500 ms' }]);
      }
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(60_000);
      expect(fine!.status).toBe(200);
      expect(await verifyCertificate(scratch, fine!.envelope.result.certificate, ca.certFile)).toMatch(/: OK\n$/);
      expect((await fetch(`${server.url}/api/v1/cfssl/health`)).status).toBe(200);
      // The hung calls do not keep the process from a clean shutdown.
      server.child.kill('SIGTERM');
      expect(await server.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
    }
  });
});

/** Resolve with the connect error code (`ECONNREFUSED`), or `connected`; bounded. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      resolve('timeout');
    }, 10_000);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(error.code ?? 'error');
    });
  });
}

describe('(c) SIGTERM under load', () => {
  it('finishes every accepted request with a complete 200, refuses new connections, exits 0', { timeout: 120_000 }, async () => {
    const child = spawnCertsmith([
      'serve', '--port', '0', '--workers', '2', '--loglevel', 'debug',
      '-ca', ca.certFile, '-ca-key', ca.keyFile, '--data-dir', scratch.path('data-c'),
    ]);
    const line = await child.waitForLine((candidate) => candidate.startsWith('certsmith listening on http://'), 30_000);
    const url = line.slice('certsmith listening on '.length);
    const port = Number(new URL(url).port);

    // Few enough to drain well within the CLI's 10 s shutdown limit on a loaded machine: one RSA key
    // generation per worker keeps both busy while the signal arrives, the ECDSA ones queue behind.
    const COUNT = 8;
    const names = Array.from({ length: COUNT }, (_, i) => `term-${i}.example`);
    let answered = 0;
    const answers = names.map(async (name, i) => {
      const key = i < 2 ? { algo: 'rsa', size: 2048 } : { algo: 'ecdsa', size: 256 };
      const response = await fetch(`${url}/api/v1/cfssl/newcert`, {
        method: 'POST',
        body: JSON.stringify({ request: { CN: name, hosts: [name], key } }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      answered += 1;
      return { status: response.status, connection: response.headers.get('connection'), envelope: JSON.parse(text) as Envelope };
    });
    // Every request has reached the server (its debug `request started` line) before the signal.
    const startedLines = (): number =>
      child.lines.map(parseLogLine).filter((entry) => entry?.['msg'] === 'request started' && entry['path'] === '/api/v1/cfssl/newcert').length;
    const deadline = Date.now() + 30_000;
    while (startedLines() < COUNT && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(startedLines()).toBe(COUNT);
    const pendingAtSignal = COUNT - answered;
    const signalledAt = Date.now();
    child.child.kill('SIGTERM');

    await child.waitForLine((entry) => parseLogLine(entry)?.['msg'] === 'shutting down', 10_000);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');

    const results = await Promise.all(answers);
    const drainMs = Date.now() - signalledAt;
    expect(results.map((result) => result.status)).toEqual(names.map(() => 200));
    results.forEach((result, i) => expect(intact(result.envelope.result, ca, names[i]!)).toBe(true));
    expect(await child.waitForExit(30_000)).toEqual({ code: 0, signal: null });
    // The test only means something if requests were still running when the signal came.
    expect(pendingAtSignal).toBeGreaterThan(0);
    console.info(`SIGTERM with ${pendingAtSignal}/${COUNT} requests in flight; all answered 200 within ${drainMs} ms`);
  });
});
