/**
 * Go's words for every way a remote fetch can fail, checked against real loopback peers: each
 * failure is provoked for real (a closed port, a reset, a close, an HTTP answer, a TLS alert, a
 * silent server, an unparseable certificate) and must come back as DialError 6000 with the text
 * Go (and so CFSSL) gives — never Node's or OpenSSL's. The expected texts were read off
 * `cfssl certinfo -domain` (Debian cfssl 1.2.0, go1.19.8) against the same kinds of peers.
 */
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TlsOptions } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { readElement } from '@certsmith/x509-core';
import { afterEach, describe, expect, it } from 'vitest';
import { describeDialFailure, goSplitHostPort, parseDialTarget } from './dial-errors.js';
import { fetchPeerCertificates } from './peer-certificates.js';

const pki = new TestPki();
const root = pki.root('Dial Errors Root', { key: 'ecdsa-p256' });
const leaf = pki.leaf('localhost', root, { key: 'ecdsa-p256', dns: ['localhost'] });

describe('goSplitHostPort', () => {
  it('splits as Go does and words its refusals as Go does', () => {
    expect(goSplitHostPort('example.com:8443')).toEqual({ host: 'example.com', port: '8443' });
    expect(goSplitHostPort('[::1]:443')).toEqual({ host: '::1', port: '443' });
    expect(goSplitHostPort('localhost:')).toEqual({ host: 'localhost', port: '' });
    expect(goSplitHostPort('example.com')).toEqual({ error: 'missing port in address' });
    expect(goSplitHostPort('a:b:c')).toEqual({ error: 'too many colons in address' });
    expect(goSplitHostPort('[::1')).toEqual({ error: "missing ']' in address" });
    expect(goSplitHostPort('[::1]x:1')).toEqual({ error: 'missing port in address' });
    expect(goSplitHostPort('x[:1')).toEqual({ error: "unexpected '[' in address" });
    expect(goSplitHostPort('x]:1')).toEqual({ error: "unexpected ']' in address" });
  });
});

describe('parseDialTarget', () => {
  it('takes the port from the domain, or the default when the domain does not split', () => {
    expect(parseDialTarget('example.com', 443)).toEqual({ target: { host: 'example.com', port: 443 }, serverName: 'example.com' });
    expect(parseDialTarget('example.com:8443', 443)).toEqual({ target: { host: 'example.com', port: 8443 }, serverName: 'example.com' });
    expect(parseDialTarget('::1', 443)).toEqual({ target: { host: '::1', port: 443 }, serverName: '::1' });
    expect(parseDialTarget('example.com:https', 1)).toEqual({ target: { host: 'example.com', port: 443 }, serverName: 'example.com' });
    expect(parseDialTarget('localhost:', 443)).toEqual({ target: { host: 'localhost', port: 0 }, serverName: 'localhost' });
    expect(parseDialTarget('example.com:8443', 443, '[2001:db8::1]')).toEqual({ target: { host: '2001:db8::1', port: 8443 }, serverName: 'example.com' });
  });

  it.each([
    ['localhost:99999', 'dial tcp: address 99999: invalid port'],
    ['localhost:-1', 'dial tcp: address -1: invalid port'],
    ['localhost:123456789012345678901234567890', 'dial tcp: address 123456789012345678901234567890: invalid port'],
    ['localhost:abc', 'dial tcp: address tcp/abc: unknown port'],
    ['[::1', "dial tcp: address [[::1]:443: unexpected '[' in address"],
  ])('refuses %s with %s', (domain, error) => {
    expect(parseDialTarget(domain, 443)).toEqual({ error });
  });
});

describe('describeDialFailure', () => {
  const where = { target: '127.0.0.1:443', host: 'localhost' };

  it('words what no loopback peer can provoke as Go does', () => {
    expect(describeDialFailure(Object.assign(new Error('x'), { code: 'EAI_AGAIN', syscall: 'getaddrinfo' }), where)).toBe(
      'dial tcp: lookup localhost: Temporary failure in name resolution',
    );
    expect(describeDialFailure(Object.assign(new Error('x'), { code: 'EHOSTUNREACH', syscall: 'connect', address: '192.0.2.1', port: 443 }), where)).toBe(
      'dial tcp 192.0.2.1:443: connect: no route to host',
    );
    expect(describeDialFailure(Object.assign(new Error('x'), { code: 'ENETUNREACH', syscall: 'connect', address: '2001:db8::1', port: 443 }), where)).toBe(
      'dial tcp [2001:db8::1]:443: connect: network is unreachable',
    );
    expect(describeDialFailure(Object.assign(new Error('x'), { code: 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION' }), where)).toBe(
      'remote error: tls: protocol version not supported',
    );
    expect(describeDialFailure(Object.assign(new Error('x'), { code: 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE' }), where)).toBe('remote error: tls: bad certificate');
    expect(describeDialFailure(Object.assign(new Error('x'), { code: 'ERR_SSL_NO_CIPHERS_AVAILABLE' }), where)).toBe('local error: tls: handshake failure');
  });

  it('reports the first address of a dual-stack dial, as Go\'s serial dial does', () => {
    const refused = (address: string) => Object.assign(new Error(`connect ECONNREFUSED ${address}:443`), { code: 'ECONNREFUSED', syscall: 'connect', address, port: 443 });
    expect(describeDialFailure(new AggregateError([refused('::1'), refused('127.0.0.1')]), where)).toBe('dial tcp [::1]:443: connect: connection refused');
  });

  it('never passes a Node or OpenSSL message on', () => {
    for (const error of [
      new RangeError('Port should be >= 0 and < 65536. Received type number (99999).'),
      Object.assign(new Error('error:0A00010B:SSL routines::wrong version number'), { code: 'ERR_SOMETHING_NEW' }),
      'a string',
      null,
    ]) {
      expect(describeDialFailure(error, where)).toBe('dial tcp 127.0.0.1:443: connection failed');
    }
  });
});

describe('fetchPeerCertificates failures in Go\'s words', () => {
  const servers: (TcpServer | TlsServer)[] = [];
  const sockets = new Set<Socket>();

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  });

  /** A loopback TCP peer doing `onConnection` with every client; resolves with its port. */
  async function tcpPeer(onConnection: (socket: Socket) => void): Promise<number> {
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      onConnection(socket);
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  async function tlsPeer(options: TlsOptions): Promise<number> {
    const server = createTlsServer(options, (socket) => socket.end());
    server.on('tlsClientError', () => undefined);
    server.on('connection', (socket: Socket) => sockets.add(socket));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  }

  const fetchFrom = (port: number, timeoutMs = 2_000) => fetchPeerCertificates({ domain: `localhost:${port}`, ip: '127.0.0.1', timeoutMs });

  it('answers a bad port without dialling', async () => {
    await expect(fetchPeerCertificates({ domain: 'localhost:99999' })).rejects.toMatchObject({ code: 6000, message: 'dial tcp: address 99999: invalid port' });
    await expect(fetchPeerCertificates({ domain: 'localhost:abc' })).rejects.toMatchObject({ code: 6000, message: 'dial tcp: address tcp/abc: unknown port' });
  });

  it('answers a name that does not resolve with Go\'s lookup text', async () => {
    await expect(fetchPeerCertificates({ domain: 'no-such-host.invalid', timeoutMs: 2_000 })).rejects.toMatchObject({
      code: 6000,
      message: 'dial tcp: lookup no-such-host.invalid: no such host',
    });
  });

  it('names the address dialled when nothing listens, also for a name', async () => {
    const port = await tcpPeer(() => undefined);
    await new Promise((resolve) => (servers.pop() as TcpServer).close(resolve));
    await expect(fetchPeerCertificates({ domain: `127.0.0.1:${port}` })).rejects.toMatchObject({
      code: 6000,
      message: `dial tcp 127.0.0.1:${port}: connect: connection refused`,
    });
    // `localhost` may also resolve to ::1; either way Go names an address, never the name.
    await expect(fetchPeerCertificates({ domain: `localhost:${port}` })).rejects.toMatchObject({
      code: 6000,
      message: expect.stringMatching(new RegExp(`^dial tcp (127\\.0\\.0\\.1|\\[::1\\]):${port}: connect: (connection refused|cannot assign requested address|network is unreachable)$`)),
    });
  });

  it('answers a reset during the handshake with Go\'s read error naming both ends', async () => {
    const port = await tcpPeer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    await expect(fetchFrom(port)).rejects.toMatchObject({
      code: 6000,
      message: expect.stringMatching(new RegExp(`^read tcp 127\\.0\\.0\\.1:\\d+->127\\.0\\.0\\.1:${port}: read: connection reset by peer$`)),
    });
  });

  it('answers a close during the handshake with EOF', async () => {
    const port = await tcpPeer((socket) => socket.once('data', () => socket.end()));
    await expect(fetchFrom(port)).rejects.toMatchObject({ code: 6000, message: 'EOF' });
  });

  it('answers a peer that does not speak TLS as Go does', async () => {
    const port = await tcpPeer((socket) => socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')));
    await expect(fetchFrom(port)).rejects.toMatchObject({ code: 6000, message: 'tls: first record does not look like a TLS handshake' });
  });

  it('answers a TLS alert from the peer as Go\'s remote error', async () => {
    // No cipher the server accepts works with its ECDSA key: it answers handshake_failure.
    const port = await tlsPeer({ key: leaf.key.pkcs8Pem, cert: chainPem(leaf), ciphers: 'ECDHE-RSA-AES128-GCM-SHA256', maxVersion: 'TLSv1.2' });
    await expect(fetchFrom(port)).rejects.toMatchObject({ code: 6000, message: 'remote error: tls: handshake failure' });
  });

  it('answers a handshake that does not finish in time with Go 1.19\'s context error', async () => {
    const port = await tcpPeer(() => undefined);
    await expect(fetchFrom(port, 200)).rejects.toMatchObject({ code: 6000, message: 'context deadline exceeded' });
  });

  it('answers a certificate the peer sends that does not parse as Go does', async () => {
    // The outer signature algorithm no longer matches the inner one (Go and certsmith refuse the
    // certificate; OpenSSL serves it).
    const der = Buffer.from(leaf.der);
    const certificate = readElement(der, 0);
    const tbs = readElement(der, certificate.valueStart);
    const outerAlgorithm = readElement(der, tbs.end);
    const oid = readElement(der, outerAlgorithm.valueStart);
    der[oid.end - 1] = (der[oid.end - 1] as number) + 1; // ecdsa-with-SHA256 → ecdsa-with-SHA384
    const pem = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
    const port = await tlsPeer({ key: leaf.key.pkcs8Pem, cert: pem });
    await expect(fetchFrom(port)).rejects.toMatchObject({
      code: 6000,
      message: 'tls: failed to parse certificate from server: x509: malformed certificate',
    });
  });
});
