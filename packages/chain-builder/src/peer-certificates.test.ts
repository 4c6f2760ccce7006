import { createServer, type Server } from 'node:tls';
import { createServer as createTcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCertificate } from '@certsmith/x509-core';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { CertificatePool } from './certificate-pool.js';
import { fetchPeerCertificates, splitHostPort } from './peer-certificates.js';

const pki = new TestPki();
const root = pki.root('Peer Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Peer Inter', root);
const leaf = pki.leaf('localhost', inter, { dns: ['localhost', 'peer.example'], ips: ['127.0.0.1'] });
const trust = new CertificatePool([parseCertificate(root.der)]);

let server: Server;
let port = 0;
const sniSeen: string[] = [];

beforeAll(async () => {
  server = createServer(
    {
      key: leaf.key.pkcs8Pem,
      cert: chainPem(leaf, inter),
      // Runs during the handshake, so the name is recorded before the client sees the certificate.
      SNICallback: (name, callback) => {
        sniSeen.push(name);
        callback(null, undefined);
      },
    },
    (socket) => socket.end(),
  );
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('fetchPeerCertificates', () => {
  it('returns the chain as sent with no warning when the strict handshake succeeds', async () => {
    const r = await fetchPeerCertificates({ domain: 'localhost', port, trust });
    expect(r.handshakeWarning).toBeNull();
    expect(r.certificates.map((c) => Buffer.from(c.der).toString('base64'))).toEqual(
      [leaf, inter].map((c) => Buffer.from(c.der).toString('base64')),
    );
    expect(r.target).toBe(`localhost:${port}`);
  });

  it('dials the ip and sends the domain as SNI when both are given', async () => {
    sniSeen.length = 0;
    const r = await fetchPeerCertificates({ domain: `peer.example:${port}`, ip: '127.0.0.1', trust });
    expect(r.handshakeWarning).toBeNull();
    expect(r.serverName).toBe('peer.example');
    expect(sniSeen).toContain('peer.example');
  });

  it('retries insecurely and reports the rigid handshake failure when the root is unknown', async () => {
    const r = await fetchPeerCertificates({ domain: 'localhost', port, trust: new CertificatePool([parseCertificate(pki.root('Peer Other').der)]) });
    expect(r.certificates).toHaveLength(2);
    expect(r.handshakeWarning).toBe(`Failed rigid TLS handshake with localhost:${port}: x509: certificate signed by unknown authority`);
  });

  it('reports a hostname mismatch in Go\'s words when the name does not match', async () => {
    const r = await fetchPeerCertificates({ domain: 'wrong.example', ip: '127.0.0.1', port, trust });
    expect(r.handshakeWarning).toBe(
      `Failed rigid TLS handshake with 127.0.0.1:${port}: x509: certificate is valid for localhost, peer.example, not wrong.example`,
    );
  });

  it('fails with 6000 and Go\'s dial text when the port is closed', async () => {
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(fetchPeerCertificates({ domain: 'localhost', ip: '127.0.0.1', port: closedPort })).rejects.toMatchObject({
      code: 6000,
      message: `dial tcp 127.0.0.1:${closedPort}: connect: connection refused`,
    });
  });

  it('fails with 6000 when the server never completes the handshake', async () => {
    const held = new Set<import('node:net').Socket>();
    // Never answers (and never reads, so it would not notice the client leaving on its own).
    const silent = createTcpServer((socket) => held.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentPort = (silent.address() as AddressInfo).port;
    try {
      await expect(fetchPeerCertificates({ domain: 'localhost', ip: '127.0.0.1', port: silentPort, timeoutMs: 200 })).rejects.toMatchObject({
        code: 6000,
        // Go 1.19's tls.DialWithDialer reports a handshake past the dialer timeout as its context's error.
        message: 'context deadline exceeded',
      });
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('splitHostPort', () => {
  it('splits host:port, [v6]:port and bare hosts', () => {
    expect(splitHostPort('example.com:8443', 443)).toEqual({ host: 'example.com', port: 8443 });
    expect(splitHostPort('[::1]:8443', 443)).toEqual({ host: '::1', port: 8443 });
    expect(splitHostPort('example.com', 443)).toEqual({ host: 'example.com', port: 443 });
    expect(splitHostPort('::1', 443)).toEqual({ host: '::1', port: 443 });
  });
});

describe('fetchPeerCertificates chain as sent', () => {
  it('returns the root when the server sends it, and only what was sent otherwise', async () => {
    const withRoot = createServer({ key: leaf.key.pkcs8Pem, cert: chainPem(leaf, inter, root) }, (socket) => socket.end());
    withRoot.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => withRoot.listen(0, '127.0.0.1', resolve));
    try {
      const sent = await fetchPeerCertificates({ domain: 'localhost', port: (withRoot.address() as AddressInfo).port, trust });
      expect(sent.handshakeWarning).toBeNull();
      expect(sent.certificates.map((c) => Buffer.from(c.der).toString('hex'))).toEqual([leaf, inter, root].map((c) => Buffer.from(c.der).toString('hex')));
    } finally {
      await new Promise((resolve) => withRoot.close(resolve));
    }
    // The trust store holds the root, yet it is not added to a chain that did not carry it.
    const notSent = await fetchPeerCertificates({ domain: 'localhost', port, trust });
    expect(notSent.certificates).toHaveLength(2);
  });
});
