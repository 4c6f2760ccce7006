import { describe, expect, it } from 'vitest';

import { encodeResponse } from './response-encoder.js';
import type { Http1Response, ResponseFraming } from './response-encoder.js';

const KEEP_ALIVE: ResponseFraming = { head: false, close: false, keepAliveForHttp10: false };
const AT = Date.UTC(2026, 10, 26, 8, 0, 0, 100);

function frozen(): Http1Response {
  return Object.freeze({ status: 200, headers: Object.freeze({ 'Content-Type': 'text/plain', ETag: '"e"' }), body: Buffer.from('hello') });
}

describe('encodeResponse', () => {
  it('writes the status line, Date, the fields, Content-Length and the body', () => {
    const text = encodeResponse(frozen(), KEEP_ALIVE, AT).toString('latin1');
    expect(text).toBe('HTTP/1.1 200 OK\r\nDate: Thu, 26 Nov 2026 08:00:00 GMT\r\nContent-Type: text/plain\r\nETag: "e"\r\nContent-Length: 5\r\n\r\nhello');
  });

  it('returns the same bytes for a frozen response within one second, and new ones with the next Date', () => {
    const response = frozen();
    const first = encodeResponse(response, KEEP_ALIVE, AT);
    expect(encodeResponse(response, KEEP_ALIVE, AT + 899)).toBe(first);
    const next = encodeResponse(response, KEEP_ALIVE, AT + 900);
    expect(next).not.toBe(first);
    expect(next.toString('latin1')).toContain('Date: Thu, 26 Nov 2026 08:00:01 GMT\r\n');
    expect(encodeResponse(response, KEEP_ALIVE, AT + 950)).toBe(next);
  });

  it('encodes a response that is not frozen, or whose headers are not, every time', () => {
    const plain: Http1Response = { status: 200, headers: { ETag: '"a"' }, body: Buffer.from('x') };
    const first = encodeResponse(plain, KEEP_ALIVE, AT);
    expect(encodeResponse(plain, KEEP_ALIVE, AT)).not.toBe(first);
    (plain.headers as Record<string, string>)['ETag'] = '"b"';
    expect(encodeResponse(plain, KEEP_ALIVE, AT).toString('latin1')).toContain('ETag: "b"\r\n');
    const openHeaders = Object.freeze({ status: 200, headers: { ETag: '"a"' }, body: Buffer.from('x') });
    expect(encodeResponse(openHeaders, KEEP_ALIVE, AT)).not.toBe(encodeResponse(openHeaders, KEEP_ALIVE, AT));
  });

  it('encodes a frozen response afresh for HEAD, a closing connection and HTTP/1.0 keep-alive', () => {
    const response = frozen();
    const cached = encodeResponse(response, KEEP_ALIVE, AT);
    const head = encodeResponse(response, { ...KEEP_ALIVE, head: true }, AT).toString('latin1');
    expect(head.endsWith('Content-Length: 5\r\n\r\n')).toBe(true);
    expect(encodeResponse(response, { ...KEEP_ALIVE, close: true }, AT).toString('latin1')).toContain('Connection: close\r\n');
    expect(encodeResponse(response, { ...KEEP_ALIVE, keepAliveForHttp10: true }, AT).toString('latin1')).toContain('Connection: keep-alive\r\n');
    expect(encodeResponse(response, KEEP_ALIVE, AT)).toBe(cached);
  });
});
