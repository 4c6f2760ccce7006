import { describe, expect, it } from 'vitest';

import type { Http1Limits, Http1ParseEvent } from './request-parser.js';
import { Http1RequestParser } from './request-parser.js';

const LIMITS: Http1Limits = { maxHeaderBytes: 1024, maxUrlBytes: 256, maxBodyBytes: 100 };

/** Feed `input` in pieces of `step` bytes (0 = at once) and collect every event. */
function parse(input: string | Buffer, step = 0, limits: Http1Limits = LIMITS): Http1ParseEvent[] {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'latin1') : input;
  const parser = new Http1RequestParser(limits);
  const events: Http1ParseEvent[] = [];
  const size = step === 0 ? bytes.length || 1 : step;
  for (let at = 0; at < bytes.length; at += size) {
    parser.push(bytes.subarray(at, at + size));
    for (let event = parser.next(); event !== null; event = parser.next()) events.push(event);
  }
  return events;
}

function requests(events: Http1ParseEvent[]) {
  return events.map((event) => {
    if (event.type !== 'request') return event;
    const { request } = event;
    return { method: request.method, target: request.target, version: request.httpVersion, keepAlive: request.keepAlive, body: Buffer.from(request.body).toString('latin1'), headers: { ...request.headers } };
  });
}

const refusal = (events: Http1ParseEvent[]) => events.find((event) => event.type === 'refused');

describe('Http1RequestParser.next', () => {
  it('parses a GET with its headers lower-cased, trimmed and repeated fields joined', () => {
    const [get] = requests(parse('GET /abc?x=1 HTTP/1.1\r\nHost: a\r\nX-Thing:  one \r\nx-thing:two\r\n\r\n'));
    expect(get).toEqual({ method: 'GET', target: '/abc?x=1', version: '1.1', keepAlive: true, body: '', headers: { host: 'a', 'x-thing': 'one, two' } });
  });

  it('parses a Content-Length body, whole and split one byte at a time', () => {
    const input = 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello';
    for (const step of [0, 1, 2, 7]) expect(requests(parse(input, step))).toMatchObject([{ method: 'POST', body: 'hello' }]);
  });

  it('parses pipelined requests in order, split anywhere', () => {
    const input = 'POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET /2 HTTP/1.1\r\nHost: a\r\n\r\n\r\nPOST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n';
    for (const step of [0, 1, 3, 5, 11]) {
      expect(requests(parse(input, step)).map((r) => ('target' in r ? `${r.target}:${r.body}` : r.type))).toEqual(['/1:abc', '/2:', '/3:xy']);
    }
  });

  it('decodes a chunked body with extensions and trailers, split one byte at a time', () => {
    const input = 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;name=value\r\nabc\r\nA \r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n';
    for (const step of [0, 1, 4]) expect(requests(parse(input, step))).toMatchObject([{ body: 'abc0123456789' }]);
  });

  it('skips empty lines before a request line', () => {
    expect(requests(parse('\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n', 1))).toMatchObject([{ method: 'GET' }]);
  });

  it.each([
    ['HTTP/1.1 with Connection: close', 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', false],
    ['HTTP/1.1 by default', 'GET / HTTP/1.1\r\nHost: a\r\n\r\n', true],
    ['HTTP/1.0 by default', 'GET / HTTP/1.0\r\n\r\n', false],
    ['HTTP/1.0 with Connection: keep-alive', 'GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n', true],
    ['a Connection list naming close', 'GET / HTTP/1.1\r\nHost: a\r\nConnection: upgrade, close\r\n\r\n', false],
  ])('keeps the connection alive or not: %s', (_name, input, keepAlive) => {
    expect(requests(parse(input))).toMatchObject([{ keepAlive }]);
  });

  it('yields continue before the body when the client expects 100-continue', () => {
    const events = parse('POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok');
    expect(events.map((event) => event.type)).toEqual(['continue', 'request']);
  });

  it('does not yield continue for a request without a body or from HTTP/1.0', () => {
    expect(parse('GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n').map((event) => event.type)).toEqual(['request']);
    expect(parse('POST / HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx').map((event) => event.type)).toEqual(['request']);
  });

  it.each([
    ['a request line without a version', 'GET /\r\nHost: a\r\n\r\n', 400],
    ['a request line with extra spaces', 'GET  / HTTP/1.1\r\nHost: a\r\n\r\n', 400],
    ['a method with a bad character', 'G(T / HTTP/1.1\r\nHost: a\r\n\r\n', 400],
    ['a target with a control character', 'GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n', 400],
    ['a target with an 8-bit byte', 'GET /\xe9 HTTP/1.1\r\nHost: a\r\n\r\n', 400],
    ['a version that is not HTTP', 'GET / FTP/1.1\r\nHost: a\r\n\r\n', 400],
    ['HTTP/2.0 in a request line', 'GET / HTTP/2.0\r\nHost: a\r\n\r\n', 505],
    ['a field without a colon', 'GET / HTTP/1.1\r\nHost: a\r\nBroken\r\n\r\n', 400],
    ['a space before the colon', 'GET / HTTP/1.1\r\nHost : a\r\n\r\n', 400],
    ['an obs-fold line', 'GET / HTTP/1.1\r\nHost: a\r\nX: b\r\n  c\r\n\r\n', 400],
    ['a bare LF inside a field', 'GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n', 400],
    ['a control character in a value', 'GET / HTTP/1.1\r\nHost: a\r\nX: b\x00c\r\n\r\n', 400],
    ['HTTP/1.1 without Host', 'GET / HTTP/1.1\r\n\r\n', 400],
    ['two Host fields', 'GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400],
    ['a Content-Length that is not a number', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n', 400],
    ['a negative Content-Length', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n', 400],
    ['two different Content-Lengths', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx', 400],
    ['Content-Length and Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n', 400],
    ['Transfer-Encoding in HTTP/1.0', 'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n', 400],
    ['a transfer coding other than chunked', 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n', 501],
    ['an Expect other than 100-continue', 'POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\nContent-Length: 1\r\n\r\nx', 417],
    ['a malformed chunk size', 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
    ['chunk data without its CRLF', 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n', 400],
    ['a chunk size line over 1 KiB', `POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(1100)}`, 400],
    ['a malformed trailer', 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nno colon\r\n\r\n', 400],
  ])('refuses %s with %d, fed whole or byte by byte', (_name, input, status) => {
    for (const step of [0, 1]) {
      const events = parse(input, step);
      expect(refusal(events)).toMatchObject({ status });
      expect(events.filter((event) => event.type === 'request')).toEqual([]);
    }
  });

  it('refuses a request target over maxUrlBytes with 414, complete or still arriving', () => {
    expect(refusal(parse(`GET /${'a'.repeat(300)} HTTP/1.1\r\nHost: a\r\n\r\n`))).toMatchObject({ status: 414 });
    expect(refusal(parse(`GET /${'a'.repeat(400)}`, 16))).toMatchObject({ status: 414 });
    expect(requests(parse(`GET /${'a'.repeat(255)} HTTP/1.1\r\nHost: a\r\n\r\n`))).toHaveLength(1);
  });

  it('refuses a head over maxHeaderBytes with 431, complete or still arriving', () => {
    expect(refusal(parse(`GET / HTTP/1.1\r\nHost: a\r\nX: ${'v'.repeat(1100)}\r\n\r\n`))).toMatchObject({ status: 431 });
    expect(refusal(parse(`GET / HTTP/1.1\r\nHost: a\r\nX: ${'v'.repeat(1100)}`, 64))).toMatchObject({ status: 431 });
  });

  it('refuses trailers over maxHeaderBytes with 431', () => {
    const input = `POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: ${'v'.repeat(1100)}\r\n\r\n`;
    expect(refusal(parse(input))).toMatchObject({ status: 431 });
    expect(refusal(parse(input, 100))).toMatchObject({ status: 431 });
  });

  it('refuses a declared body over maxBodyBytes with 413 before reading it, and a decoded one while decoding', () => {
    expect(parse('POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 101\r\n\r\n')).toEqual([{ type: 'refused', status: 413, reason: expect.any(String) }]);
    const chunked = `POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n${'x'.repeat(50)}\r\n33\r\n`;
    expect(refusal(parse(chunked))).toMatchObject({ status: 413 });
    expect(requests(parse('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n' + 'x'.repeat(100)))).toHaveLength(1);
  });

  it('yields nothing more after a refusal, whatever follows', () => {
    const parser = new Http1RequestParser(LIMITS);
    parser.push(Buffer.from('BAD\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n'));
    expect(parser.next()).toMatchObject({ type: 'refused', status: 400 });
    parser.push(Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n'));
    expect(parser.next()).toBeNull();
    expect(parser.phase).toBe('refused');
  });
});

describe('Http1RequestParser.phase', () => {
  it('moves idle → head → body → idle as a request arrives', () => {
    const parser = new Http1RequestParser(LIMITS);
    expect(parser.phase).toBe('idle');
    parser.push(Buffer.from('POST / HTTP/1.1\r\nHost: a\r\n'));
    expect(parser.next()).toBeNull();
    expect(parser.phase).toBe('head');
    parser.push(Buffer.from('Content-Length: 2\r\n\r\nx'));
    expect(parser.next()).toBeNull();
    expect(parser.phase).toBe('body');
    parser.push(Buffer.from('y'));
    expect(parser.next()).toMatchObject({ type: 'request' });
    expect(parser.phase).toBe('idle');
    expect(parser.bufferedBytes).toBe(0);
  });

  it('stays idle on a lone CR between requests', () => {
    const parser = new Http1RequestParser(LIMITS);
    parser.push(Buffer.from('\r'));
    expect(parser.next()).toBeNull();
    expect(parser.phase).toBe('idle');
  });
});

describe('Http1RequestParser headers', () => {
  it('drops a __proto__ field instead of setting the prototype of the headers', () => {
    const [event] = parse('GET / HTTP/1.1\r\nHost: a\r\n__proto__: polluted\r\n\r\n');
    expect(event).toMatchObject({ type: 'request' });
    const headers = (event as { request: { headers: Record<string, string> } }).request.headers;
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
    expect(Object.keys(headers)).toEqual(['host']);
  });
});

describe('Http1RequestParser repeated heads', () => {
  const post = (length: number, body: string) => `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${length}\r\n\r\n${body}`;

  it('gives requests with the same head the same frozen headers, and their own bodies', () => {
    const events = parse(post(3, 'one') + post(3, 'two') + post(5, 'three'));
    const got = events.map((event) => (event.type === 'request' ? event.request : null));
    expect(got.map((request) => Buffer.from(request!.body).toString('latin1'))).toEqual(['one', 'two', 'three']);
    expect(got[1]!.headers).toBe(got[0]!.headers);
    expect(Object.isFrozen(got[0]!.headers)).toBe(true);
    expect(got[2]!.headers).not.toBe(got[0]!.headers);
    expect(got[2]!.headers['content-length']).toBe('5');
  });

  it('yields continue again for a repeated head that expects 100-continue', () => {
    const head = 'POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n';
    expect(parse(`${head}x${head}y`).map((event) => event.type)).toEqual(['continue', 'request', 'continue', 'request']);
  });

  it('refuses a repeated head that is refused, each time it comes', () => {
    const tooLong = 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n';
    expect(refusal(parse(post(1, 'x') + tooLong))).toMatchObject({ status: 413 });
    expect(refusal(parse(tooLong))).toMatchObject({ status: 413 });
  });
});
