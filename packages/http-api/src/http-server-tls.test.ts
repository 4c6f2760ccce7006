/**
 * TLS for the API (CFSSL `-tls-cert`, `-tls-key`, `-min-tls-version`, `-mutual-tls-ca`,
 * `-mutual-tls-cn`): configuration checks with coded errors, HTTPS, minimum version, required and
 * verified client certificates, and the CN check answering 403 `Invalid CN` in the envelope.
 */
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type { RequestOptions } from 'node:https';
import { TestPki } from '@certsmith/test-pki';
import type { TestCertificate } from '@certsmith/test-pki';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { clientCommonName, createClientCnGuard } from './client-auth.js';
import { defineOperation } from './operation.js';
import { closeHttpServer, createHttpServer, listen } from './http-server.js';
import type { ApiServer } from './http-server.js';
import { checkTlsConfig, compileClientCnPattern, parseMinTlsVersion, toHttpsServerOptions, TlsConfigError } from './tls-options.js';
import type { ApiTlsConfig } from './tls-options.js';

const pki = new TestPki();
let serverCa: TestCertificate;
let serverCert: TestCertificate;
let clientCa: TestCertificate;
let goodClient: TestCertificate;
let badCnClient: TestCertificate;
let foreignClient: TestCertificate;

const servers: ApiServer[] = [];

beforeAll(() => {
  serverCa = pki.root('TLS Test Server CA', { key: 'ecdsa-p256' });
  serverCert = pki.leaf('localhost', serverCa, { ips: ['127.0.0.1'], extKeyUsage: ['serverAuth'] });
  clientCa = pki.root('TLS Test Client CA', { key: 'ecdsa-p256' });
  goodClient = pki.leaf('ops-client-1', clientCa, { extKeyUsage: ['clientAuth'] });
  badCnClient = pki.leaf('intruder', clientCa, { extKeyUsage: ['clientAuth'] });
  const foreignCa = pki.root('Foreign CA', { key: 'ecdsa-p256' });
  foreignClient = pki.leaf('ops-client-2', foreignCa, { extKeyUsage: ['clientAuth'] });
});

afterAll(async () => {
  await Promise.all(servers.splice(0).map((server) => closeHttpServer(server, { timeoutMs: 2000 })));
});

function baseTls(overrides: Partial<ApiTlsConfig> = {}): ApiTlsConfig {
  return { cert: serverCert.pem, key: serverCert.key.pkcs8Pem, ...overrides };
}

async function serve(tls: ApiTlsConfig): Promise<string> {
  const app = createApp({
    operations: [defineOperation({ name: 'echo', method: 'POST', handle: () => ({ ok: true }) })],
  });
  const server = createHttpServer(app, { tls });
  servers.push(server);
  const { url } = await listen(server, 0, '127.0.0.1');
  return url;
}

interface Answer {
  status: number;
  body: string;
  headers: Record<string, unknown>;
}

/** One HTTPS request with its own connection; bounded. */
function get(url: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      `${url}${path}`,
      { ca: serverCa.pem, agent: false, timeout: 10_000, ...options },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.end();
  });
}

function clientCredentials(certificate: TestCertificate): RequestOptions {
  return { cert: certificate.pem, key: certificate.key.pkcs8Pem };
}

describe('checkTlsConfig', () => {
  it('accepts a matching certificate and key, with or without a client CA', () => {
    expect(() => checkTlsConfig(baseTls())).not.toThrow();
    expect(() => checkTlsConfig(baseTls({ clientCa: clientCa.pem, clientCn: /^ops-/, minVersion: '1.3' }))).not.toThrow();
  });

  it('refuses broken files with CFSSL codes and names the part', () => {
    const failure = (config: ApiTlsConfig): TlsConfigError => {
      try {
        checkTlsConfig(config);
      } catch (error) {
        return error as TlsConfigError;
      }
      throw new Error('no error');
    };
    expect(failure(baseTls({ cert: 'not a certificate' }))).toMatchObject({ code: 1002, field: 'cert' });
    expect(failure(baseTls({ cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }))).toMatchObject({ code: 1003, field: 'cert' });
    expect(failure(baseTls({ key: serverCert.pem }))).toMatchObject({ code: 2002, field: 'key' });
    expect(failure(baseTls({ key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }))).toMatchObject({ code: 2003, field: 'key' });
    expect(failure(baseTls({ key: goodClient.key.pkcs8Pem }))).toMatchObject({ code: 2300, field: 'key' });
    expect(failure(baseTls({ clientCa: 'nothing here' }))).toMatchObject({ code: 4002, field: 'clientCa' });
    expect(failure(baseTls({ clientCn: /x/ }))).toMatchObject({ code: 400, field: 'clientCn' });
    expect(failure(baseTls({ minVersion: '1.1' as never }))).toMatchObject({ code: 400, field: 'minVersion' });
    // The key's text never reaches the message.
    expect(failure(baseTls({ key: goodClient.key.pkcs8Pem })).message).not.toMatch(/PRIVATE KEY/);
  });

  it('parses versions and CN patterns', () => {
    expect(parseMinTlsVersion('1.2')).toBe('1.2');
    expect(parseMinTlsVersion('TLSv1.3')).toBe('1.3');
    expect(parseMinTlsVersion('1.1')).toBeNull();
    expect(parseMinTlsVersion('1.0')).toBeNull();
    expect(compileClientCnPattern('^a.c$').test('abc')).toBe(true);
    expect(() => compileClientCnPattern('(')).toThrow(TlsConfigError);
    // A Go (RE2) expression, as CFSSL's -mutual-tls-cn: what Go refuses is refused, at start-up.
    expect(() => compileClientCnPattern('^ops-(?!admin)')).toThrow(/malformed CN regex: error parsing regexp: invalid or unsupported Perl syntax/);
    expect(compileClientCnPattern('(?i)^OPS-[[:digit:]]+$').test('ops-12')).toBe(true);
  });

  it('asks for and verifies client certificates only with a client CA', () => {
    expect(toHttpsServerOptions(baseTls())).toMatchObject({ minVersion: 'TLSv1.2' });
    expect(toHttpsServerOptions(baseTls()).requestCert).toBeUndefined();
    expect(toHttpsServerOptions(baseTls({ clientCa: clientCa.pem, minVersion: '1.3' }))).toMatchObject({
      minVersion: 'TLSv1.3',
      requestCert: true,
      rejectUnauthorized: true,
      ca: clientCa.pem,
    });
  });
});

describe('HTTPS server', () => {
  it('serves the API over TLS and reports an https URL', async () => {
    const url = await serve(baseTls());
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const answer = await get(url, '/api/v1/cfssl/health');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ success: true, result: { healthy: true } });
    const unknown = await get(url, '/api/v1/cfssl/nope');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body)).toMatchObject({ success: false, errors: [{ code: 404 }] });
  });

  it('refuses clients below the minimum version', async () => {
    const url = await serve(baseTls({ minVersion: '1.3' }));
    await expect(get(url, '/api/v1/cfssl/health', { maxVersion: 'TLSv1.2' })).rejects.toThrow();
    expect((await get(url, '/api/v1/cfssl/health', { minVersion: 'TLSv1.3' })).status).toBe(200);
  });

  it('with a client CA, refuses connections without a valid client certificate', async () => {
    const url = await serve(baseTls({ clientCa: clientCa.pem }));
    await expect(get(url, '/api/v1/cfssl/health')).rejects.toThrow();
    await expect(get(url, '/api/v1/cfssl/health', clientCredentials(foreignClient))).rejects.toThrow();
    // Without a CN pattern any certificate of the client CA is served, whatever its CN.
    expect((await get(url, '/api/v1/cfssl/health', clientCredentials(badCnClient))).status).toBe(200);
  });

  it('answers 403 Invalid CN (JSON envelope) when the client CN does not match, on every path', async () => {
    const url = await serve(baseTls({ clientCa: clientCa.pem, clientCn: /^ops-client-\d+$/ }));
    const good = await get(url, '/api/v1/cfssl/health', clientCredentials(goodClient));
    expect(good.status).toBe(200);
    for (const path of ['/api/v1/cfssl/health', '/api/v1/cfssl/echo', '/whatever']) {
      const refused = await get(url, path, clientCredentials(badCnClient));
      expect(refused.status).toBe(403);
      expect(refused.headers['content-type']).toBe('application/json');
      expect(refused.body).toBe('{"success":false,"result":null,"errors":[{"code":403,"message":"Invalid CN"}],"messages":[]}\n');
    }
  });
});

describe('client CN guard', () => {
  it('reads no CN from a plain socket and refuses it', () => {
    expect(clientCommonName({})).toBeNull();
    const guard = createClientCnGuard(/.*/g);
    expect(guard.check({ socket: {} } as never)).toEqual({ allowed: false, commonName: null });
  });
});

describe('TLS handshake timeout', () => {
  it('closes a connection whose TLS handshake stalls after --headers-timeout', async () => {
    const app = createApp({ operations: [] });
    const server = createHttpServer(app, { tls: baseTls(), headersTimeoutMs: 300 });
    servers.push(server);
    const { port } = await listen(server, 0, '127.0.0.1');
    // A TCP connection that never sends its ClientHello: closed by the server (without it, after
    // Node's 120 s, far beyond this test's timeout).
    const closed = await new Promise<{ raw: number }>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let raw = 0;
      socket.on('data', (chunk: Buffer) => (raw += chunk.length));
      socket.on('error', () => {});
      socket.on('close', () => resolve({ raw }));
    });
    expect(closed.raw).toBe(0);
  });
});
