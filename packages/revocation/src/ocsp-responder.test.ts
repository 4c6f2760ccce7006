import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TestPki } from '@certsmith/test-pki';
import { DerReader, derExplicit, derOctetString, derOid, derSequence, elementBytes, parseCertificate } from '@certsmith/x509-core';

import { buildOcspResponse, ocspValidity } from './ocsp-response-builder.js';
import { parseOcspResponse } from './ocsp-response-parser.js';
import type { OcspHttpResponse, OcspLookup, OcspResponseSource } from './ocsp-responder.js';
import { OcspResponder, ifNoneMatchMatches } from './ocsp-responder.js';
import { createOcspIssuer } from './ocsp-issuer.js';
import type { OcspSigningIdentity } from './ocsp-signing-identity.js';
import { createOcspSigningIdentity } from './ocsp-signing-identity.js';
import { createRevocationSigner } from './revocation-signer.js';
import type { LoopbackResponder } from './test-support/loopback.js';
import { serveOnLoopback } from './test-support/loopback.js';
import type { TestHierarchy } from './test-support/pki.js';
import { hierarchy, keySigner, opensslAsync, opensslText, scratch } from './test-support/pki.js';

const NOW = new Date('2026-11-25T23:27:06Z');
const files = scratch();
let h: TestHierarchy;
let identity: OcspSigningIdentity;
let caFile: string;
let leafFile: string;
let otherFile: string;
/** Stored responses by decimal serial (SHA-1 CertIDs, as CFSSL and certsmith store them). */
const stored = new Map<string, Uint8Array>();
const lookups: OcspLookup[] = [];
const memorySource: OcspResponseSource = {
  find(lookup) {
    lookups.push(lookup);
    return stored.get(lookup.serial) ?? null;
  },
};

function serialOf(der: Uint8Array): bigint {
  return BigInt(`0x${parseCertificate(der).serialNumberHex}`);
}

/** The requestList SEQUENCE of a DER OCSPRequest made by openssl (no extensions). */
function readElementList(request: Uint8Array): Uint8Array {
  const outer = new DerReader(request).sequence();
  const tbs = outer.sequence();
  return elementBytes(request, tbs.expect(0x30));
}

function requestDer(args: string[]): Uint8Array {
  const out = `${files.dir}/req-${Math.random().toString(36).slice(2)}.der`;
  opensslText(['ocsp', '-issuer', caFile, ...args, '-reqout', out]);
  return Uint8Array.from(readFileSync(out));
}

beforeAll(async () => {
  h = hierarchy(new TestPki({ now: NOW }), 'responder', 'ecdsa-p256');
  identity = createOcspSigningIdentity({ issuer: h.ca.der, signer: await createRevocationSigner(keySigner(h.responder)) });
  caFile = files.file('ca.pem', h.ca.pem);
  leafFile = files.file('leaf.pem', h.leaf.pem);
  otherFile = files.file('other.pem', h.other.pem);
  const validity = ocspValidity(NOW);
  stored.set(serialOf(h.leaf.der).toString(), (await buildOcspResponse({ identity, serialNumber: serialOf(h.leaf.der), status: 'good', ...validity })).der);
  stored.set(
    serialOf(h.other.der).toString(),
    (await buildOcspResponse({ identity, serialNumber: serialOf(h.other.der), status: 'revoked', revokedAt: NOW, reason: 5, ...ocspValidity(NOW, undefined, NOW) })).der,
  );
});
afterAll(() => files.cleanup());

function responder(options: Partial<ConstructorParameters<typeof OcspResponder>[0]> = {}): OcspResponder {
  return new OcspResponder({ source: memorySource, now: () => NOW.getTime(), ...options });
}

describe('OcspResponder.handle', () => {
  it('answers a POST with the stored DER unchanged and CFSSL caching headers (GMT dates)', async () => {
    const answer = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) });
    const der = stored.get(serialOf(h.leaf.der).toString())!;
    expect(answer.status).toBe(200);
    expect(Buffer.from(answer.body).equals(Buffer.from(der))).toBe(true);
    expect(answer.headers).toEqual({
      'Content-Type': 'application/ocsp-response',
      'Last-Modified': 'Wed, 25 Nov 2026 23:00:00 GMT',
      Expires: 'Sun, 29 Nov 2026 23:00:00 GMT',
      'Cache-Control': `max-age=${96 * 3600 - 27 * 60 - 6}, public, no-transform, must-revalidate`,
      ETag: `"${createHash('sha256').update(der).digest('hex').toUpperCase()}"`,
    });
  });

  it('passes the store key (decimal serial, CA key identifier) to the source', async () => {
    lookups.length = 0;
    await responder({ issuers: [createOcspIssuer(h.ca.der)] }).handle({ method: 'POST', path: '/', body: requestDer(['-sha256', '-cert', leafFile]) });
    expect(lookups[0]).toMatchObject({ serial: serialOf(h.leaf.der).toString(), authorityKeyId: h.ca.subjectKeyIdHex.toLowerCase() });
    lookups.length = 0;
    // Without known issuers, a SHA-1 CertID falls back to CFSSL's key: hex(issuerKeyHash); SHA-2 has none.
    await responder().handle({ method: 'POST', path: '/', body: requestDer(['-sha256', '-cert', leafFile]) });
    expect(lookups[0]!.authorityKeyId).toBeNull();
  });

  it('says max-age=0 for a stale response and still serves it, as CFSSL', async () => {
    const later = responder({ now: () => Date.UTC(2026, 11, 1) });
    const answer = await later.handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) });
    expect(answer.headers['Cache-Control']).toBe('max-age=0, public, no-transform, must-revalidate');
  });

  it.each([
    ['standard padded base64', (b64: string) => `/${encodeURIComponent(b64)}`, '/'],
    ['literal + / = characters', (b64: string) => `/${b64}`, '/'],
    ['URL-safe unpadded base64', (b64: string) => `/${b64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`, '/'],
    ['a mount path', (b64: string) => `/ocsp/${encodeURIComponent(b64)}`, '/ocsp/'],
    ['a mount path without the slash', (b64: string) => `/ocsp/${b64}`, '/ocsp'],
    ['a query string', (b64: string) => `/${encodeURIComponent(b64)}?x=1`, '/'],
  ])('answers a GET with %s', async (_name, toPath, mount) => {
    const b64 = Buffer.from(requestDer(['-cert', leafFile, '-no_nonce'])).toString('base64');
    const answer = await responder({ path: mount }).handle({ method: 'GET', path: toPath(b64) });
    expect(answer.status).toBe(200);
    expect(parseOcspResponse(answer.body).basic?.responses[0]?.status).toBe('good');
  });

  it('answers a GET whose base64 contains // without redirecting', async () => {
    // Find a nonce that makes the base64 contain "//" (CFSSL redirects those with 301, cfssl #387).
    // The nonce is the request's last 16 bytes: vary them until the base64 has "//".
    const request = requestDer(['-cert', leafFile, '-nonce']);
    let path: string | undefined;
    for (let i = 0; i < 100_000 && path === undefined; i++) {
      request.set(randomBytes(16), request.length - 16);
      const b64 = Buffer.from(request).toString('base64');
      if (b64.includes('//')) path = `/${b64}`;
    }
    expect(path).toBeDefined();
    const answer = await responder().handle({ method: 'GET', path: path! });
    expect(answer.status).toBe(200);
  });

  it.each(['HEAD', 'PUT', 'DELETE'])('answers %s with 405 and an empty body', async (method) => {
    const answer = await responder().handle({ method, path: '/' });
    expect(answer).toMatchObject({ status: 405, headers: { Allow: 'GET, POST' } });
    expect(answer.body).toHaveLength(0);
  });

  it.each([
    ['an empty POST', { method: 'POST', path: '/', body: new Uint8Array(0) }],
    ['garbage', { method: 'POST', path: '/', body: Uint8Array.of(1, 2, 3) }],
    ['a GET without a request', { method: 'GET', path: '/' }],
    ['a GET with a non-base64 path', { method: 'GET', path: '/not*base64' }],
    ['a GET outside the mount path', { method: 'GET', path: '/other/MEIw' }],
  ])('answers %s with 400 malformedRequest', async (_name, request) => {
    const answer = await responder({ path: '/' === request.path.slice(0, 6) ? '/' : '/ocsp' }).handle(request);
    expect(answer.status).toBe(400);
    expect(Buffer.from(answer.body).toString('hex')).toBe('30030a0101');
    expect(answer.headers['Content-Type']).toBe('application/ocsp-response');
  });

  it('answers an unknown serial with 200 unauthorized and no-cache', async () => {
    const answer = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-serial', '12345']) });
    expect(answer).toMatchObject({ status: 200, headers: { 'Cache-Control': 'max-age=0, no-cache' } });
    expect(Buffer.from(answer.body).toString('hex')).toBe('30030a0106');
  });

  it('answers a failing source with 500 internalError and reports the error', async () => {
    const errors: unknown[] = [];
    const failing = new OcspResponder({ source: { find: () => Promise.reject(new Error('db down')) }, onError: (error) => errors.push(error) });
    const answer = await failing.handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) });
    expect(answer.status).toBe(500);
    expect(Buffer.from(answer.body).toString('hex')).toBe('30030a0102');
    expect(errors).toHaveLength(1);
  });

  it('answers an unparsable stored response with 200 internalError, as CFSSL', async () => {
    const broken = new OcspResponder({ source: { find: () => Uint8Array.of(0x30, 0x00) } });
    const answer = await broken.handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) });
    expect(answer.status).toBe(200);
    expect(Buffer.from(answer.body).toString('hex')).toBe('30030a0102');
  });

  it.each([
    ['the exact ETag', (etag: string) => etag],
    ['a weak ETag', (etag: string) => `W/${etag}`],
    ['a list', (etag: string) => `"other", ${etag}`],
    ['*', () => '*'],
  ])('answers If-None-Match with %s by 304 without body or Content-Type', async (_name, toHeader) => {
    const first = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) });
    const answer = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]), headers: { 'if-none-match': toHeader(first.headers['ETag']!) } });
    expect(answer.status).toBe(304);
    expect(answer.body).toHaveLength(0);
    expect(answer.headers['Content-Type']).toBeUndefined();
    expect(answer.headers['ETag']).toBe(first.headers['ETag']);
  });

  it('finds If-None-Match in any case', async () => {
    const first = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) });
    const answer = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]), headers: { Host: 'x', 'If-None-Match': first.headers['ETag']! } });
    expect(answer.status).toBe(304);
  });

  it('answers 200 when If-None-Match names another tag', async () => {
    const answer = await responder().handle({ method: 'POST', path: '/', body: requestDer(['-cert', leafFile]), headers: { 'If-None-Match': '"ABC"' } });
    expect(answer.status).toBe(200);
  });

  it('re-signs a stored SHA-1 response for a SHA-256 request when it can sign for the CA, and caches it', async () => {
    const withIdentity = responder({ issuers: [createOcspIssuer(identity)] });
    const first = await withIdentity.handle({ method: 'POST', path: '/', body: requestDer(['-sha256', '-cert', leafFile]) });
    const single = parseOcspResponse(first.body).basic!.responses[0]!;
    expect(single.certId.hashAlgorithm).toBe('SHA256');
    expect(single.thisUpdate).toEqual(new Date('2026-11-25T23:00:00Z'));
    const second = await withIdentity.handle({ method: 'POST', path: '/', body: requestDer(['-sha256', '-cert', leafFile]) });
    expect(Buffer.from(second.body).equals(Buffer.from(first.body))).toBe(true);
  });

  it('serves the stored SHA-1 response to a SHA-256 request when it cannot sign (CFSSL file-source behaviour)', async () => {
    const answer = await responder({ issuers: [createOcspIssuer(h.ca.der)] }).handle({ method: 'POST', path: '/', body: requestDer(['-sha256', '-cert', leafFile]) });
    expect(parseOcspResponse(answer.body).basic!.responses[0]!.certId.hashAlgorithm).toBe('SHA1');
  });

  it('echoes a nonce with a fresh, uncached response when nonces are signed', async () => {
    const signing = responder({ issuers: [createOcspIssuer(identity)], nonces: 'sign' });
    const request = requestDer(['-cert', leafFile, '-nonce']);
    const answer = await signing.handle({ method: 'POST', path: '/', body: request });
    expect(answer.headers['Cache-Control']).toBe('no-store');
    expect(parseOcspResponse(answer.body).basic!.nonce).not.toBeNull();
    // By default the nonce is ignored, as CFSSL does.
    const ignoring = await responder({ issuers: [createOcspIssuer(identity)] }).handle({ method: 'POST', path: '/', body: request });
    expect(parseOcspResponse(ignoring.body).basic!.nonce).toBeNull();
  });
});

describe('OcspResponder.respond', () => {
  it('answers without a promise when the source answers synchronously, with what handle answers', async () => {
    const request = { method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) };
    const answer = responder().respond(request);
    expect(answer).not.toBeInstanceOf(Promise);
    expect(answer).toEqual(await responder().handle(request));
  });

  it('answers with a promise when the source answers with one, and with 500 when it rejects', async () => {
    const request = { method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) };
    const asynchronous = responder({ source: { find: async (lookup) => memorySource.find(lookup) } }).respond(request);
    expect(asynchronous).toBeInstanceOf(Promise);
    expect((await asynchronous).status).toBe(200);
    const errors: unknown[] = [];
    const failing = responder({ source: { find: () => Promise.reject(new Error('down')) }, onError: (error) => errors.push(error) }).respond(request);
    expect(await failing).toMatchObject({ status: 500 });
    expect(errors).toHaveLength(1);
  });

  it('keeps Cache-Control current as the clock moves, for responses sharing a nextUpdate', () => {
    let now = NOW.getTime();
    const moving = responder({ now: () => now });
    const request = { method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) };
    const first = moving.respond(request) as { headers: Record<string, string> };
    now += 5_000;
    const later = moving.respond(request) as { headers: Record<string, string> };
    const maxAge = (answer: { headers: Record<string, string> }) => Number(/max-age=(\d+)/.exec(answer.headers['Cache-Control']!)![1]);
    expect(maxAge(first) - maxAge(later)).toBe(5);
  });

  it('answers one stored response with one frozen answer while its max-age stays, and a new one when it moves', () => {
    let now = NOW.getTime();
    const moving = responder({ now: () => now });
    const request = { method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) };
    const first = moving.respond(request) as OcspHttpResponse;
    expect(Object.isFrozen(first) && Object.isFrozen(first.headers)).toBe(true);
    expect(moving.respond({ ...request, body: Uint8Array.from(request.body) })).toBe(first);
    now += 1_000;
    const later = moving.respond(request) as OcspHttpResponse;
    expect(later).not.toBe(first);
    expect(later.headers['Cache-Control']).not.toBe(first.headers['Cache-Control']);
    expect(later.body).toBe(first.body);
  });

  it('answers with the new response once the source returns one (a refresh), and 304 only for the tag asked', () => {
    const serial = serialOf(h.leaf.der).toString();
    let current = stored.get(serial)!;
    const source: OcspResponseSource = { find: (lookup) => (lookup.serial === serial ? current : null) };
    const refreshing = responder({ source });
    const request = { method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) };
    const before = refreshing.respond(request) as OcspHttpResponse;
    current = stored.get(serialOf(h.other.der).toString())!;
    const after = refreshing.respond(request) as OcspHttpResponse;
    expect(Buffer.from(after.body).equals(Buffer.from(current))).toBe(true);
    expect(after.headers['ETag']).not.toBe(before.headers['ETag']);
    expect((refreshing.respond({ ...request, headers: { 'if-none-match': before.headers['ETag']! } }) as OcspHttpResponse).status).toBe(200);
    const notModified = refreshing.respond({ ...request, headers: { 'if-none-match': after.headers['ETag']! } }) as OcspHttpResponse;
    expect(notModified.status).toBe(304);
    expect(notModified.headers['Last-Modified']).toBe(after.headers['Last-Modified']);
    expect(notModified.headers['Expires']).toBe(after.headers['Expires']);
  });
});

describe('OcspResponder repeated requests', () => {
  /** A source that counts how often it is asked. */
  function counting(fixed: boolean) {
    const source = { asked: 0, fixed, find: (lookup: OcspLookup) => (source.asked++, memorySource.find(lookup)) };
    return source;
  }

  it('asks a fixed source once per request seen (POST by its DER, GET by its path), and answers repeats alike', () => {
    const source = counting(true);
    const fixed = responder({ source });
    const der = requestDer(['-no_nonce', '-cert', leafFile]);
    const get = { method: 'GET', path: `/${encodeURIComponent(Buffer.from(der).toString('base64'))}` };
    const unknown = { method: 'POST', path: '/', body: requestDer(['-no_nonce', '-serial', '0x7e01']) };
    const first = fixed.respond({ method: 'POST', path: '/', body: der }) as OcspHttpResponse;
    for (let i = 0; i < 3; i++) {
      expect(fixed.respond({ method: 'POST', path: '/', body: Uint8Array.from(der) })).toBe(first);
      expect(fixed.respond(get)).toBe(first);
      expect(Buffer.from((fixed.respond(unknown) as OcspHttpResponse).body)).toEqual(Buffer.from([0x30, 0x03, 0x0a, 0x01, 0x06]));
    }
    expect(source.asked).toBe(3);
  });

  it('asks a source that is not fixed for every request, so a changed answer shows at once', () => {
    const source = counting(false);
    const changing = responder({ source });
    const request = { method: 'POST', path: '/', body: requestDer(['-no_nonce', '-cert', leafFile]) };
    for (let i = 0; i < 3; i++) changing.respond(request);
    expect(source.asked).toBe(3);
  });

  it('keeps no request with a nonce, and at most seenRequestsSize of the others', () => {
    const source = counting(true);
    const bounded = responder({ source, seenRequestsSize: 2 });
    const withNonce = { method: 'POST', path: '/', body: requestDer(['-cert', leafFile]) };
    bounded.respond(withNonce);
    bounded.respond(withNonce);
    expect(source.asked).toBe(2);
    const [a, b, c] = [leafFile, otherFile, caFile].map((file) => ({ method: 'POST', path: '/', body: requestDer(['-no_nonce', '-cert', file]) }));
    for (const request of [a, b, a, b]) bounded.respond(request!);
    expect(source.asked).toBe(4);
    // Full: c empties the kept ones (c kept), a is kept next to it, b empties them again (b kept),
    // a is asked again, b is not.
    for (const request of [c, a, b, a, b]) bounded.respond(request!);
    expect(source.asked).toBe(8);
  });

  it('keeps no request over 512 bytes of DER (POST) or 1,024 characters of path (GET)', () => {
    const source = counting(true);
    const fixed = responder({ source });
    const many = requestDer(['-no_nonce', ...Array.from({ length: 12 }, () => ['-cert', leafFile]).flat()]);
    expect(many.length).toBeGreaterThan(512);
    const post = { method: 'POST', path: '/', body: many };
    const get = { method: 'GET', path: `/${encodeURIComponent(Buffer.from(many).toString('base64'))}` };
    expect(get.path.length).toBeGreaterThan(1024);
    for (let i = 0; i < 2; i++) {
      expect((fixed.respond(post) as OcspHttpResponse).status).toBe(200);
      expect((fixed.respond(get) as OcspHttpResponse).status).toBe(200);
    }
    expect(source.asked).toBe(4);
  });

  it('keeps the CertID of a kept POST out of the buffer the body came in', () => {
    const der = requestDer(['-no_nonce', '-cert', leafFile]);
    const chunk = Buffer.alloc(4096);
    chunk.set(der, 100);
    const lookups: OcspLookup[] = [];
    const keeping = responder({ source: { find: (lookup) => (lookups.push(lookup), memorySource.find(lookup)) } });
    keeping.respond({ method: 'POST', path: '/', body: chunk.subarray(100, 100 + der.length) });
    expect(lookups[0]!.certId.serialNumber.buffer).not.toBe(chunk.buffer);
  });

  it('answers a truncated repeat of a kept request malformedRequest', () => {
    const fixed = responder({ source: counting(true) });
    const der = requestDer(['-no_nonce', '-cert', leafFile]);
    fixed.respond({ method: 'POST', path: '/', body: der });
    expect((fixed.respond({ method: 'POST', path: '/', body: der.subarray(0, der.length - 1) }) as OcspHttpResponse).status).toBe(400);
  });
});

describe('OcspResponder nonce limits', () => {
  it('refuses a nonce over 32 octets when it signs nonces, and ignores it otherwise', async () => {
    const base = requestDer(['-cert', leafFile, '-no_nonce']);
    const certIdRequest = readElementList(base);
    const nonce = derOctetString(derOctetString(new Uint8Array(33)));
    const extension = derExplicit(2, derSequence(derSequence(derOid('1.3.6.1.5.5.7.48.1.2'), nonce)));
    const request = derSequence(derSequence(certIdRequest, extension));
    const signing = await responder({ issuers: [createOcspIssuer(identity)], nonces: 'sign' }).handle({ method: 'POST', path: '/', body: request });
    expect(signing.status).toBe(400);
    const ignoring = await responder().handle({ method: 'POST', path: '/', body: request });
    expect(ignoring.status).toBe(200);
  });
});

describe('OcspResponder over HTTP, queried by openssl ocsp -url', () => {
  let server: LoopbackResponder;
  beforeAll(async () => {
    server = await serveOnLoopback(new OcspResponder({ source: memorySource, path: '/ocsp', issuers: [createOcspIssuer(identity)], nonces: 'sign' }));
  });
  afterAll(() => server.close());

  it('answers good, then revoked with reason and time, and the nonce verifies', async () => {
    const good = await opensslAsync(['ocsp', '-issuer', caFile, '-cert', leafFile, '-url', `${server.url}/ocsp`, '-CAfile', caFile, '-attime', String(NOW.getTime() / 1000)]);
    expect(good.output).toContain('Response verify OK');
    expect(good.output).toContain('leaf.pem: good');
    expect(good.output).not.toContain('WARNING: no nonce in response');
    const revoked = await opensslAsync(['ocsp', '-issuer', caFile, '-cert', otherFile, '-url', `${server.url}/ocsp`, '-CAfile', caFile, '-attime', String(NOW.getTime() / 1000)]);
    expect(revoked.output).toContain('Response verify OK');
    expect(revoked.output).toContain('other.pem: revoked');
    expect(revoked.output).toContain('Reason: cessationOfOperation');
    expect(revoked.output).toContain('Revocation Time: Nov 25 23:27:06 2026 GMT');
  });

  it('answers a SHA-256 CertID that openssl matches to its request', async () => {
    const result = await opensslAsync(['ocsp', '-issuer', caFile, '-sha256', '-cert', leafFile, '-url', `${server.url}/ocsp`, '-CAfile', caFile, '-no_nonce', '-attime', String(NOW.getTime() / 1000)]);
    expect(result.output).toContain('Response verify OK');
    expect(result.output).toContain('leaf.pem: good');
  });
});

describe('createOcspRequestListener', () => {
  it('frames every answer with a Content-Length: POST, GET, 304 and 405', async () => {
    const server = await serveOnLoopback(responder());
    try {
      const der = requestDer(['-cert', leafFile]);
      const post = await fetch(`${server.url}/`, { method: 'POST', body: der });
      const body = Buffer.from(await post.arrayBuffer());
      expect(post.status).toBe(200);
      expect(post.headers.get('content-length')).toBe(String(body.length));
      expect(post.headers.get('transfer-encoding')).toBeNull();
      const get = await fetch(`${server.url}/${encodeURIComponent(Buffer.from(der).toString('base64'))}`);
      expect(get.status).toBe(200);
      expect(Buffer.from(await get.arrayBuffer()).equals(body)).toBe(true);
      expect(get.headers.get('content-length')).toBe(String(body.length));
      const notModified = await fetch(`${server.url}/`, { method: 'POST', body: der, headers: { 'If-None-Match': post.headers.get('etag')! } });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(post.headers.get('etag'));
      // RFC 9110 8.6: a 304's Content-Length could only be the 200's; it carries none.
      expect(notModified.headers.get('content-length')).toBeNull();
      const put = await fetch(`${server.url}/`, { method: 'PUT', body: der });
      expect(put.status).toBe(405);
      expect(put.headers.get('allow')).toBe('GET, POST');
      expect(put.headers.get('content-length')).toBe('0');
      // The connection still answers after a PUT whose body was never read.
      expect((await fetch(`${server.url}/`, { method: 'POST', body: der })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('answers a body over the cap with malformedRequest without buffering it', async () => {
    const server = await serveOnLoopback(responder(), { maxBodyBytes: 1024 });
    try {
      const big = await fetch(`${server.url}/`, { method: 'POST', body: new Uint8Array(64 * 1024) });
      expect(big.status).toBe(400);
      expect(Buffer.from(await big.arrayBuffer()).toString('hex')).toBe('30030a0101');
      const normal = await fetch(`${server.url}/`, { method: 'POST', body: requestDer(['-cert', leafFile]) });
      expect(normal.status).toBe(200);
      expect(normal.headers.get('etag')).toMatch(/^"[0-9A-F]{64}"$/);
    } finally {
      await server.close();
    }
  });
});

describe('ifNoneMatchMatches', () => {
  it('compares weakly', () => {
    expect(ifNoneMatchMatches('W/"A"', '"A"')).toBe(true);
    expect(ifNoneMatchMatches('"B"', '"A"')).toBe(false);
  });
});
