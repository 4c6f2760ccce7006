/**
 * koa's `accepts` is overridden to 2.x in the root package.json, so that koa's dependencies hold one
 * major of mime-types: with accepts 1.x beside type-is 2.x, two majors each built their tables
 * from their own copy of mime-db while the server started (≈10 ms of its main thread; see
 * docs/performance.md, start-up pass 6b). certsmith calls none of koa's content negotiation itself;
 * these tests keep koa's own uses working on the overridden versions.
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { Socket } from 'node:net';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';

const fromKoa = createRequire(createRequire(import.meta.url).resolve('koa'));

/** The version of `name` that the package at `from` resolves. */
function versionSeenBy(from: string, name: string): string {
  return (createRequire(fromKoa.resolve(from))(`${name}/package.json`) as { version: string }).version;
}

/** A koa context for a request with `headers` (no socket traffic). */
function contextFor(headers: Record<string, string>): Koa.Context {
  const request = new IncomingMessage(new Socket());
  request.headers = headers;
  return new Koa().createContext(request, new ServerResponse(request));
}

describe("koa's dependencies", () => {
  it('hold one major of mime-types (accepts and type-is agree)', () => {
    const acceptsMime = versionSeenBy('accepts', 'mime-types');
    expect(acceptsMime).toBe(versionSeenBy('type-is', 'mime-types'));
    expect(acceptsMime.split('.')[0]).toBe(fromKoa('mime-types/package.json').version.split('.')[0]);
  });

  it('still negotiate types, encodings and languages (accepts 2)', () => {
    const context = contextFor({ accept: 'application/json, text/html;q=0.5', 'accept-encoding': 'gzip;q=0.8, br', 'accept-language': 'en;q=0.7, de' });
    expect(context.accepts('html', 'json')).toBe('json');
    expect(context.accepts('text/html')).toBe('text/html');
    expect(context.accepts('png')).toBe(false);
    expect(context.acceptsEncodings('gzip', 'br')).toBe('br');
    expect(context.acceptsLanguages('en', 'de')).toBe('de');
  });

  it('still tell request types and set response types (type-is, mime-types)', () => {
    const context = contextFor({ 'content-type': 'application/json; charset=utf-8', 'content-length': '2' });
    expect(context.is('json')).toBe('json');
    expect(context.is('html')).toBe(false);
    context.type = 'json';
    expect(context.response.get('Content-Type')).toBe('application/json; charset=utf-8');
    context.type = 'text';
    expect(context.response.get('Content-Type')).toBe('text/plain; charset=utf-8');
  });
});
