/**
 * `createAiaFetcher({ observer })` against a loopback HTTP server: one observation per call, with
 * the outcome (`fetched`, `cache_hit`, `failed`) and, for failures, the bounded reason.
 */
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestPki } from '@certsmith/test-pki';
import { createAiaFetcher, type AiaFetchObservation, type AiaFetcherOptions } from './aia-fetcher.js';
import { createNetworkGuard } from './network-guard.js';

const pki = new TestPki({ now: new Date('2026-11-22T12:00:00Z') });
const root = pki.root('Observer Root', { key: 'ecdsa-p256' });
const inter = pki.intermediate('Observer Inter', root, { key: 'ecdsa-p256' });

const routes = new Map<string, (res: ServerResponse) => void>([
  ['/inter.cer', (res) => res.end(inter.der)],
  ['/garbage.cer', (res) => res.end('not a certificate')],
  ['/big.cer', (res) => res.end(new Uint8Array(8192))],
  ['/loop', (res) => res.writeHead(302, { location: '/loop' }).end()],
  ['/slow.cer', (res) => void setTimeout(() => res.end(inter.der), 300).unref()],
  // Far beyond the failure test's timeout, which itself leaves every other fetch ample time even on
  // a starved CI machine (a 100 ms budget once timed out the very first loopback fetch there).
  ['/very-slow.cer', (res) => void setTimeout(() => res.end(inter.der), 10_000).unref()],
]);
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const route = routes.get(req.url ?? '/');
    if (route) route(res);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** A fetcher whose observations are collected; closed after `body`. */
async function observing(options: AiaFetcherOptions, body: (fetch: (url: string) => Promise<unknown>) => Promise<void>): Promise<AiaFetchObservation[]> {
  const seen: AiaFetchObservation[] = [];
  const fetcher = createAiaFetcher({ ...options, observer: (observation) => seen.push(observation) });
  try {
    await body((url) => fetcher.fetchCertificates(url).catch((error: unknown) => error));
  } finally {
    await fetcher.close();
  }
  return seen;
}

describe('createAiaFetcher observer', () => {
  it('reports a fetch, then cache hits for the same URL', async () => {
    const seen = await observing({}, async (fetch) => {
      await fetch(`${base}/inter.cer`);
      await fetch(`${base}/inter.cer`);
      await fetch(`${base}/inter.cer`);
    });
    expect(seen).toEqual([
      { outcome: 'fetched', durationMs: expect.any(Number), certificates: 1 },
      { outcome: 'cache_hit' },
      { outcome: 'cache_hit' },
    ]);
  });

  it('reports a caller that joined a fetch in flight as a cache hit once it succeeds', async () => {
    const seen = await observing({}, async (fetch) => {
      await Promise.all([fetch(`${base}/slow.cer`), fetch(`${base}/slow.cer`)]);
    });
    expect(seen.map((observation) => observation.outcome).sort()).toEqual(['cache_hit', 'fetched']);
  });

  it('reports each failure with a bounded reason, and never caches it', async () => {
    const seen = await observing({ timeoutMs: 1_500, maxResponseBytes: 4096, maxRedirects: 1 }, async (fetch) => {
      await fetch(`${base}/missing.cer`);
      await fetch(`${base}/missing.cer`);
      await fetch(`${base}/garbage.cer`);
      await fetch(`${base}/big.cer`);
      await fetch(`${base}/loop`);
      await fetch(`${base}/very-slow.cer`);
      await fetch('http://127.0.0.1:1/refused.cer');
      await fetch('ldap://example.com/cn=x');
      await fetch('not a url');
    });
    const reasons = seen.map((observation) => (observation.outcome === 'failed' ? observation.reason : observation.outcome));
    expect(reasons).toEqual(['http_status', 'http_status', 'parse', 'too_large', 'too_many_redirects', 'timeout', 'network', 'invalid_url', 'invalid_url']);
    for (const observation of seen) expect(observation).toMatchObject({ outcome: 'failed', durationMs: expect.any(Number) });
  });

  it('reports refusals by a fetchGuard or the network guard as blocked', async () => {
    const refusing = await observing({ fetchGuard: () => false }, async (fetch) => {
      await fetch(`${base}/inter.cer`);
      await fetch(`${base.replace('127.0.0.1', 'localhost')}/inter.cer`);
    });
    const guarded = await observing({ fetchGuard: createNetworkGuard({}) }, async (fetch) => {
      await fetch(`${base}/inter.cer`);
      await fetch(`${base.replace('127.0.0.1', 'localhost')}/inter.cer`);
    });
    for (const seen of [refusing, guarded]) expect(seen).toEqual([expect.objectContaining({ outcome: 'failed', reason: 'blocked' }), expect.objectContaining({ outcome: 'failed', reason: 'blocked' })]);
  });

  it('puts the reason on the AiaFetchError too', async () => {
    const fetcher = createAiaFetcher();
    try {
      await expect(fetcher.fetchCertificates(`${base}/garbage.cer`)).rejects.toMatchObject({ name: 'AiaFetchError', code: 6000, reason: 'parse' });
    } finally {
      await fetcher.close();
    }
  });

  it('never names the URL, and a throwing observer does not change the result', async () => {
    const fetcher = createAiaFetcher({
      observer: (observation) => {
        expect(JSON.stringify(observation)).not.toContain('127.0.0.1');
        throw new Error('observer bug');
      },
    });
    try {
      expect(await fetcher.fetchCertificates(`${base}/inter.cer`)).toHaveLength(1);
      expect(await fetcher.fetchCertificates(`${base}/inter.cer`)).toHaveLength(1);
      await expect(fetcher.fetchCertificates(`${base}/missing.cer`)).rejects.toMatchObject({ reason: 'http_status' });
    } finally {
      await fetcher.close();
    }
  });
});
