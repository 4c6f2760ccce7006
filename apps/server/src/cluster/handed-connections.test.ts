import { createServer as createHttpServer, request as httpRequest, Agent as HttpAgent } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { TestPki } from '@certsmith/test-pki';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiServer } from '@certsmith/http-api';
import { HandedConnections } from './handed-connections.js';

/** A paused-accept listener that hands every connection to `handed`, as the leader does. */
async function handing(handed: HandedConnections): Promise<{ port: number; listener: NetServer }> {
  const listener = createNetServer({ pauseOnConnect: true }, (socket) => handed.accept(socket));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  return { port: (listener.address() as AddressInfo).port, listener };
}

const listeners: NetServer[] = [];
afterEach(() => {
  for (const listener of listeners.splice(0)) listener.close();
});

function get(port: number, agent: HttpAgent | false = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/', agent }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('HandedConnections', () => {
  it('serves handed connections with keep-alive, and closes once the request in flight is answered', async () => {
    let answerLater: (() => void) | null = null;
    const server = createHttpServer((request: IncomingMessage, response: ServerResponse) => {
      if (request.url === '/slow') answerLater = () => response.end('slow');
      else response.end('ok');
    });
    const handed = new HandedConnections(server);
    const { port, listener } = await handing(handed);
    listeners.push(listener);
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    expect(await get(port, agent)).toEqual({ status: 200, body: 'ok' });
    expect(await get(port, agent)).toEqual({ status: 200, body: 'ok' });
    expect(handed.size).toBe(1);

    const slow = new Promise<string>((resolve, reject) => {
      const request = httpRequest({ host: '127.0.0.1', port, path: '/slow', agent: false }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve(body));
      });
      request.on('error', reject);
      request.end();
    });
    for (let tries = 0; tries < 200 && answerLater === null; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    const closing = handed.close(5_000);
    // The idle keep-alive connection closes at once; the one in flight stays until answered.
    for (let tries = 0; tries < 200 && handed.size > 1; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(handed.size).toBe(1);
    answerLater!();
    expect(await slow).toBe('slow');
    expect(await closing).toBe(true);
    expect(handed.size).toBe(0);
    agent.destroy();
  });

  it('cuts what is left after the timeout, and says so', async () => {
    const server = createHttpServer(() => undefined);
    const handed = new HandedConnections(server);
    const { port, listener } = await handing(handed);
    listeners.push(listener);
    const hanging = get(port).catch((error: Error) => error.message);
    for (let tries = 0; tries < 200 && handed.size === 0; tries++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await handed.close(100)).toBe(false);
    expect(await hanging).toMatch(/socket hang up|ECONNRESET/);
  });

  it('applies the server\'s headers deadline to handed connections', async () => {
    const server = createHttpServer({ headersTimeout: 200, requestTimeout: 400, connectionsCheckingInterval: 50 }, (_request, response) => response.end('ok'));
    const handed = new HandedConnections(server);
    const { port, listener } = await handing(handed);
    listeners.push(listener);
    const { connect } = await import('node:net');
    const socket = connect(port, '127.0.0.1');
    let raw = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
    socket.write('GET / HTTP/1.1\r\nHost: x\r\n');
    await new Promise<void>((resolve) => socket.on('close', () => resolve()));
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    await handed.close(100);
  });

  it('serves TLS with a client certificate through a handed connection', async () => {
    const pki = new TestPki();
    const ca = pki.root({ CN: 'handed test root' }, { key: 'ecdsa-p256' });
    const serverCert = pki.leaf('server.handed.test', ca, { key: 'ecdsa-p256' });
    const clientCert = pki.leaf('client.handed.test', ca, { key: 'ecdsa-p256' });
    const server = createHttpsServer({ cert: serverCert.pem, key: serverCert.key.pkcs8Pem, ca: ca.pem, requestCert: true, rejectUnauthorized: true }, (request, response) => {
      const peer = (request.socket as import('node:tls').TLSSocket).getPeerCertificate();
      response.end(peer.subject.CN);
    });
    const handed = new HandedConnections(server as ApiServer);
    const { port, listener } = await handing(handed);
    listeners.push(listener);
    const answer = await new Promise<string>((resolve, reject) => {
      const request = httpsRequest({ host: '127.0.0.1', port, path: '/', agent: false, ca: ca.pem, cert: clientCert.pem, key: clientCert.key.pkcs8Pem, checkServerIdentity: () => undefined }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve(body));
      });
      request.on('error', reject);
      request.end();
    });
    expect(answer).toBe('client.handed.test');
    expect(await handed.close(1_000)).toBe(true);
  });
});
