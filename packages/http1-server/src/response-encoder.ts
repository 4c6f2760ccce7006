/**
 * An HTTP/1.1 response as bytes: status line, `Date`, the handler's fields, the framing fields this
 * server owns (`Content-Length`, `Connection`) and the body, in one buffer so that a response is one
 * write (and several pipelined ones one write too).
 */

/**
 * A handler's answer. A handler that answers many requests with the same object can return it
 * frozen, with frozen headers (`Object.freeze`): the server then encodes it once per second of its
 * `Date` and writes the same bytes to every keep-alive HTTP/1.1 request that gets it. The body's
 * bytes must then not change either (a typed array cannot be frozen).
 */
export interface Http1Response {
  status: number;
  /**
   * Header fields as written (names in the case wanted on the wire). `Content-Length`,
   * `Connection`, `Transfer-Encoding`, `Keep-Alive` and `Date` are the server's and ignored here.
   */
  headers: Readonly<Record<string, string>>;
  /** The body; not written for HEAD, 1xx, 204 and 304 (RFC 9110 6.4.1). */
  body: Uint8Array;
}

/** How the response goes out on its connection. */
export interface ResponseFraming {
  /** The request was HEAD: framing as for GET, no body. */
  head: boolean;
  /** The connection closes after this response (`Connection: close`). */
  close: boolean;
  /** An HTTP/1.0 client that asked for keep-alive and gets it (`Connection: keep-alive`). */
  keepAliveForHttp10: boolean;
}

const REASONS: Readonly<Record<number, string>> = {
  100: 'Continue',
  200: 'OK',
  201: 'Created',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  304: 'Not Modified',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  411: 'Length Required',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'HTTP Version Not Supported',
};

/** `HTTP/1.1 100 Continue` and its empty line. */
export const CONTINUE_BYTES = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');

/** Names the framing owns, by length first (a cheap filter before lower-casing). */
const OWNED = new Set(['content-length', 'connection', 'transfer-encoding', 'keep-alive', 'date']);
const OWNED_LENGTHS = new Set([...OWNED].map((name) => name.length));
/** True when a field name or value could split the head (header injection). */
function hasLineBreak(text: string): boolean {
  // Two indexOf calls are cheaper than a regex run on strings this short, twice per field per answer.
  return text.indexOf('\n') !== -1 || text.indexOf('\r') !== -1;
}

/** Thrown for a handler answer that cannot be written safely (a bug in the handler). */
export class InvalidResponseError extends Error {
  override readonly name = 'InvalidResponseError';
}

let dateSecond = -1;
let dateLine = '';

/** `Date: <IMF-fixdate>\r\n` for `nowMs`, formatted once per second. */
function dateField(nowMs: number): string {
  const second = Math.floor(nowMs / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateLine = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
  }
  return dateLine;
}

/** True for statuses that never carry a body or a Content-Length (RFC 9110 6.4.1, 8.6). */
function bodiless(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** The encoding of a frozen response for plain keep-alive framing, and the second of its `Date`. */
interface FrozenEncoding {
  second: number;
  bytes: Buffer;
}

/**
 * Encodings of frozen responses, by the response: collected with it. A shared answer (an OCSP
 * responder answers every request for one certificate with one object) is then a lookup rather
 * than a head string, its checks and a buffer per answer (docs/performance.md, OCSP section).
 */
const frozenEncodings = new WeakMap<Http1Response, FrozenEncoding>();

/**
 * Encode a response for its connection. A frozen response with frozen headers (see
 * {@link Http1Response}) is encoded once per second for plain keep-alive framing (not HEAD, not
 * closing, not HTTP/1.0), and the same buffer returned: it must not be written to.
 *
 * @throws InvalidResponseError for a status outside 200–599, or a field that contains CR or LF.
 */
export function encodeResponse(response: Http1Response, framing: ResponseFraming, nowMs: number): Buffer {
  if (framing.head || framing.close || framing.keepAliveForHttp10) return encode(response, framing, nowMs);
  // Only frozen responses are ever kept, and frozen stays frozen: a kept one needs no check (a
  // call into the runtime that cost more than the lookup).
  const cached = frozenEncodings.get(response);
  if (cached === undefined && !(Object.isFrozen(response) && Object.isFrozen(response.headers))) return encode(response, framing, nowMs);
  const second = Math.floor(nowMs / 1000);
  if (cached !== undefined && cached.second === second) return cached.bytes;
  const bytes = encode(response, framing, nowMs);
  if (cached === undefined) frozenEncodings.set(response, { second, bytes });
  else {
    cached.second = second;
    cached.bytes = bytes;
  }
  return bytes;
}

function encode(response: Http1Response, framing: ResponseFraming, nowMs: number): Buffer {
  const status = response.status;
  if (!Number.isInteger(status) || status < 200 || status > 599) throw new InvalidResponseError(`response status must be 200–599, got ${status}`);
  let head = `HTTP/1.1 ${status} ${REASONS[status] ?? 'Unknown'}\r\n${dateField(nowMs)}`;
  const headers = response.headers;
  for (const name in headers) {
    if (OWNED_LENGTHS.has(name.length) && OWNED.has(name.toLowerCase())) continue;
    const value = headers[name]!;
    if (hasLineBreak(name) || hasLineBreak(value)) throw new InvalidResponseError(`response field ${JSON.stringify(name)} contains a line break`);
    head += `${name}: ${value}\r\n`;
  }
  const noBody = bodiless(status);
  const body = response.body;
  if (!noBody) head += `Content-Length: ${body.byteLength}\r\n`;
  if (framing.close) head += 'Connection: close\r\n';
  else if (framing.keepAliveForHttp10) head += 'Connection: keep-alive\r\n';
  head += '\r\n';
  const bodyBytes = noBody || framing.head ? 0 : body.byteLength;
  // Fields are written as latin1: one byte per character, so the head's length is its byte length.
  const out = Buffer.allocUnsafe(head.length + bodyBytes);
  out.write(head, 0, 'latin1');
  if (bodyBytes > 0) out.set(body, head.length);
  return out;
}

/** A bodiless refusal from the framing itself (400, 408, 413, …), closing the connection. */
export function encodeRefusal(status: number, nowMs: number): Buffer {
  return encodeResponse({ status, headers: {}, body: new Uint8Array(0) }, { head: false, close: true, keepAliveForHttp10: false }, nowMs);
}
