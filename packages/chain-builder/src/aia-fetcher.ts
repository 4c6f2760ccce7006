/**
 * Fetching "CA Issuers" certificates named in Authority Information Access (RFC 5280 4.2.2.1) —
 * CFSSL's `fetchRemoteCertificate` (behaviour doc 2.6), bounded: per-fetch timeout, response size
 * cap, redirect limit, http(s) only, non-2xx refused, and a cache of successful fetches. Bodies may
 * be DER, PEM, PKCS#7 DER (`.p7c`) or PKCS#7 PEM.
 *
 * Outbound HTTP honours `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` like Go's `ProxyFromEnvironment`
 * (undici `EnvHttpProxyAgent`), and — also like Go — never proxies `localhost` or loopback IPs.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { Agent, Dispatcher } from 'undici';
import { CertsmithError, ErrorCode, isCodedError, parseCertificates, type Certificate } from '@certsmith/x509-core';

/**
 * Decides whether a fetch may go to `url`. `resolvedAddress` is the IP the connection will use
 * (checked for every DNS answer and every redirect hop), or `null` when the request goes through a
 * proxy and the target is resolved there. Return false to refuse (e.g. private networks).
 */
export type FetchGuard = (url: URL, resolvedAddress: string | null) => boolean | Promise<boolean>;

/**
 * Why a fetch failed, from a closed list so it can be a metric label:
 * - `invalid_url`: not a URL, or not http(s) (also on a redirect);
 * - `blocked`: refused by the {@link FetchGuard} (e.g. a private address);
 * - `timeout`: the whole-fetch timeout expired;
 * - `too_large`: the body exceeded `maxResponseBytes`;
 * - `too_many_redirects`: more than `maxRedirects` redirects;
 * - `http_status`: a non-2xx, non-redirect answer;
 * - `parse`: the body is not a certificate (DER, PEM or PKCS#7);
 * - `network`: anything else on the way (DNS, connection refused or reset, TLS).
 */
export type AiaFetchFailureReason = 'invalid_url' | 'blocked' | 'timeout' | 'too_large' | 'too_many_redirects' | 'http_status' | 'parse' | 'network';

/**
 * One `fetchCertificates` call as the observer sees it. Never names the URL: observations feed
 * metrics, whose labels must stay bounded (and URLs come from submitted certificates).
 * - `fetched`: an HTTP fetch succeeded (`certificates` parsed from the body);
 * - `cache_hit`: answered without a new request, from the cache of successful fetches or by a fetch
 *   of the same URL already in flight (reported when that fetch succeeds);
 * - `failed`: an HTTP fetch failed, with a bounded `reason`.
 */
export type AiaFetchObservation =
  | { readonly outcome: 'fetched'; readonly durationMs: number; readonly certificates: number }
  | { readonly outcome: 'cache_hit' }
  | { readonly outcome: 'failed'; readonly reason: AiaFetchFailureReason; readonly durationMs: number };

/** Receives an {@link AiaFetchObservation} per call; must not throw (a throw is ignored) and should be cheap. */
export type AiaFetchObserver = (observation: AiaFetchObservation) => void;

/** Options of {@link createAiaFetcher}. */
export interface AiaFetcherOptions {
  /** Whole-fetch timeout including redirects and body. Default 5,000 ms. */
  timeoutMs?: number;
  /** Largest accepted body. Default 1 MiB (an issuer certificate is a few KiB). */
  maxResponseBytes?: number;
  /** Redirects followed per fetch. Default 3. */
  maxRedirects?: number;
  /** How long a successful fetch is reused. Default 1 hour. */
  cacheTtlMs?: number;
  /** Cached URLs kept (oldest evicted). Default 1,000. */
  cacheMaxEntries?: number;
  /** Refuse targets (see {@link FetchGuard}). Default: allow all. */
  fetchGuard?: FetchGuard;
  /** Dispatcher for non-loopback targets. Default: `new EnvHttpProxyAgent()` (proxy from env). */
  dispatcher?: Dispatcher;
  /** Clock for the cache. Default `Date.now`. */
  clock?: () => number;
  /** Told the outcome of every `fetchCertificates` call (metrics); see {@link AiaFetchObservation}. */
  observer?: AiaFetchObserver;
}

/** A fetch failed (network, status, size, timeout, unparsable body). Never reaches API clients. */
export class AiaFetchError extends CertsmithError {
  /** Why, from a closed list (see {@link AiaFetchFailureReason}). */
  readonly reason: AiaFetchFailureReason;

  constructor(message: string, options?: { cause?: unknown; reason?: AiaFetchFailureReason }) {
    super(ErrorCode.DialFailed, message, options);
    this.reason = options?.reason ?? 'network';
  }
}

/** Fetches issuer certificates by URL. */
export interface AiaFetcher {
  /**
   * The certificates at `url` (one for DER/PEM, possibly several for PKCS#7).
   * @throws {AiaFetchError} on any failure
   */
  fetchCertificates(url: string): Promise<Certificate[]>;
  /** Release connection pools. */
  close(): Promise<void>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Go's `useProxy` exemptions: `localhost` and loopback addresses always go direct. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const family = isIP(host);
  if (family === 4) return host.startsWith('127.');
  if (family === 6) return host === '::1' || /^::ffff:127\./.test(host) || /^0*:0*:0*:0*:0*:0*:0*:0*1$/.test(host);
  return false;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that resolves, then asks the guard about every address it would use. */
function guardedLookup(url: URL, guard: FetchGuard) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      void Promise.all(addresses.map(async (a) => ((await guard(url, a.address)) ? a : null))).then(
        (checked) => {
          const allowed = checked.filter((a): a is LookupAddress => a !== null);
          if (allowed.length === 0) {
            const refused = new Error(`fetch to ${url.href} refused by fetchGuard`) as NodeJS.ErrnoException;
            refused.code = 'EGUARD';
            callback(refused, '', 0);
          } else if (options.all) callback(null, allowed);
          else callback(null, (allowed[0] as LookupAddress).address, (allowed[0] as LookupAddress).family);
        },
        (guardError: unknown) => callback(guardError as NodeJS.ErrnoException, '', 0),
      );
    });
  };
}

async function readCapped(body: AsyncIterable<Uint8Array> & { destroy?: () => void }, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > maxBytes) {
      body.destroy?.();
      throw new AiaFetchError(`response larger than ${maxBytes} bytes`, { reason: 'too_large' });
    }
    chunks.push(Buffer.from(chunk));
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * Create a fetcher. One per process (or worker) is enough; it pools connections and caches
 * successful fetches, so repeated bundles of the same incomplete chain do not refetch.
 */
export function createAiaFetcher(options: AiaFetcherOptions = {}): AiaFetcher {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxResponseBytes ?? 1024 * 1024;
  const maxRedirects = options.maxRedirects ?? 3;
  const ttl = options.cacheTtlMs ?? 3_600_000;
  const maxEntries = options.cacheMaxEntries ?? 1_000;
  const clock = options.clock ?? Date.now;
  const guard = options.fetchGuard;
  // undici is loaded, and its agents made, on the first fetch: importing it costs ≈0.4 s of CPU,
  // which every process and worker thread that merely *can* chase AIA would otherwise pay at start.
  let agents: Promise<{ undici: typeof import('undici'); proxied: Dispatcher; direct: Agent }> | null = null;
  const loadAgents = () =>
    (agents ??= import('undici').then((undici) => ({
      undici,
      proxied: options.dispatcher ?? new undici.EnvHttpProxyAgent(),
      direct: new undici.Agent(),
    })));
  const cache = new Map<string, { at: number; certs: Certificate[] }>();
  const inFlight = new Map<string, Promise<Certificate[]>>();

  async function get(url: URL, signal: AbortSignal): Promise<{ statusCode: number; location: string | null; body: Uint8Array | null }> {
    const { undici, proxied, direct } = await loadAgents();
    const loopback = isLoopbackHost(url.hostname);
    let dispatcher: Dispatcher = loopback ? direct : proxied;
    let perRequest: Agent | null = null;
    if (guard) {
      const literal = isIP(url.hostname.replace(/^\[|\]$/g, '')) !== 0;
      if (literal || (!loopback && !options.dispatcher && proxyConfigured(url))) {
        // The connection goes to a literal IP (no lookup happens) or through a proxy (the proxy resolves).
        const address = literal ? url.hostname.replace(/^\[|\]$/g, '') : null;
        if (!(await guard(url, address))) throw new AiaFetchError(`fetch to ${url.href} refused by fetchGuard`, { reason: 'blocked' });
      } else {
        perRequest = new undici.Agent({ connect: { lookup: guardedLookup(url, guard) as never } });
        dispatcher = perRequest;
      }
    }
    try {
      const response = await undici.request(url, { method: 'GET', dispatcher, signal, headers: { accept: '*/*' } });
      if (REDIRECTS.has(response.statusCode)) {
        await response.body.dump();
        const location = response.headers.location;
        return { statusCode: response.statusCode, location: Array.isArray(location) ? (location[0] ?? null) : (location ?? null), body: null };
      }
      if (response.statusCode < 200 || response.statusCode > 299) {
        await response.body.dump();
        return { statusCode: response.statusCode, location: null, body: null };
      }
      return { statusCode: response.statusCode, location: null, body: await readCapped(response.body, maxBytes) };
    } finally {
      if (perRequest) void perRequest.close();
    }
  }

  async function fetchUncached(href: string): Promise<Certificate[]> {
    let url: URL;
    try {
      url = new URL(href);
    } catch (error) {
      throw new AiaFetchError(`invalid CA Issuers URL ${JSON.stringify(href)}`, { cause: error, reason: 'invalid_url' });
    }
    // Loading undici (first fetch only) is not the remote's time: start the clock after it.
    await loadAgents();
    const signal = AbortSignal.timeout(timeoutMs);
    for (let hop = 0; ; hop++) {
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        throw new AiaFetchError(`unsupported CA Issuers URL scheme ${url.protocol}`, { reason: 'invalid_url' });
      }
      let response: Awaited<ReturnType<typeof get>>;
      try {
        response = await get(url, signal);
      } catch (error) {
        if (error instanceof AiaFetchError) throw error;
        // A guard's coded refusal (e.g. `createNetworkGuard`) already names the URL and the address.
        if (isCodedError(error) && error.code === ErrorCode.DialFailed) throw new AiaFetchError(error.message, { cause: error, reason: 'blocked' });
        if (signal.aborted) throw new AiaFetchError(`GET ${url.href}: timed out after ${timeoutMs} ms`, { cause: error, reason: 'timeout' });
        const message = error instanceof Error ? error.message : String(error);
        throw new AiaFetchError(`GET ${url.href}: ${message}`, { cause: error, reason: refusedByGuard(error) ? 'blocked' : 'network' });
      }
      if (response.location !== null) {
        if (hop >= maxRedirects) throw new AiaFetchError(`GET ${href}: stopped after ${maxRedirects} redirects`, { reason: 'too_many_redirects' });
        try {
          url = new URL(response.location, url);
        } catch (error) {
          throw new AiaFetchError(`GET ${url.href}: invalid redirect location`, { cause: error, reason: 'invalid_url' });
        }
        continue;
      }
      if (response.body === null) throw new AiaFetchError(`GET ${url.href}: HTTP ${response.statusCode}`, { reason: 'http_status' });
      try {
        return parseCertificates(response.body);
      } catch (error) {
        throw new AiaFetchError(`GET ${url.href}: body is not a certificate`, { cause: error, reason: 'parse' });
      }
    }
  }

  const observer = options.observer;
  const observe = (observation: AiaFetchObservation): void => {
    if (observer === undefined) return;
    try {
      observer(observation);
    } catch {
      // Counting must never change what a bundle request gets.
    }
  };

  return {
    async fetchCertificates(href: string): Promise<Certificate[]> {
      const hit = cache.get(href);
      if (hit && clock() - hit.at < ttl) {
        observe({ outcome: 'cache_hit' });
        return hit.certs;
      }
      const pending = inFlight.get(href);
      if (pending) {
        // The fetch in flight reports itself; joining it saved a request, once it succeeds.
        return pending.then((certs) => {
          observe({ outcome: 'cache_hit' });
          return certs;
        });
      }
      const started = performance.now();
      const promise = fetchUncached(href)
        .then(
          (certs) => {
            observe({ outcome: 'fetched', durationMs: performance.now() - started, certificates: certs.length });
            return certs;
          },
          (error: unknown) => {
            const reason = error instanceof AiaFetchError ? error.reason : 'network';
            observe({ outcome: 'failed', reason, durationMs: performance.now() - started });
            throw error;
          },
        )
        .then((certs) => {
          cache.delete(href);
          if (cache.size >= maxEntries) {
            const oldest = cache.keys().next().value;
            if (oldest !== undefined) cache.delete(oldest);
          }
          cache.set(href, { at: clock(), certs });
          return certs;
        })
        .finally(() => inFlight.delete(href));
      inFlight.set(href, promise);
      return promise;
    },
    async close(): Promise<void> {
      if (agents === null) return;
      const { proxied, direct } = await agents;
      await Promise.all([direct.close(), options.dispatcher ? Promise.resolve() : proxied.close()]);
    },
  };
}

/** Whether `error` (or an error it wraps) is {@link guardedLookup}'s refusal. */
function refusedByGuard(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if ((current as NodeJS.ErrnoException).code === 'EGUARD') return true;
  }
  return false;
}

/** Whether the environment routes `url` through a proxy (Go `httpproxy` rules, simplified: NO_PROXY suffixes, `*`). */
function proxyConfigured(url: URL): boolean {
  const env = process.env;
  const proxy = url.protocol === 'https:' ? (env.HTTPS_PROXY ?? env.https_proxy) : (env.HTTP_PROXY ?? env.http_proxy);
  if (!proxy) return false;
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? '').split(/[\s,]+/).filter(Boolean);
  const host = url.hostname.toLowerCase();
  for (const entry of noProxy) {
    if (entry === '*') return false;
    const bare = entry.replace(/^\*?\.?/, '').replace(/:\d+$/, '').toLowerCase();
    if (host === bare || host.endsWith(`.${bare}`)) return false;
  }
  return true;
}
