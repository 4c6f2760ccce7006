import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCertificate, type Certificate } from '@certsmith/x509-core';
import { TestPki, sequence, oid, type TestCertificate } from '@certsmith/test-pki';
import { createAiaFetcher, isLoopbackHost } from './aia-fetcher.js';
import { CertificatePool, type TrustPools } from './certificate-pool.js';
import { discoverIntermediates } from './discover-intermediates.js';
import { resolveChains } from './resolve-chains.js';

const now = new Date('2026-11-22T12:00:00Z');
const pki = new TestPki({ now });
const p = (c: TestCertificate): Certificate => parseCertificate(c.der);

/** PKCS#7 SignedData "certs-only" (RFC 2315 / 5652 degenerate form) around DER certificates. */
function pkcs7(...certs: TestCertificate[]): Uint8Array {
  const certSet = Buffer.concat(certs.map((c) => Buffer.from(c.der)));
  const tagged = (tag: number, content: Uint8Array): Uint8Array => {
    const seq = sequence(content); // 0x30 len content → swap the tag
    const out = new Uint8Array(seq);
    out[0] = tag;
    return out;
  };
  const signedData = sequence(
    new Uint8Array([0x02, 0x01, 0x01]), // version 1
    new Uint8Array([0x31, 0x00]), // digestAlgorithms
    sequence(oid('1.2.840.113549.1.7.1')), // contentInfo data
    tagged(0xa0, new Uint8Array(certSet)), // [0] IMPLICIT certificates
    new Uint8Array([0x31, 0x00]), // signerInfos
  );
  return sequence(oid('1.2.840.113549.1.7.2'), tagged(0xa0, signedData));
}

let server: Server;
let base = '';
const routes = new Map<string, (res: import('node:http').ServerResponse) => void>();
const hits = new Map<string, number>();

beforeAll(async () => {
  server = createServer((req, res) => {
    const path = req.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route) route(res);
    else {
      res.statusCode = 404;
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const root = pki.root('AIA Root', { key: 'rsa-2048' });
const inter = pki.intermediate('AIA Inter', root);
const serve = (path: string, body: Uint8Array | string, type = 'application/pkix-cert'): void => {
  routes.set(path, (res) => {
    res.setHeader('content-type', type);
    res.end(body);
  });
};

describe('createAiaFetcher', () => {
  it('parses DER, PEM, PKCS#7 DER and PKCS#7 PEM bodies when fetched', async () => {
    serve('/inter.cer', inter.der);
    serve('/inter.pem', inter.pem, 'text/plain');
    serve('/inter.p7c', pkcs7(inter, root), 'application/pkcs7-mime');
    const p7pem = `-----BEGIN PKCS7-----\n${Buffer.from(pkcs7(inter)).toString('base64')}\n-----END PKCS7-----\n`;
    serve('/inter-p7.pem', p7pem, 'text/plain');
    const fetcher = createAiaFetcher();
    try {
      for (const path of ['/inter.cer', '/inter.pem', '/inter-p7.pem']) {
        const certs = await fetcher.fetchCertificates(`${base}${path}`);
        expect(Buffer.from(certs[0]!.der)).toEqual(Buffer.from(inter.der));
      }
      expect(await fetcher.fetchCertificates(`${base}/inter.p7c`)).toHaveLength(2);
    } finally {
      await fetcher.close();
    }
  });

  it('fails with code 6000 when the server answers 404 or garbage', async () => {
    serve('/garbage', 'definitely not a certificate', 'text/plain');
    const fetcher = createAiaFetcher();
    try {
      await expect(fetcher.fetchCertificates(`${base}/missing`)).rejects.toMatchObject({ code: 6000 });
      await expect(fetcher.fetchCertificates(`${base}/garbage`)).rejects.toMatchObject({ code: 6000 });
    } finally {
      await fetcher.close();
    }
  });

  it('times out when the server is too slow', async () => {
    routes.set('/slow', (res) => {
      setTimeout(() => res.end(inter.der), 2_000).unref();
    });
    const fetcher = createAiaFetcher({ timeoutMs: 200 });
    const started = Date.now();
    try {
      await expect(fetcher.fetchCertificates(`${base}/slow`)).rejects.toThrow(/timed out after 200 ms/);
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      await fetcher.close();
    }
  });

  it('refuses bodies above the size cap', async () => {
    serve('/big', new Uint8Array(64 * 1024));
    const fetcher = createAiaFetcher({ maxResponseBytes: 4096 });
    try {
      await expect(fetcher.fetchCertificates(`${base}/big`)).rejects.toThrow(/larger than 4096 bytes/);
    } finally {
      await fetcher.close();
    }
  });

  it('follows redirects up to the limit', async () => {
    routes.set('/r1', (res) => {
      res.writeHead(302, { location: '/inter.cer' });
      res.end();
    });
    routes.set('/loop', (res) => {
      res.writeHead(301, { location: '/loop' });
      res.end();
    });
    const fetcher = createAiaFetcher({ maxRedirects: 2 });
    try {
      expect(await fetcher.fetchCertificates(`${base}/r1`)).toHaveLength(1);
      await expect(fetcher.fetchCertificates(`${base}/loop`)).rejects.toThrow(/stopped after 2 redirects/);
    } finally {
      await fetcher.close();
    }
  });

  it('serves repeated fetches from its cache', async () => {
    serve('/cached.cer', inter.der);
    const fetcher = createAiaFetcher();
    try {
      await fetcher.fetchCertificates(`${base}/cached.cer`);
      await fetcher.fetchCertificates(`${base}/cached.cer`);
      expect(hits.get('/cached.cer')).toBe(1);
    } finally {
      await fetcher.close();
    }
  });

  it('asks the fetchGuard with the resolved address and honours a refusal', async () => {
    const seen: Array<[string, string | null]> = [];
    const fetcher = createAiaFetcher({
      fetchGuard: (url, address) => {
        seen.push([url.pathname, address]);
        return url.pathname !== '/inter.pem';
      },
    });
    try {
      expect(await fetcher.fetchCertificates(`${base}/inter.cer`)).toHaveLength(1);
      await expect(fetcher.fetchCertificates(`${base}/inter.pem`)).rejects.toThrow(/refused by fetchGuard/);
      const localhostBase = base.replace('127.0.0.1', 'localhost');
      const viaName = await fetcher.fetchCertificates(`${localhostBase}/inter.cer`).catch(() => null);
      expect(viaName === null || viaName.length === 1).toBe(true);
      expect(seen[0]).toEqual(['/inter.cer', '127.0.0.1']);
    } finally {
      await fetcher.close();
    }
  });

  it('refuses non-http schemes', async () => {
    const fetcher = createAiaFetcher();
    await expect(fetcher.fetchCertificates('ldap://example.com/cn=x')).rejects.toThrow(/unsupported CA Issuers URL scheme/);
    await fetcher.close();
  });
});

describe('isLoopbackHost', () => {
  it('treats localhost and loopback IPs as loopback when checking proxy bypass', () => {
    expect(['localhost', '127.0.0.1', '127.1.2.3', '[::1]', '::1'].every(isLoopbackHost)).toBe(true);
    expect(['example.com', '10.0.0.1', '::2'].some(isLoopbackHost)).toBe(false);
  });
});

describe('resolveChains', () => {
  const pools = (): TrustPools => ({ roots: new CertificatePool([p(root)]), intermediates: new CertificatePool() });

  it('rebundles through an AIA-fetched intermediate and learns it into the pool', async () => {
    serve('/aia-inter.cer', inter.der);
    const leaf = pki.leaf('aia.example.com', inter, { caIssuers: [`${base}/aia-inter.cer`] });
    const fetcher = createAiaFetcher();
    const trust = pools();
    try {
      const r = await resolveChains([p(leaf)], trust, { now, fetcher });
      expect(r.result).toBe(true);
      expect(r.chains[0]).toHaveLength(3);
      expect(r.learned).toHaveLength(1);
      expect(trust.intermediates.size).toBe(1);
    } finally {
      await fetcher.close();
    }
  });

  it('chases two AIA hops when the intermediate itself needs one', async () => {
    const mid = pki.intermediate('AIA Mid', inter);
    serve('/hop1.cer', mid.der);
    serve('/hop2.cer', inter.der);
    const midWithAia = pki.intermediate('AIA Mid', inter, { caIssuers: [`${base}/hop2.cer`], key: mid.key });
    serve('/hop1.cer', midWithAia.der);
    const leaf = pki.leaf('hop.example.com', midWithAia, { caIssuers: [`${base}/hop1.cer`] });
    const fetcher = createAiaFetcher();
    try {
      const r = await resolveChains([p(leaf)], pools(), { now, fetcher });
      expect(r.result).toBe(true);
      expect(r.chains[0]).toHaveLength(4);
    } finally {
      await fetcher.close();
    }
  });

  it('keeps the original unknown-authority error when AIA yields nothing', async () => {
    const leaf = pki.leaf('noaia.example.com', inter, { caIssuers: [`${base}/missing.cer`, 'http://127.0.0.1:1/x.cer'] });
    const fetcher = createAiaFetcher({ timeoutMs: 1_000 });
    try {
      const r = await resolveChains([p(leaf)], pools(), { now, fetcher });
      expect(r).toMatchObject({ result: false, resultCode: 1220, resultMessage: 'x509: certificate signed by unknown authority' });
    } finally {
      await fetcher.close();
    }
  });

  it('learns supplied intermediates without any fetcher', async () => {
    const leaf = pki.leaf('supplied.example.com', inter);
    const trust = pools();
    const r = await resolveChains([p(leaf), p(inter)], trust, { now });
    expect(r.result).toBe(true);
    expect(trust.intermediates.has(p(inter))).toBe(true);
  });

  it('does not learn an intermediate that chains to no root', async () => {
    const otherRoot = pki.root('AIA Other Root');
    const stray = pki.intermediate('AIA Stray', otherRoot);
    const leaf = pki.leaf('stray.example.com', stray);
    const trust = pools();
    const r = await resolveChains([p(leaf), p(stray)], trust, { now });
    expect(r.resultCode).toBe(1220);
    expect(trust.intermediates.size).toBe(0);
  });
});

describe('discoverIntermediates', () => {
  it('stops at maxFetches when AIA links form an endless chain', async () => {
    let counter = 0;
    routes.set('/endless', (res) => {
      counter++;
      const ca = pki.root(`Endless ${counter}`, { key: 'ecdsa-p256', caIssuers: [`${base}/endless?${counter}`] });
      res.end(ca.der);
    });
    for (let i = 0; i < 20; i++) {
      routes.set(`/endless?${i}`, routes.get('/endless')!);
    }
    const leaf = pki.leaf('endless.example.com', pki.root('Endless 0', { key: 'ecdsa-p256' }), { caIssuers: [`${base}/endless`] });
    const fetcher = createAiaFetcher();
    try {
      const r = await discoverIntermediates([p(leaf)], { roots: new CertificatePool(), intermediates: new CertificatePool() }, {
        now,
        fetcher,
        maxFetches: 3,
        maxHops: 10,
      });
      expect(r.chainsFound).toBe(0);
      expect(r.fetchedUrls.length).toBeLessThanOrEqual(3);
    } finally {
      await fetcher.close();
    }
  });
});
