import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, parseLogLine, spawnCertsmith, startCertsmith } from './helpers/certsmith-process.js';

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'certsmith-e2e-'));
});

afterAll(async () => {
  await killAllCertsmith();
  await rm(dataDir, { recursive: true, force: true });
});

/** A port nothing listens on right now (listen on 0, read it, close). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** Resolve with the raw HTTP response text once the server closes the socket; bounded. */
function readUntilEnd(socket: ReturnType<typeof connect>, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms; got: ${data}`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(data);
    });
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

describe('certsmith serve', () => {
  it('prints its address as a JSON log line and a human line, and answers health', async () => {
    const server = await startCertsmith(['--port', '0', '--data-dir', dataDir, '--workers', '1']);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // pino writes asynchronously, so the JSON line may arrive after the human one: wait for it.
    const listeningLine = await server.waitForLine((line) => parseLogLine(line)?.['msg'] === 'listening', 10_000);
    const listening = parseLogLine(listeningLine);
    // The native ECDSA addon is built by `npm ci`; the server says it uses it.
    expect(listening).toMatchObject({ url: server.url, port: Number(new URL(server.url).port), ecdsaKeys: 'native' });

    const response = await fetch(`${server.url}/api/v1/cfssl/health`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    // CFSSL answers {"healthy":true}; certsmith keeps that key and adds the state of each signer and of the store.
    expect(await response.text()).toBe(
      '{"success":true,"result":{"healthy":true,"signers":{"default":{"healthy":true}},"store":{"healthy":true,"driver":"sqlite3"}},"errors":[],"messages":[]}\n',
    );

    server.child.kill('SIGTERM');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
  });

  it('keeps serving when the reader of its stdout is gone from the start (EPIPE)', async () => {
    // Every stdout write fails with EPIPE, the `listening on` line included: the address is chosen
    // here, and readiness is polled.
    const port = await freePort();
    const server = spawnCertsmith(['serve', '--port', String(port), '--data-dir', dataDir, '--workers', '1']);
    server.child.stdout!.destroy();
    const url = `http://127.0.0.1:${port}`;
    let healthy = false;
    for (let attempt = 0; attempt < 300 && !healthy && server.child.exitCode === null; attempt++) {
      healthy = await fetch(`${url}/api/v1/cfssl/health`).then((response) => response.ok, () => false);
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect({ healthy, exit: server.child.exitCode, stderr: server.stderr() }).toEqual({ healthy: true, exit: null, stderr: "" });
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${url}/api/v1/cfssl/newcert`, {
        method: 'POST',
        body: JSON.stringify({ request: { CN: 'epipe.example', hosts: ['epipe.example'] } }),
        signal: AbortSignal.timeout(30_000),
      });
      expect(response.status).toBe(200);
    }
    expect(server.child.exitCode).toBeNull();
    expect(server.stderr()).toBe('');
    server.child.kill('SIGTERM');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
  });

  it('accepts CFSSL single-dash flags', async () => {
    const server = await startCertsmith(['-address', '127.0.0.1', '-port=0', '-data-dir', dataDir, '-workers', '1', '-loglevel', '2']);
    const response = await fetch(`${server.url}/api/v1/svc/health`);
    expect(await response.json()).toMatchObject({ success: true });
    server.child.kill('SIGINT');
    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
  });

  it('finishes a request in flight on SIGTERM, refuses new connections, then exits 0', async () => {
    const pki = new TestPki();
    const leaf = pki.leaf('inflight.example.com', pki.root('E2E Root'));
    const server = await startCertsmith(['--port', '0', '--data-dir', dataDir, '--workers', '1', '--loglevel', 'debug']);
    const { port } = new URL(server.url);

    // Send the headers and half of the body, so the request is in flight while the signal arrives.
    const body = JSON.stringify({ certificate: leaf.pem });
    const half = Math.floor(body.length / 2);
    const socket = connect(Number(port), '127.0.0.1');
    const response = readUntilEnd(socket);
    socket.write(
      `POST /api/v1/cfssl/certinfo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
    );
    await server.waitForLine((line) => parseLogLine(line)?.['msg'] === 'request started');

    server.child.kill('SIGTERM');
    await server.waitForLine((line) => parseLogLine(line)?.['msg'] === 'shutting down');
    await expect(fetch(`${server.url}/api/v1/cfssl/health`)).rejects.toThrow();

    socket.write(body.slice(half));
    const raw = await response;
    expect(raw).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(raw).toMatch(/\r\nConnection: close\r\n/i);
    const envelope = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { success: boolean; result: { subject: unknown } };
    expect(envelope.success).toBe(true);
    expect(envelope.result.subject).toMatchObject({ common_name: 'inflight.example.com' });

    expect(await server.waitForExit()).toEqual({ code: 0, signal: null });
    const stopped = server.lines.map(parseLogLine).find((line) => line?.['msg'] === 'stopped');
    expect(stopped).toBeDefined();
  });

  it('exits 1 with a usage message for an unknown flag', async () => {
    const child = spawnCertsmith(['serve', '--bogus', '--port', '0']);
    expect(await child.waitForExit()).toEqual({ code: 1, signal: null });
    expect(child.stderr()).toContain("unknown option '--bogus'");
  });

  it('exits 1 with a coded message naming the flag for a missing file', async () => {
    const child = spawnCertsmith(['serve', '-ca-key', join(dataDir, 'missing-key.pem'), '--port', '0', '--data-dir', dataDir]);
    expect(await child.waitForExit()).toEqual({ code: 1, signal: null });
    expect(child.stderr()).toMatch(/^certsmith: --ca-key: cannot read file .*missing-key\.pem.* \(code 2001\)\n$/);
  });
});
