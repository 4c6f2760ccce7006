import { createServer, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer, type Server as TlsServer } from 'node:tls';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCertificate, type Certificate } from '@certsmith/x509-core';
import { TestPki, chainPem } from '@certsmith/test-pki';
import { createAiaFetcher } from './aia-fetcher.js';
import { CertificatePool } from './certificate-pool.js';
import {
  InvalidAddressError,
  PrivateNetworkRefusedError,
  SPECIAL_PURPOSE_RANGES,
  classifyAddress,
  createNetworkGuard,
  parseCidr,
} from './network-guard.js';
import { fetchPeerCertificates } from './peer-certificates.js';
import { resolveChains } from './resolve-chains.js';

/** One address inside (or on the edge of) every refused range, with the range that must name it. */
const REFUSED: ReadonlyArray<[address: string, cidr: string, kind: string]> = [
  ['0.0.0.0', '0.0.0.0/32', 'unspecified'],
  ['0.1.2.3', '0.0.0.0/8', 'reserved'],
  ['10.0.0.0', '10.0.0.0/8', 'private'],
  ['10.255.255.255', '10.0.0.0/8', 'private'],
  ['100.64.0.1', '100.64.0.0/10', 'shared (CGNAT)'],
  ['100.127.255.255', '100.64.0.0/10', 'shared (CGNAT)'],
  ['127.0.0.1', '127.0.0.0/8', 'loopback'],
  ['127.255.255.254', '127.0.0.0/8', 'loopback'],
  ['169.254.169.254', '169.254.0.0/16', 'link-local'],
  ['172.16.0.1', '172.16.0.0/12', 'private'],
  ['172.31.255.255', '172.16.0.0/12', 'private'],
  ['192.0.0.8', '192.0.0.0/24', 'reserved'],
  ['192.0.2.1', '192.0.2.0/24', 'documentation'],
  ['192.168.0.1', '192.168.0.0/16', 'private'],
  ['192.168.255.255', '192.168.0.0/16', 'private'],
  ['198.18.0.1', '198.18.0.0/15', 'benchmarking'],
  ['198.51.100.7', '198.51.100.0/24', 'documentation'],
  ['203.0.113.9', '203.0.113.0/24', 'documentation'],
  ['224.0.0.1', '224.0.0.0/4', 'multicast'],
  ['239.255.255.250', '224.0.0.0/4', 'multicast'],
  ['240.0.0.1', '240.0.0.0/4', 'reserved'],
  ['255.255.255.255', '255.255.255.255/32', 'broadcast'],
  ['::', '::/128', 'unspecified'],
  ['::1', '::1/128', 'loopback'],
  ['0:0:0:0:0:0:0:1', '::1/128', 'loopback'],
  ['::7f00:1', '::/96', 'reserved'],
  ['64:ff9b:1::a', '64:ff9b:1::/48', 'private'],
  ['100::1', '100::/64', 'discard-only'],
  ['2001:db8::1', '2001:db8::/32', 'documentation'],
  ['fc00::1', 'fc00::/7', 'private'],
  ['fd12:3456:789a::1', 'fc00::/7', 'private'],
  ['fe80::1', 'fe80::/10', 'link-local'],
  ['febf:ffff::1', 'fe80::/10', 'link-local'],
  ['fec0::1', 'fec0::/10', 'site-local'],
  ['ff02::1', 'ff00::/8', 'multicast'],
  ['ff05::1:3', 'ff00::/8', 'multicast'],
];

/** Public neighbours of the refused ranges. */
const PUBLIC: readonly string[] = [
  '1.1.1.1',
  '8.8.8.8',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.0',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  'fbff:ffff::1',
  'fe7f::1',
];

/** IPv4-mapped (dotted and hex), NAT64, 6to4 and exotic spellings of refused IPv4 addresses. */
const EMBEDDED: ReadonlyArray<[address: string, embedding: string, ipv4: string, cidr: string]> = [
  ['::ffff:127.0.0.1', 'IPv4-mapped', '127.0.0.1', '127.0.0.0/8'],
  ['::ffff:7f00:1', 'IPv4-mapped', '127.0.0.1', '127.0.0.0/8'],
  ['0:0:0:0:0:ffff:7f00:1', 'IPv4-mapped', '127.0.0.1', '127.0.0.0/8'],
  ['::FFFF:10.1.2.3', 'IPv4-mapped', '10.1.2.3', '10.0.0.0/8'],
  ['::ffff:ac10:1', 'IPv4-mapped', '172.16.0.1', '172.16.0.0/12'],
  ['::ffff:192.168.1.1', 'IPv4-mapped', '192.168.1.1', '192.168.0.0/16'],
  ['::ffff:169.254.169.254', 'IPv4-mapped', '169.254.169.254', '169.254.0.0/16'],
  ['::ffff:100.64.0.1', 'IPv4-mapped', '100.64.0.1', '100.64.0.0/10'],
  ['::ffff:0.0.0.0', 'IPv4-mapped', '0.0.0.0', '0.0.0.0/32'],
  ['::ffff:224.0.0.1', 'IPv4-mapped', '224.0.0.1', '224.0.0.0/4'],
  ['::ffff:255.255.255.255', 'IPv4-mapped', '255.255.255.255', '255.255.255.255/32'],
  ['64:ff9b::127.0.0.1', 'NAT64', '127.0.0.1', '127.0.0.0/8'],
  ['64:ff9b::a9fe:a9fe', 'NAT64', '169.254.169.254', '169.254.0.0/16'],
  ['2002:c0a8:101::1', '6to4', '192.168.1.1', '192.168.0.0/16'],
  ['2002:7f00:1::', '6to4', '127.0.0.1', '127.0.0.0/8'],
];

describe('classifyAddress', () => {
  it.each(REFUSED)('puts %s in %s (%s)', (address, cidr, kind) => {
    expect(classifyAddress(address).range).toEqual({ cidr, kind });
  });

  it.each(PUBLIC)('finds %s public', (address) => {
    expect(classifyAddress(address).range).toBeNull();
  });

  it.each(EMBEDDED)('judges %s by the %s IPv4 address it embeds', (address, embedding, ipv4, cidr) => {
    const classification = classifyAddress(address);
    expect(classification).toMatchObject({ embedding, embeddedIpv4: ipv4 });
    expect(classification.range?.cidr).toBe(cidr);
  });

  it('ignores zone IDs and brackets when the address is link-local or loopback', () => {
    expect(classifyAddress('fe80::1%eth0').range?.cidr).toBe('fe80::/10');
    expect(classifyAddress('[::1]').range?.cidr).toBe('::1/128');
  });

  it('covers every documented range with at least one refused example', () => {
    const tested = new Set(REFUSED.map(([, cidr]) => cidr));
    expect(SPECIAL_PURPOSE_RANGES.filter((range) => !tested.has(range.cidr))).toEqual([]);
  });

  it('throws InvalidAddressError when the text is not an IP address', () => {
    for (const text of ['localhost', '', '1.2.3', '::g', '127.0.0.1.nip.io']) {
      expect(() => classifyAddress(text)).toThrow(InvalidAddressError);
    }
  });

  it('classifies an IPv4 address and its mapped forms alike for any address', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ipv4) => {
        const octets = ipv4.split('.').map(Number) as [number, number, number, number];
        const hex = `::ffff:${((octets[0] << 8) | octets[1]).toString(16)}:${((octets[2] << 8) | octets[3]).toString(16)}`;
        const range = classifyAddress(ipv4).range;
        expect(classifyAddress(`::ffff:${ipv4}`).range).toEqual(range);
        expect(classifyAddress(hex).range).toEqual(range);
        expect(classifyAddress(`64:ff9b::${ipv4}`).range).toEqual(range);
      }),
      { seed: 20261122, numRuns: 500 },
    );
  });
});

describe('parseCidr', () => {
  it('parses IPv4 and IPv6 ranges and bare addresses', () => {
    expect(parseCidr('10.20.0.0/16')).toEqual({ address: '10.20.0.0', prefix: 16, family: 'ipv4' });
    expect(parseCidr('fd00:1::/64')).toEqual({ address: 'fd00:1::', prefix: 64, family: 'ipv6' });
    expect(parseCidr('127.0.0.2')).toEqual({ address: '127.0.0.2', prefix: 32, family: 'ipv4' });
    expect(parseCidr('::1')).toEqual({ address: '::1', prefix: 128, family: 'ipv6' });
  });

  it.each(['10.0.0.0/33', '::/129', '10.0.0.0/-1', '10.0.0.0/8.5', '10.0.0.0/', 'intranet/8', '10.0.0/8', ''])(
    'throws InvalidAddressError (400) naming %j',
    (text) => {
      expect(() => parseCidr(text)).toThrow(InvalidAddressError);
      try {
        parseCidr(text);
      } catch (error) {
        expect((error as InvalidAddressError).code).toBe(400);
        expect((error as Error).message).toContain(JSON.stringify(text));
      }
    },
  );
});

describe('createNetworkGuard', () => {
  const url = new URL('http://ca.example.com/issuer.cer');

  it.each(REFUSED.map(([address]) => address))('refuses %s with PrivateNetworkRefusedError 6000 by default', (address) => {
    const guard = createNetworkGuard();
    expect(guard.isAllowed(address)).toBe(false);
    expect(() => guard(url, address)).toThrow(PrivateNetworkRefusedError);
  });

  it.each(EMBEDDED.map(([address]) => address))('refuses the embedded form %s by default', (address) => {
    expect(() => createNetworkGuard()(url, address)).toThrow(PrivateNetworkRefusedError);
  });

  it.each(PUBLIC)('allows the public address %s', (address) => {
    expect(createNetworkGuard()(url, address)).toBe(true);
  });

  it('names the target, the address, the range and both ways to allow it in the refusal', () => {
    let error: unknown;
    try {
      createNetworkGuard()(url, '::ffff:169.254.169.254');
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PrivateNetworkRefusedError);
    const refusal = error as PrivateNetworkRefusedError;
    expect(refusal).toMatchObject({ code: 6000, address: '::ffff:169.254.169.254', target: url.href, range: { cidr: '169.254.0.0/16' } });
    expect(refusal.message).toContain('http://ca.example.com/issuer.cer');
    expect(refusal.message).toContain('::ffff:169.254.169.254');
    expect(refusal.message).toContain('is an IPv4-mapped form of the link-local address 169.254.169.254');
    expect(refusal.message).toContain('--allow-private-networks');
    expect(refusal.message).toContain('"allowCidrs"');
    expect(refusal.message).toContain('"169.254.169.254/32"');
  });

  it('accepts a host:port string as the target', () => {
    expect(() => createNetworkGuard()('db.internal:5432', '10.0.0.5')).toThrow(/refused to connect to db\.internal:5432: 10\.0\.0\.5 is a private address/);
  });

  it('allows every address when allowPrivateNetworks is set', () => {
    const guard = createNetworkGuard({ allowPrivateNetworks: true });
    for (const [address] of [...REFUSED, ...EMBEDDED]) expect(guard(url, address)).toBe(true);
    expect(guard.options.allowPrivateNetworks).toBe(true);
  });

  it('allows addresses inside allowCidrs, also in mapped, NAT64 and 6to4 form, and nothing else', () => {
    const guard = createNetworkGuard({ allowCidrs: ['127.0.0.0/8', 'fd00:1::/64', '10.1.2.3'] });
    for (const address of ['127.0.0.1', '127.9.9.9', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::7f00:1', '2002:7f00:1::', 'fd00:1::5', '10.1.2.3']) {
      expect(guard(url, address)).toBe(true);
    }
    for (const address of ['10.1.2.4', '::1', 'fd00:2::5', '192.168.0.1', '::ffff:10.0.0.1', '169.254.169.254']) {
      expect(() => guard(url, address)).toThrow(PrivateNetworkRefusedError);
    }
    expect(guard.options.allowCidrs).toEqual(['127.0.0.0/8', 'fd00:1::/64', '10.1.2.3/32']);
  });

  it('allows the connection when a proxy resolves the name (resolvedAddress null)', () => {
    expect(createNetworkGuard()(url, null)).toBe(true);
  });

  it('refuses text that is not an IP address', () => {
    const guard = createNetworkGuard();
    expect(guard.isAllowed('localhost')).toBe(false);
    expect(() => guard(url, 'localhost')).toThrow(InvalidAddressError);
  });

  it('throws InvalidAddressError at creation when an allowCidrs entry is malformed', () => {
    expect(() => createNetworkGuard({ allowCidrs: ['10.0.0.0/8', '10.0.0.0/40'] })).toThrow(InvalidAddressError);
  });
});

// Integration: a real loopback AIA server and the real fetcher. 127.0.0.2 is a second loopback
// address (Linux routes all of 127/8 to `lo`), so one range can be allowed and another refused.
describe('createAiaFetcher with createNetworkGuard', () => {
  const now = new Date('2026-11-22T12:00:00Z');
  const pki = new TestPki({ now });
  const root = pki.root('Guard Root', { key: 'ecdsa-p256' });
  const inter = pki.intermediate('Guard Inter', root);
  const routes = new Map<string, (res: ServerResponse) => void>();
  const hits: string[] = [];
  let primary: Server; // 127.0.0.1
  let secondary: Server; // 127.0.0.2
  let base1 = '';
  let base2 = '';

  const listen = async (host: string): Promise<[Server, string]> => {
    const server = createServer((req, res) => {
      hits.push(`${host}${req.url ?? ''}`);
      const route = routes.get(req.url ?? '/');
      if (route) route(res);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return [server, `http://${host}:${(server.address() as AddressInfo).port}`];
  };

  beforeAll(async () => {
    [primary, base1] = await listen('127.0.0.1');
    [secondary, base2] = await listen('127.0.0.2');
    routes.set('/inter.cer', (res) => res.writeHead(200, { 'content-type': 'application/pkix-cert' }).end(inter.der));
    routes.set('/to-primary', (res) => res.writeHead(302, { location: `${base1}/inter.cer` }).end());
    routes.set('/to-localhost', (res) => res.writeHead(301, { location: `${base1.replace('127.0.0.1', 'localhost')}/inter.cer` }).end());
    routes.set('/to-mapped', (res) => res.writeHead(307, { location: `http://[::ffff:127.0.0.1]:${new URL(base1).port}/inter.cer` }).end());
    routes.set('/to-self', (res) => res.writeHead(302, { location: '/inter.cer' }).end());
  });
  afterAll(async () => {
    for (const server of [primary, secondary]) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  const fetchWith = async (options: Parameters<typeof createNetworkGuard>[0], url: string): Promise<Certificate[]> => {
    const fetcher = createAiaFetcher({ fetchGuard: createNetworkGuard(options) });
    try {
      return await fetcher.fetchCertificates(url);
    } finally {
      await fetcher.close();
    }
  };

  it('refuses a loopback AIA URL by default without connecting', async () => {
    hits.length = 0;
    await expect(fetchWith({}, `${base1}/inter.cer`)).rejects.toMatchObject({
      code: 6000,
      name: 'AiaFetchError',
      message: expect.stringMatching(/^refused to connect to http:\/\/127\.0\.0\.1:\d+\/inter\.cer: 127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/),
    });
    expect(hits).toEqual([]);
  });

  it('refuses a name by its resolved address (localhost → 127.0.0.1)', async () => {
    hits.length = 0;
    await expect(fetchWith({}, `${base1.replace('127.0.0.1', 'localhost')}/inter.cer`)).rejects.toMatchObject({
      code: 6000,
      message: expect.stringContaining('127.0.0.1 is a loopback address'),
    });
    expect(hits).toEqual([]);
  });

  it('fetches when allowPrivateNetworks is set', async () => {
    expect(await fetchWith({ allowPrivateNetworks: true }, `${base1}/inter.cer`)).toHaveLength(1);
  });

  it('fetches when the address is inside an allowed CIDR (127.0.0.0/8)', async () => {
    expect(await fetchWith({ allowCidrs: ['127.0.0.0/8'] }, `${base1}/inter.cer`)).toHaveLength(1);
    expect(await fetchWith({ allowCidrs: ['127.0.0.0/8'] }, `${base1.replace('127.0.0.1', 'localhost')}/inter.cer`)).toHaveLength(1);
  });

  it('follows a redirect that stays inside the allowed range', async () => {
    expect(await fetchWith({ allowCidrs: ['127.0.0.2/32'] }, `${base2}/to-self`)).toHaveLength(1);
  });

  it('refuses a redirect from an allowed host to a refused address, by literal, name and mapped form', async () => {
    for (const path of ['/to-primary', '/to-localhost', '/to-mapped']) {
      hits.length = 0;
      await expect(fetchWith({ allowCidrs: ['127.0.0.2/32'] }, `${base2}${path}`)).rejects.toMatchObject({
        code: 6000,
        message: expect.stringMatching(/^refused to connect to http:\/\/(127\.0\.0\.1|localhost|\[::ffff:7f00:1\]):\d+\/inter\.cer: (127\.0\.0\.1|::ffff:7f00:1) is a/),
      });
      // The allowed hop happened, the refused one never reached the primary server.
      expect(hits).toEqual([`127.0.0.2${path}`]);
    }
  });

  it('turns a refused AIA fetch into the original unknown-authority result when bundling', async () => {
    const leaf = pki.leaf('guarded.example.com', inter, { caIssuers: [`${base1}/inter.cer`] });
    const run = async (options: Parameters<typeof createNetworkGuard>[0]) => {
      const fetcher = createAiaFetcher({ fetchGuard: createNetworkGuard(options) });
      try {
        const pools = { roots: new CertificatePool([parseCertificate(root.der)]), intermediates: new CertificatePool() };
        return await resolveChains([parseCertificate(leaf.der)], pools, { now, fetcher });
      } finally {
        await fetcher.close();
      }
    };
    expect(await run({})).toMatchObject({ result: false, resultCode: 1220 });
    expect(await run({ allowCidrs: ['127.0.0.1'] })).toMatchObject({ result: true });
  });
});

describe('fetchPeerCertificates with a guard', () => {
  const pki = new TestPki();
  const root = pki.root('Guard Peer Root', { key: 'ecdsa-p256' });
  const leaf = pki.leaf('localhost', root, { dns: ['localhost'], ips: ['127.0.0.1'] });
  const trust = new CertificatePool([parseCertificate(root.der)]);
  let server: TlsServer;
  let port = 0;
  let connections = 0;

  beforeAll(async () => {
    server = createTlsServer({ key: leaf.key.pkcs8Pem, cert: chainPem(leaf) }, (socket) => socket.end());
    server.on('connection', () => connections++);
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('refuses a name that resolves to loopback with DialError 6000 and never connects', async () => {
    connections = 0;
    await expect(fetchPeerCertificates({ domain: `localhost:${port}`, trust, guard: createNetworkGuard() })).rejects.toMatchObject({
      code: 6000,
      name: 'DialError',
      message: expect.stringMatching(new RegExp(`^refused to connect to localhost:${port}: 127\\.0\\.0\\.1 is a loopback address`)),
    });
    expect(connections).toBe(0);
  });

  it('refuses a literal ip (also IPv4-mapped) before dialling', async () => {
    connections = 0;
    for (const ip of ['127.0.0.1', '::ffff:127.0.0.1']) {
      await expect(fetchPeerCertificates({ domain: 'localhost', ip, port, trust, guard: createNetworkGuard() })).rejects.toMatchObject({
        code: 6000,
        message: expect.stringContaining(`${ip} is a`),
      });
    }
    await expect(fetchPeerCertificates({ domain: 'localhost', ip: '::ffff:127.0.0.1', port, guard: createNetworkGuard() })).rejects.toThrow(
      /IPv4-mapped form of the loopback address 127\.0\.0\.1/,
    );
    expect(connections).toBe(0);
  });

  it('connects to the checked addresses when the range is allowed', async () => {
    const r = await fetchPeerCertificates({ domain: `localhost:${port}`, trust, guard: createNetworkGuard({ allowCidrs: ['127.0.0.0/8'] }) });
    expect(r.handshakeWarning).toBeNull();
    expect(r.certificates).toHaveLength(1);
  });

  it('keeps Go\'s no-such-host text when the guarded lookup fails', async () => {
    await expect(fetchPeerCertificates({ domain: 'no-such-host.invalid', guard: createNetworkGuard() })).rejects.toMatchObject({
      code: 6000,
      message: 'dial tcp: lookup no-such-host.invalid: no such host',
    });
  });

  it('treats an empty domain as this machine and refuses it', async () => {
    await expect(fetchPeerCertificates({ domain: '', guard: createNetworkGuard() })).rejects.toMatchObject({
      code: 6000,
      message: expect.stringMatching(/^refused to connect to :443: 127\.0\.0\.1 is a loopback address/),
    });
    expect(() => createNetworkGuard()('x:1', '0.0.0.0')).toThrow(/0\.0\.0\.0 is an unspecified address \(0\.0\.0\.0\/32\)/);
  });

  it('refuses with a generic text when a plain guard returns false', async () => {
    await expect(fetchPeerCertificates({ domain: 'localhost', ip: '127.0.0.1', port, guard: () => false })).rejects.toMatchObject({
      code: 6000,
      message: `dial tcp 127.0.0.1:${port}: connection to 127.0.0.1 refused by guard`,
    });
  });
});
