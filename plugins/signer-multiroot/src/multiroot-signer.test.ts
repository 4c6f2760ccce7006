import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

import { decodeAuthenticatedRequestBody, verifyAuthenticatedRequest } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { createMultirootSigner } from './multiroot-signer.js';
import type { MultirootSigner } from './multiroot-signer.js';
import { validateMultirootOptions } from './options.js';
import type { MultirootSignerOptions } from './options.js';

/** What a stub answers: a status and body, or `hang` to never answer. */
type StubReply = { status: number; body: string; contentType?: string } | 'hang';

interface RecordedRequest {
  path: string;
  body: string;
}

/** A CFSSL-speaking HTTP stub on 127.0.0.1 whose answers each test scripts. */
interface Stub {
  url: string;
  port: number;
  requests: RecordedRequest[];
  reply: (request: RecordedRequest) => StubReply;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

const pki = new TestPki();
const rootA = pki.root('stub root a');
const rootB = pki.root('stub root b');
const leaf = pki.leaf('leaf.example', rootA);
const AUTH_KEY = Uint8Array.from(Buffer.from('00112233445566778899aabbccddeeff', 'hex'));

const envelope = (result: unknown): string => `${JSON.stringify({ success: true, result, errors: [], messages: [] })}\n`;
const failure = (code: number, message: string): string => `${JSON.stringify({ success: false, result: null, errors: [{ code, message }], messages: [] })}\n`;

/** Default behaviour: a small multiroot CA with labels `a` and `b` (b is the default label). */
function defaultReply(request: RecordedRequest): StubReply {
  const parsed = JSON.parse(request.body) as Record<string, unknown>;
  if (request.path === '/api/v1/cfssl/info') {
    const label = (parsed.label as string) || 'b';
    const root = label === 'a' ? rootA : label === 'b' ? rootB : null;
    if (root === null) return { status: 400, body: failure(400, 'bad label') };
    return { status: 200, body: envelope({ certificate: root.pem.trim(), usages: ['signing'], expiry: label === 'a' ? '168h' : '336h' }) };
  }
  return { status: 200, body: envelope({ certificate: leaf.pem }) };
}

const stubs: Stub[] = [];
const signers: MultirootSigner[] = [];

async function startStub(reply: (request: RecordedRequest) => StubReply = defaultReply, port = 0): Promise<Stub> {
  const sockets = new Set<import('node:net').Socket>();
  const handle = (incoming: IncomingMessage, response: ServerResponse): void => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const recorded = { path: incoming.url ?? '', body: Buffer.concat(chunks).toString('utf8') };
      stub.requests.push(recorded);
      const answer = stub.reply(recorded);
      if (answer === 'hang') return;
      response.writeHead(answer.status, { 'content-type': answer.contentType ?? 'application/json' });
      response.end(answer.body);
    });
  };
  let server: Server = createServer(handle);
  const listen = async (listenPort: number): Promise<number> => {
    server = createServer(handle);
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.listen(listenPort, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  };
  const bound = await listen(port);
  const stub: Stub = {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    requests: [],
    reply,
    async stop() {
      if (!server.listening) return;
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async restart() {
      await listen(bound);
    },
  };
  stubs.push(stub);
  return stub;
}

/** A loopback port with nothing listening (connection refused). */
async function closedPort(): Promise<string> {
  const stub = await startStub();
  await stub.stop();
  return stub.url;
}

function signerFor(options: Partial<MultirootSignerOptions> & Pick<MultirootSignerOptions, 'remotes'>, authKey: Uint8Array | null = AUTH_KEY, now?: () => number): MultirootSigner {
  const settings = validateMultirootOptions({ timeoutMs: 2_000, connectTimeoutMs: 1_000, backoffInitialMs: 200, backoffMaxMs: 800, ...options });
  const signer = createMultirootSigner(settings, { authKey, ...(now ? { now } : {}) });
  signers.push(signer);
  return signer;
}

async function rejection(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected a rejection');
}

let csrPem: string;

beforeAll(() => {
  // The remote never parses it here; the real multirootca tests use real CSRs.
  csrPem = '-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n';
});

afterEach(async () => {
  await Promise.all(signers.splice(0).map((signer) => signer.close()));
  await Promise.all(stubs.splice(0).map((stub) => stub.stop()));
});

afterAll(async () => {
  await Promise.all(stubs.map((stub) => stub.stop()));
});

describe('signRequest', () => {
  it('posts a token over the exact request bytes to /authsign when an auth key is set', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url], profile: 'server' });
    const result = await signer.signRequest({ certificate_request: csrPem, label: 'a', hosts: ['x.example'] });
    expect(result.certificatePem).toBe(leaf.pem);
    const sent = stub.requests[0] as RecordedRequest;
    expect(sent.path).toBe('/api/v1/cfssl/authsign');
    const outer = JSON.parse(sent.body) as { token: string; request: string; timestamp: number };
    expect(verifyAuthenticatedRequest(outer, AUTH_KEY)).toBe(true);
    const inner = JSON.parse(new TextDecoder().decode(decodeAuthenticatedRequestBody(outer))) as Record<string, unknown>;
    expect(inner).toMatchObject({ certificate_request: csrPem, label: 'a', profile: 'server', hosts: ['x.example'] });
  });

  it('posts the plain request to /sign when no auth key is set', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] }, null);
    await signer.signRequest({ certificate_request: csrPem, profile: 'client' });
    expect(stub.requests[0]?.path).toBe('/api/v1/cfssl/sign');
    expect(JSON.parse(stub.requests[0]?.body ?? '')).toEqual({ certificate_request: csrPem, profile: 'client' });
  });

  it('sends the fixed label instead of the request label when label is set', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url], label: 'b' }, null);
    await signer.signRequest({ certificate_request: csrPem, label: 'primary' });
    expect(JSON.parse(stub.requests[0]?.body ?? '')).toMatchObject({ label: 'b' });
  });

  it('keeps the CFSSL code and names the remote when the remote answers success false', async () => {
    const stub = await startStub(() => ({ status: 400, body: failure(9002, 'CSR Decode failed'), contentType: 'text/plain; charset=utf-8' }));
    const signer = signerFor({ remotes: [stub.url] });
    const error = await rejection(signer.signRequest({ certificate_request: 'garbage' }));
    expect(error).toMatchObject({ code: 9002, remoteCode: 9002, remote: stub.url, status: 400, message: `remote ${stub.url} answered: CSR Decode failed` });
  });

  it('throws 7400 with a bounded body excerpt when the remote answers a non-JSON 502', async () => {
    const stub = await startStub(() => ({ status: 502, body: `<html><body>Bad Gateway${' padding'.repeat(500)}</body></html>`, contentType: 'text/html' }));
    const second = await startStub();
    const signer = signerFor({ remotes: [stub.url, second.url] });
    const error = await rejection(signer.signRequest({ certificate_request: csrPem }));
    expect(error.code).toBe(7400);
    expect(error.message).toMatch(new RegExp(`^remote ${stub.url} answered HTTP 502: <html><body>Bad Gateway padding`));
    expect(error.message.length).toBeLessThan(300);
    // An answer is an answer: the request reached a server, so it is not sent elsewhere.
    expect(second.requests).toHaveLength(0);
  });

  it('throws 7200 when a 200 answer is not JSON', async () => {
    const stub = await startStub(() => ({ status: 200, body: 'ok', contentType: 'text/plain' }));
    const signer = signerFor({ remotes: [stub.url] });
    await expect(signer.signRequest({ certificate_request: csrPem })).rejects.toMatchObject({ code: 7200 });
  });

  it('does not retry on another remote when the first times out after the request was sent', async () => {
    const hanging = await startStub(() => 'hang');
    const second = await startStub();
    const signer = signerFor({ remotes: [hanging.url, second.url], timeoutMs: 600 });
    const started = performance.now();
    const error = await rejection(signer.signRequest({ certificate_request: csrPem }));
    const elapsed = performance.now() - started;
    expect(error).toMatchObject({ code: 7300, remote: hanging.url });
    expect(error.message).toBe(`remote ${hanging.url} did not answer within 600 ms; not retried on another remote because it may have signed`);
    expect(elapsed).toBeLessThan(1_500);
    expect(hanging.requests).toHaveLength(1);
    expect(second.requests).toHaveLength(0);
    expect(signer.remoteStates()[0]).toMatchObject({ down: true, consecutiveFailures: 1 });
  });

  it('fails over to the next remote when the first refuses connections, then skips it while it is down', async () => {
    const refused = await closedPort();
    const second = await startStub();
    const signer = signerFor({ remotes: [refused, second.url] });
    await expect(signer.signRequest({ certificate_request: csrPem })).resolves.toEqual({ certificatePem: leaf.pem });
    expect(signer.remoteStates().map((state) => state.down)).toEqual([true, false]);
    await signer.signRequest({ certificate_request: csrPem });
    expect(second.requests).toHaveLength(2);
  });

  it('uses the first remote again when it is back after its back-off period', async () => {
    let clock = 1_000_000;
    const first = await startStub();
    const second = await startStub();
    const signer = signerFor({ remotes: [first.url, second.url], backoffInitialMs: 5_000, backoffMaxMs: 5_000 }, AUTH_KEY, () => clock);
    await first.stop();
    await signer.signRequest({ certificate_request: csrPem });
    expect(second.requests).toHaveLength(1);
    await first.restart();
    // Still within the down period: the second remote keeps serving.
    clock += 4_999;
    await signer.signRequest({ certificate_request: csrPem });
    expect(first.requests).toHaveLength(0);
    clock += 2;
    await signer.signRequest({ certificate_request: csrPem });
    expect(first.requests).toHaveLength(1);
    expect(signer.remoteStates()[0]).toMatchObject({ down: false, consecutiveFailures: 0 });
  });

  it('throws 6000 naming every remote when none accepts a connection', async () => {
    const one = await closedPort();
    const two = await closedPort();
    const signer = signerFor({ remotes: [one, two] });
    const started = performance.now();
    const error = await rejection(signer.signRequest({ certificate_request: csrPem }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error).toMatchObject({ code: 6000, message: `no remote signer reachable: ${one} (ECONNREFUSED), ${two} (ECONNREFUSED)` });
    // A second call tries the down remotes as a last resort rather than failing without trying.
    await expect(signer.signRequest({ certificate_request: csrPem })).rejects.toMatchObject({ code: 6000 });
  });

  it('never puts the auth key or the token into the error', async () => {
    const stub = await startStub(() => ({ status: 400, body: failure(1, 'invalid token') }));
    const signer = signerFor({ remotes: [stub.url] });
    const error = await rejection(signer.signRequest({ certificate_request: csrPem }));
    expect(error).toMatchObject({ code: 7100, remoteCode: 1, message: `remote ${stub.url} answered: invalid token` });
    const token = (JSON.parse(stub.requests[0]?.body ?? '{}') as { token: string }).token;
    const serialised = JSON.stringify({ message: error.message, stack: error.stack });
    expect(serialised).not.toContain('00112233445566778899aabbccddeeff');
    expect(serialised).not.toContain(token);
  });
});

describe('info', () => {
  it('returns the remote answer with the PEM trimmed for the forwarded label', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] });
    const info = await signer.info({ label: 'a', profile: '' });
    expect(info).toEqual({ certificate: rootA.pem.trim(), usages: ['signing'], expiry: '168h' });
    expect(JSON.parse(stub.requests[0]?.body ?? '')).toEqual({ label: 'a', profile: '' });
  });

  it('keeps the remote code when the label is unknown', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] });
    await expect(signer.info({ label: 'nosuch' })).rejects.toMatchObject({ code: 400, message: `remote ${stub.url} answered: bad label` });
  });

  it('fails over after a hanging remote because /info is idempotent', async () => {
    const hanging = await startStub(() => 'hang');
    const second = await startStub();
    const signer = signerFor({ remotes: [hanging.url, second.url], timeoutMs: 1_000 });
    await expect(signer.info({ label: 'a' })).resolves.toMatchObject({ expiry: '168h' });
    expect(second.requests).toHaveLength(1);
  });
});

describe('getCertificate', () => {
  it('returns the CA certificate of the fixed label and asks the remote once', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url], label: 'a' });
    const first = await signer.getCertificate();
    const again = await signer.getCertificate();
    expect(first.pem).toBe(rootA.pem);
    expect(Buffer.from(first.der).equals(Buffer.from(rootA.der))).toBe(true);
    expect(again).toBe(first);
    expect(stub.requests).toHaveLength(1);
  });

  it('returns the default label CA when no label is fixed', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] });
    expect((await signer.getCertificate()).pem).toBe(rootB.pem);
  });

  it('does not cache a failure', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url], label: 'a' });
    await stub.stop();
    await expect(signer.getCertificate()).rejects.toMatchObject({ code: 6000 });
    await stub.restart();
    await expect(signer.getCertificate()).resolves.toMatchObject({ pem: rootA.pem });
  });
});

describe('getCertificateForLabel', () => {
  it('caches per label and reuses what info already fetched', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] });
    await signer.info({ label: 'a' });
    expect((await signer.getCertificateForLabel('a')).pem).toBe(rootA.pem);
    expect((await signer.getCertificateForLabel('b')).pem).toBe(rootB.pem);
    await signer.getCertificateForLabel('b');
    expect(stub.requests).toHaveLength(2);
  });
});

describe('health', () => {
  it('reports ok without a message when every remote answers /info', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] });
    await expect(signer.health()).resolves.toEqual({ ok: true });
  });

  it('reports ok with the failing remote named when one of two is down', async () => {
    const refused = await closedPort();
    const stub = await startStub();
    const signer = signerFor({ remotes: [refused, stub.url] });
    await expect(signer.health()).resolves.toEqual({ ok: true, message: `1 of 2 remotes healthy: ${refused} unreachable (ECONNREFUSED)` });
  });

  it('reports not ok when the remote answers an error', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url], label: 'nosuch' });
    await expect(signer.health()).resolves.toEqual({ ok: false, message: `0 of 1 remotes healthy: remote ${stub.url} answered: bad label` });
  });
});

describe('close', () => {
  it('rejects later calls with 2500 and is idempotent', async () => {
    const stub = await startStub();
    const signer = signerFor({ remotes: [stub.url] });
    await signer.close();
    await signer.close();
    await expect(signer.signRequest({ certificate_request: csrPem })).rejects.toMatchObject({ code: 2500 });
    await expect(signer.health()).resolves.toEqual({ ok: false, message: 'signer is closed' });
  });
});

describe('https remotes', () => {
  const serverCa = pki.root('stub tls root');
  const serverCert = pki.leaf('127.0.0.1', serverCa, { ips: ['127.0.0.1'], extKeyUsage: ['serverAuth'] });
  const clientCert = pki.leaf('certsmith client', serverCa, { extKeyUsage: ['clientAuth'] });
  const pemKey = (key: { privateKey: import('node:crypto').KeyObject }): string => key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

  async function startTlsStub(requireClientCert: boolean): Promise<{ url: string; clients: string[]; stop(): Promise<void> }> {
    const clients: string[] = [];
    const server = createTlsServer(
      { cert: serverCert.pem, key: pemKey(serverCert.key), ca: serverCa.pem, requestCert: requireClientCert, rejectUnauthorized: requireClientCert },
      (incoming, response) => {
        const peer = (incoming.socket as import('node:tls').TLSSocket).getPeerCertificate();
        clients.push(String(peer?.subject?.CN ?? ''));
        incoming.resume();
        incoming.on('end', () => {
          response.writeHead(200, { 'content-type': 'application/json' });
          response.end(envelope({ certificate: leaf.pem }));
        });
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    return {
      url: `https://127.0.0.1:${port}`,
      clients,
      stop: () => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  it('signs over mutual TLS when the CA and client certificate are configured', async () => {
    const tls = await startTlsStub(true);
    try {
      const settings = validateMultirootOptions({ remotes: [tls.url], timeoutMs: 2_000 });
      const signer = createMultirootSigner(settings, { authKey: null, tls: { ca: serverCa.pem, cert: clientCert.pem, key: pemKey(clientCert.key) } });
      signers.push(signer);
      await expect(signer.signRequest({ certificate_request: csrPem })).resolves.toEqual({ certificatePem: leaf.pem });
      expect(tls.clients).toEqual(['certsmith client']);
    } finally {
      await tls.stop();
    }
  });

  it('fails over when the TLS handshake fails, because nothing was sent', async () => {
    const tls = await startTlsStub(false);
    const plain = await startStub();
    try {
      // No caFile: the stub's certificate is not trusted, the handshake fails before any write.
      const signer = signerFor({ remotes: [tls.url, plain.url] });
      await expect(signer.signRequest({ certificate_request: csrPem })).resolves.toEqual({ certificatePem: leaf.pem });
      expect(tls.clients).toHaveLength(0);
      expect(plain.requests).toHaveLength(1);
      const only = signerFor({ remotes: [tls.url] });
      // The stub sends its root along, so node:tls reports the untrusted root in the chain.
      await expect(only.signRequest({ certificate_request: csrPem })).rejects.toMatchObject({
        code: 6000,
        message: `no remote signer reachable: ${tls.url} (SELF_SIGNED_CERT_IN_CHAIN)`,
      });
    } finally {
      await tls.stop();
    }
  });
});
