/**
 * Incremental HTTP/1.1 request framing (RFC 9112) for one connection: bytes in, requests (or one
 * refusal) out. It knows nothing of sockets, so every limit and edge case is a unit test that feeds
 * bytes — whole, split anywhere, or one at a time.
 *
 * What it accepts: a request line `METHOD SP target SP HTTP/1.1|HTTP/1.0` with CRLF line ends,
 * header fields `name: value` (no space before the colon, no obs-fold: both are request-smuggling
 * vectors, RFC 9112 5.1 and 5.2), a body framed by `Content-Length` or by `Transfer-Encoding:
 * chunked` (decoded; trailers read and dropped), none otherwise (RFC 9112 6.3 item 7). Empty lines
 * before a request line are skipped (RFC 9112 2.2).
 *
 * What it refuses, and with which status (the connection is closed after it): a malformed request
 * line, field, chunk or framing 400; a request target over `maxUrlBytes` 414; a head (request line
 * and fields) over `maxHeaderBytes` 431; a body over `maxBodyBytes` 413 (declared or decoded);
 * `Expect` other than `100-continue` 417; a transfer coding other than `chunked` 501; an HTTP version
 * other than 1.0 and 1.1 505. HTTP/1.1 needs exactly one `Host` (RFC 9112 3.2); `Content-Length`
 * with `Transfer-Encoding`, several different lengths, or `Transfer-Encoding` on HTTP/1.0 are 400
 * (RFC 9112 6.1, 6.3: ambiguous framing is refused rather than guessed).
 */

/** Header fields by lower-case name; repeated fields joined with `, ` (RFC 9110 5.3). */
export type Http1Headers = Record<string, string>;

/** A complete request. */
export interface Http1Request {
  /** As sent (methods are case-sensitive, RFC 9110 9.1). */
  readonly method: string;
  /** The request target as sent (origin form `/path?query`, or absolute form). */
  readonly target: string;
  readonly httpVersion: '1.0' | '1.1';
  /** Frozen: requests with the same head share one object. */
  readonly headers: Readonly<Http1Headers>;
  /** The body, de-chunked; empty when there is none. */
  readonly body: Uint8Array;
  /** Whether the connection may carry another request after this one (version and `Connection`). */
  readonly keepAlive: boolean;
}

/** Limits of {@link Http1RequestParser}. */
export interface Http1Limits {
  /** Request line and header fields together, in bytes (431 above). */
  maxHeaderBytes: number;
  /** Request target, in bytes (414 above). */
  maxUrlBytes: number;
  /** Body after de-chunking, in bytes (413 above). */
  maxBodyBytes: number;
}

/** What {@link Http1RequestParser.next} yields. */
export type Http1ParseEvent =
  | { readonly type: 'request'; readonly request: Http1Request }
  /** The head asked for `100-continue` and a body follows: the caller answers `100 Continue` now. */
  | { readonly type: 'continue' }
  /** The request is refused with `status`; the parser takes nothing more. */
  | { readonly type: 'refused'; readonly status: number; readonly reason: string };

/** Where the parser is within the current request (drives the connection's timeouts). */
export type Http1ParsePhase = 'idle' | 'head' | 'body' | 'refused';

const CRLF_CRLF = Buffer.from('\r\n\r\n', 'latin1');
const CRLF = Buffer.from('\r\n', 'latin1');
const EMPTY = new Uint8Array(0);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Visible ASCII only: no spaces, controls or 8-bit bytes in a request target. */
const TARGET = /^[\x21-\x7e]+$/;
/** Field values: any byte but the controls other than HTAB (RFC 9110 5.5). */
const FIELD_VALUE_FORBIDDEN = /[\x00-\x08\x0a-\x1f\x7f]/;
const DIGITS = /^[0-9]{1,15}$/;
const CHUNK_SIZE_LINE = /^([0-9A-Fa-f]{1,8})[ \t]*(?:;[^\x00-\x08\x0a-\x1f\x7f]*)?$/;
/** Longest chunk-size line (size and extensions) read before the request is refused. */
const MAX_CHUNK_LINE_BYTES = 1024;

/** OWS (SP / HTAB) trimmed from both ends; `String.trim` would also take other spaces. */
function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text.charCodeAt(start) === 0x20 || text.charCodeAt(start) === 0x09)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 0x20 || text.charCodeAt(end - 1) === 0x09)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

class Refusal {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {}
}

interface Head {
  method: string;
  target: string;
  httpVersion: '1.0' | '1.1';
  headers: Http1Headers;
  keepAlive: boolean;
}

/** Parse a complete head (without its final CRLF CRLF). Returns a {@link Refusal} on any fault. */
function parseHead(text: string, limits: Http1Limits): Head | Refusal {
  const lines = text.split('\r\n');
  const requestLine = lines[0]!;
  const sp1 = requestLine.indexOf(' ');
  const sp2 = sp1 === -1 ? -1 : requestLine.indexOf(' ', sp1 + 1);
  if (sp1 <= 0 || sp2 === -1 || requestLine.indexOf(' ', sp2 + 1) !== -1) return new Refusal(400, 'malformed request line');
  const method = requestLine.slice(0, sp1);
  const target = requestLine.slice(sp1 + 1, sp2);
  const version = requestLine.slice(sp2 + 1);
  if (!TOKEN.test(method)) return new Refusal(400, 'malformed method');
  if (target.length > limits.maxUrlBytes) return new Refusal(414, `request target longer than ${limits.maxUrlBytes} bytes`);
  if (!TARGET.test(target)) return new Refusal(400, 'malformed request target');
  let httpVersion: '1.0' | '1.1';
  if (version === 'HTTP/1.1') httpVersion = '1.1';
  else if (version === 'HTTP/1.0') httpVersion = '1.0';
  else if (/^HTTP\/[0-9]\.[0-9]$/.test(version)) return new Refusal(505, `HTTP version ${version.slice(5)} not supported`);
  else return new Refusal(400, 'malformed HTTP version');

  // A plain object, not Object.create(null): V8 keeps a null-prototype object in dictionary mode,
  // which made parsing a head ≈ 1.8× slower. `__proto__` is therefore never stored (below).
  const headers: Http1Headers = {};
  let hosts = 0;
  let contentLengths = 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return new Refusal(400, 'malformed header field');
    const rawName = line.slice(0, colon);
    // A space or tab before the colon, or a line starting with one (obs-fold), fails here.
    if (!TOKEN.test(rawName)) return new Refusal(400, 'malformed header field name');
    const value = trimOws(line.slice(colon + 1));
    if (FIELD_VALUE_FORBIDDEN.test(value)) return new Refusal(400, 'control character in a header field value');
    const name = rawName.toLowerCase();
    // Not a field any HTTP handler reads; as a key of a plain object it would set the prototype.
    if (name === '__proto__') continue;
    if (name === 'host') hosts++;
    else if (name === 'content-length') {
      contentLengths++;
      if (!DIGITS.test(value)) return new Refusal(400, 'malformed Content-Length');
      if (contentLengths > 1 && headers[name] !== value) return new Refusal(400, 'several different Content-Length values');
      headers[name] = value;
      continue;
    }
    const previous = headers[name];
    headers[name] = previous === undefined ? value : `${previous}, ${value}`;
  }
  if (httpVersion === '1.1' && hosts !== 1) return new Refusal(400, hosts === 0 ? 'HTTP/1.1 request without Host' : 'several Host fields');
  if (hosts > 1) return new Refusal(400, 'several Host fields');

  let close = false;
  let keepAliveAsked = false;
  const connection = headers['connection'];
  if (connection !== undefined) {
    for (const option of connection.split(',')) {
      const token = trimOws(option).toLowerCase();
      if (token === 'close') close = true;
      else if (token === 'keep-alive') keepAliveAsked = true;
    }
  }
  return { method, target, httpVersion, headers, keepAlive: !close && (httpVersion === '1.1' || keepAliveAsked) };
}

type BodyFraming = { kind: 'none' } | { kind: 'length'; length: number } | { kind: 'chunked' };

/** How the body is framed (RFC 9112 6.3), or the refusal. */
function bodyFraming(head: Head, limits: Http1Limits): BodyFraming | Refusal {
  const transferEncoding = head.headers['transfer-encoding'];
  const contentLength = head.headers['content-length'];
  if (transferEncoding !== undefined) {
    if (head.httpVersion === '1.0') return new Refusal(400, 'Transfer-Encoding in an HTTP/1.0 request');
    if (contentLength !== undefined) return new Refusal(400, 'both Transfer-Encoding and Content-Length');
    const codings = transferEncoding.split(',').map((coding) => trimOws(coding).toLowerCase());
    if (codings.length !== 1 || codings[0] !== 'chunked') {
      // `chunked` alone is decoded here; any other coding is one this server does not implement
      // (RFC 9112 6.1: 501), and a list that is not even tokens is malformed.
      return codings.every((coding) => TOKEN.test(coding)) ? new Refusal(501, `transfer coding ${transferEncoding} not supported`) : new Refusal(400, 'malformed Transfer-Encoding');
    }
    return { kind: 'chunked' };
  }
  if (contentLength !== undefined) {
    const length = Number(contentLength);
    if (length > limits.maxBodyBytes) return new Refusal(413, `body of ${length} bytes, more than ${limits.maxBodyBytes}`);
    return length === 0 ? { kind: 'none' } : { kind: 'length', length };
  }
  return { kind: 'none' };
}

type ChunkState = 'size' | 'data' | 'data-end' | 'trailers';

/**
 * One connection's request parser: {@link push} bytes as they arrive, then call {@link next} until
 * it returns `null` (more bytes needed). After a `refused` event it yields nothing more.
 */
export class Http1RequestParser {
  private buffer: Buffer = Buffer.alloc(0);
  /** Where unread bytes start in {@link buffer}. */
  private offset = 0;
  /** Where the search for the end of the head resumes (bytes already searched are not searched again). */
  private scanFrom = 0;
  private state: Http1ParsePhase = 'idle';
  private head: Head | null = null;
  private framing: BodyFraming = { kind: 'none' };
  private bodyParts: Uint8Array[] = [];
  private bodyBytes = 0;
  private remaining = 0;
  private chunkState: ChunkState = 'size';
  private trailerBytes = 0;
  private continuePending = false;
  /**
   * The last head parsed on this connection, as text, with its parse and framing: a keep-alive
   * client sends the same head again and again (same target, Host, Content-Type and, for requests
   * of one size, Content-Length), and a head that equals the last one is not parsed again — the
   * parse is a function of the text alone. Heads that ask for `100-continue` or are chunked are not
   * kept (their handling has state).
   */
  private lastHeadText: string | null = null;
  private lastHead: Head | null = null;
  private lastFraming: BodyFraming | null = null;

  constructor(private readonly limits: Http1Limits) {}

  /** Where the current request stands. `idle`: between requests (no byte of the next one yet). */
  get phase(): Http1ParsePhase {
    return this.state;
  }

  /** Bytes received and not yet consumed by a complete request. */
  get bufferedBytes(): number {
    return this.buffer.length - this.offset;
  }

  /** Add received bytes. */
  push(chunk: Buffer): void {
    if (this.state === 'refused') return;
    if (this.offset === this.buffer.length) {
      this.buffer = chunk;
      this.scanFrom = 0;
    } else {
      // Only a partial head or a partial chunk line is ever kept: both are bounded by the limits.
      this.buffer = Buffer.concat([this.buffer.subarray(this.offset), chunk]);
      this.scanFrom -= this.offset;
    }
    this.offset = 0;
    if (this.state === 'idle' && this.buffer.length > 0) this.skipEmptyLines();
  }

  /** The next complete event, or `null` when more bytes are needed. */
  next(): Http1ParseEvent | null {
    if (this.state === 'refused') return null;
    if (this.state === 'idle' || this.state === 'head') {
      const event = this.readHead();
      if (event !== null) return event;
      if ((this.state as Http1ParsePhase) !== 'body') return null;
    }
    if (this.continuePending) {
      this.continuePending = false;
      return { type: 'continue' };
    }
    return this.readBody();
  }

  private refuse(status: number, reason: string): Http1ParseEvent {
    this.state = 'refused';
    this.buffer = Buffer.alloc(0);
    this.offset = 0;
    this.bodyParts = [];
    return { type: 'refused', status, reason };
  }

  /** RFC 9112 2.2: a server SHOULD ignore at least one empty line received before the request line. */
  private skipEmptyLines(): void {
    while (this.offset + 1 < this.buffer.length && this.buffer[this.offset] === 0x0d && this.buffer[this.offset + 1] === 0x0a) this.offset += 2;
    // A lone CR at the end may be the first half of an empty line: wait for the next byte.
    const lone = this.offset === this.buffer.length - 1 && this.buffer[this.offset] === 0x0d;
    if (this.offset < this.buffer.length && !lone) this.state = 'head';
    if (this.scanFrom < this.offset) this.scanFrom = this.offset;
  }

  private readHead(): Http1ParseEvent | null {
    if (this.state === 'idle') {
      this.skipEmptyLines();
      if (this.state === 'idle') return null;
    }
    const end = this.buffer.indexOf(CRLF_CRLF, Math.max(this.scanFrom, this.offset));
    if (end === -1) {
      const buffered = this.buffer.length - this.offset;
      const lineEnd = this.buffer.indexOf(CRLF, this.offset);
      // A request line that has not ended within the URL limit (plus room for the method and the
      // version) is a URL too long, whatever the header limit.
      if ((lineEnd === -1 ? buffered : lineEnd - this.offset) > this.limits.maxUrlBytes + 64) return this.refuse(414, `request target longer than ${this.limits.maxUrlBytes} bytes`);
      if (buffered > this.limits.maxHeaderBytes) return this.refuse(431, `request head longer than ${this.limits.maxHeaderBytes} bytes`);
      this.scanFrom = Math.max(this.offset, this.buffer.length - 3);
      return null;
    }
    if (end - this.offset > this.limits.maxHeaderBytes) return this.refuse(431, `request head longer than ${this.limits.maxHeaderBytes} bytes`);
    const text = this.buffer.toString('latin1', this.offset, end);
    this.offset = end + 4;
    this.scanFrom = this.offset;
    let head: Head;
    let framing: BodyFraming;
    let expect: string | undefined;
    if (text === this.lastHeadText) {
      head = this.lastHead!;
      framing = this.lastFraming!;
    } else {
      const parsed = parseHead(text, this.limits);
      if (parsed instanceof Refusal) return this.refuse(parsed.status, parsed.reason);
      head = parsed;
      Object.freeze(head.headers);
      expect = head.headers['expect'];
      if (expect !== undefined && expect.toLowerCase() !== '100-continue') return this.refuse(417, `Expect: ${expect} not supported`);
      const checked = bodyFraming(head, this.limits);
      if (checked instanceof Refusal) return this.refuse(checked.status, checked.reason);
      framing = checked;
      if (expect === undefined && framing.kind !== 'chunked') {
        this.lastHeadText = text;
        this.lastHead = head;
        this.lastFraming = framing;
      }
    }
    this.head = head;
    this.framing = framing;
    this.bodyParts = [];
    this.bodyBytes = 0;
    if (framing.kind === 'none') return this.complete(EMPTY);
    this.state = 'body';
    this.remaining = framing.kind === 'length' ? framing.length : 0;
    this.chunkState = 'size';
    this.trailerBytes = 0;
    // RFC 9110 10.1.1: 100-continue is only for HTTP/1.1 clients, and only when a body follows.
    this.continuePending = expect !== undefined && head.httpVersion === '1.1';
    return null;
  }

  private complete(body: Uint8Array): Http1ParseEvent {
    const head = this.head!;
    this.head = null;
    this.bodyParts = [];
    this.state = 'idle';
    if (this.offset < this.buffer.length) this.skipEmptyLines();
    return { type: 'request', request: { method: head.method, target: head.target, httpVersion: head.httpVersion, headers: head.headers, body, keepAlive: head.keepAlive } };
  }

  private takeBody(): Uint8Array {
    const parts = this.bodyParts;
    return parts.length === 1 ? parts[0]! : parts.length === 0 ? EMPTY : Buffer.concat(parts, this.bodyBytes);
  }

  /** Take up to `this.remaining` body bytes from the buffer. */
  private takeData(): void {
    const available = Math.min(this.remaining, this.buffer.length - this.offset);
    if (available > 0) {
      this.bodyParts.push(this.buffer.subarray(this.offset, this.offset + available));
      this.offset += available;
      this.remaining -= available;
      this.bodyBytes += available;
    }
  }

  private readBody(): Http1ParseEvent | null {
    if (this.framing.kind === 'length') {
      this.takeData();
      return this.remaining === 0 ? this.complete(this.takeBody()) : null;
    }
    for (;;) {
      if (this.chunkState === 'data') {
        this.takeData();
        if (this.remaining > 0) return null;
        this.chunkState = 'data-end';
      }
      const lineEnd = this.buffer.indexOf(CRLF, this.offset);
      if (this.chunkState === 'data-end') {
        if (this.buffer.length - this.offset < 2) return null;
        if (lineEnd !== this.offset) return this.refuse(400, 'chunk data not followed by CRLF');
        this.offset += 2;
        this.chunkState = 'size';
        continue;
      }
      if (lineEnd === -1) {
        const buffered = this.buffer.length - this.offset;
        if (this.chunkState === 'size' && buffered > MAX_CHUNK_LINE_BYTES) return this.refuse(400, 'chunk size line too long');
        if (this.chunkState === 'trailers' && this.trailerBytes + buffered > this.limits.maxHeaderBytes) return this.refuse(431, `trailer fields longer than ${this.limits.maxHeaderBytes} bytes`);
        return null;
      }
      const line = this.buffer.toString('latin1', this.offset, lineEnd);
      this.offset = lineEnd + 2;
      if (this.chunkState === 'trailers') {
        if (line === '') return this.complete(this.takeBody());
        this.trailerBytes += line.length + 2;
        if (this.trailerBytes > this.limits.maxHeaderBytes) return this.refuse(431, `trailer fields longer than ${this.limits.maxHeaderBytes} bytes`);
        const colon = line.indexOf(':');
        if (colon <= 0 || !TOKEN.test(line.slice(0, colon)) || FIELD_VALUE_FORBIDDEN.test(line.slice(colon + 1))) return this.refuse(400, 'malformed trailer field');
        continue;
      }
      if (line.length > MAX_CHUNK_LINE_BYTES) return this.refuse(400, 'chunk size line too long');
      const match = CHUNK_SIZE_LINE.exec(line);
      if (match === null) return this.refuse(400, 'malformed chunk size');
      const size = Number.parseInt(match[1]!, 16);
      if (size === 0) {
        this.chunkState = 'trailers';
        continue;
      }
      if (this.bodyBytes + size > this.limits.maxBodyBytes) return this.refuse(413, `body longer than ${this.limits.maxBodyBytes} bytes`);
      this.remaining = size;
      this.chunkState = 'data';
    }
  }
}
