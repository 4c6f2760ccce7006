/**
 * The OCSP responder (RFC 6960, RFC 5019 HTTP profile), independent of any HTTP framework:
 * `(method, path, headers, body) → (status, headers, body)`. `certsmith ocspserve` and the responder
 * mounted in `serve` put it behind node:http or Koa; nothing here knows either.
 *
 * It serves stored, pre-signed DER (never re-encoded), with CFSSL's behaviour (lifecycle spec §5.5):
 * GET and POST only (405, empty body, otherwise); malformedRequest (400), unauthorized (200, unknown
 * serial) and internalError (500, source failure) bodies; `Last-Modified`, `Expires`, `Cache-Control:
 * max-age=N, public, no-transform, must-revalidate`, `ETag` = quoted upper-hex SHA-256; matching
 * `If-None-Match` → 304. Deliberate differences, each where CFSSL is weak (§6 item 10):
 * - HTTP dates end in `GMT` (CFSSL: `UTC`);
 * - `If-None-Match` compares weakly and understands lists and `*` (RFC 9110 13.1.2);
 * - a mount path other than `/` works for GET, and `//` in the base64 is never redirected;
 * - URL-safe and unpadded base64 are accepted;
 * - signed requests and requests naming their requestor are answered (CFSSL: malformedRequest);
 * - SHA-256/384/512 CertIDs are answered: the issuer is found by its key hash under that algorithm;
 *   when the stored response uses another CertID hash and the responder can sign for that CA, it
 *   answers with a response re-signed for the requested hash (cached), else with the stored one;
 * - nonces (RFC 8954) are echoed when `nonces: 'sign'` and the responder can sign for the CA (a fresh
 *   signature per request, never cached; nonces over 32 octets are malformedRequest); by default
 *   they are ignored as CFSSL does;
 * - 405 carries `Allow: GET, POST`.
 */
import type { CertId } from './cert-id.js';
import { hex } from './cert-id.js';
import { buildOcspResponse, ocspErrorResponse } from './ocsp-response-builder.js';
import { decodeOcspGetPath } from './ocsp-get-path.js';
import type { OcspIssuer } from './ocsp-issuer.js';
import { OcspIssuerDirectory } from './ocsp-issuer.js';
import type { OcspRequest } from './ocsp-request.js';
import { parseOcspRequest } from './ocsp-request.js';
import type { PreparedOcspResponse } from './prepared-ocsp-response.js';
import { isPreparedOcspResponse, prepareOcspResponse } from './prepared-ocsp-response.js';
import { decimalSerial } from './serial-number.js';

/** An HTTP request as the responder sees it. */
export interface OcspHttpRequest {
  method: string;
  /** Request target path (a query string is ignored). */
  path: string;
  /** Request headers; names in any case. */
  headers?: Readonly<Record<string, string | readonly string[] | undefined>>;
  /** POST body (the DER request). */
  body?: Uint8Array;
}

/**
 * The responder's answer. Frozen, with frozen headers, and shared: the same object answers every
 * request for one stored response within one second (its `Cache-Control: max-age` changes by the
 * second), so a transport may keep its encoding (`@certsmith/http1-server` does). Copy it to change it.
 */
export interface OcspHttpResponse {
  readonly status: number;
  /** Header names in canonical case. */
  readonly headers: Readonly<Record<string, string>>;
  /** Not to be written to: it is the stored response itself. */
  readonly body: Uint8Array;
}

/** What a response source is asked for. */
export interface OcspLookup {
  /** The request's CertID (first entry). */
  certId: CertId;
  /** Decimal serial: CFSSL's `serial_number` key. */
  serial: string;
  /**
   * The CA's key identifier as lower-case hex — CFSSL's `authority_key_identifier` key: the known
   * issuer's SKI, else (SHA-1 CertIDs only) hex(issuerKeyHash) as CFSSL's lookup uses; `null` when
   * neither applies (an unknown CA with a SHA-2 CertID).
   */
  authorityKeyId: string | null;
  /** The issuer the CertID names, when the responder knows it. */
  issuer: OcspIssuer | null;
}

/** Where stored responses come from (the store, a `-responses` file, a cache). */
export interface OcspResponseSource {
  /** The stored response for `lookup`, or `null` (answered `unauthorized`). Throwing answers internalError. */
  find(lookup: OcspLookup): PreparedOcspResponse | Uint8Array | null | Promise<PreparedOcspResponse | Uint8Array | null>;
  /**
   * `find` answers a request always alike (a responses file, read once): the responder then keeps
   * the answer with the requests it has seen and does not ask again. A source whose answers change
   * (the store's) leaves it unset and is asked for every request.
   */
  readonly fixed?: boolean;
}

/** Options of {@link OcspResponder}. */
export interface OcspResponderOptions {
  source: OcspResponseSource;
  /** CAs answered for (enables SHA-2 CertIDs, store keys by SKI, and — with identities — re-signing and nonces). */
  issuers?: Iterable<OcspIssuer>;
  /** Mount path (`/` by default, as CFSSL's `-path`). */
  path?: string;
  /** `ignore` (default, CFSSL) or `sign`: answer requests with a nonce with a fresh response echoing it. */
  nonces?: 'ignore' | 'sign';
  /** Clock in milliseconds (tests). */
  now?: () => number;
  /** Entries of the re-signed-for-another-hash cache; default 10,000. */
  resignedCacheSize?: number;
  /** Requests kept parsed, per method (POST by DER, GET by path); default 10,000 each. */
  seenRequestsSize?: number;
  /** Called with source failures and unparsable stored responses (for the log); never with secrets. */
  onError?: (error: unknown) => void;
}

const OCSP_CONTENT_TYPE = 'application/ocsp-response';
const NO_CACHE = 'max-age=0, no-cache';
const EMPTY = new Uint8Array(0);

function frozenAnswer(status: number, headers: Record<string, string>, body: Uint8Array): OcspHttpResponse {
  return Object.freeze({ status, headers: Object.freeze(headers), body });
}

function errorAnswer(status: number, body: Uint8Array): OcspHttpResponse {
  return frozenAnswer(status, { 'Content-Type': OCSP_CONTENT_TYPE, 'Cache-Control': NO_CACHE }, body);
}

const MALFORMED_ANSWER = errorAnswer(400, ocspErrorResponse('malformedRequest'));
const INTERNAL_ERROR = ocspErrorResponse('internalError');
const INTERNAL_ERROR_ANSWER = errorAnswer(500, INTERNAL_ERROR);
/** CFSSL answers a stored response that does not parse with internalError, status 200. */
const UNPARSABLE_ANSWER = errorAnswer(200, INTERNAL_ERROR);
const UNAUTHORIZED_ANSWER = errorAnswer(200, ocspErrorResponse('unauthorized'));
const METHOD_NOT_ALLOWED_ANSWER = frozenAnswer(405, { Allow: 'GET, POST', 'Cache-Control': NO_CACHE }, EMPTY);

/** The success answer of one stored response, for as long as its `max-age` stays the same. */
interface CachedAnswer {
  maxAge: number;
  answer: OcspHttpResponse;
}

/** A request header by its lower-case name (node:http and Koa keep them so), else in any case. */
function header(headers: OcspHttpRequest['headers'], lowerCaseName: string): string | undefined {
  if (!headers) return undefined;
  let value = headers[lowerCaseName];
  if (value === undefined) {
    // Other callers may keep the sender's case; a loop rather than Object.entries: no array per request.
    for (const key in headers) {
      if (key.length === lowerCaseName.length && key.toLowerCase() === lowerCaseName) {
        value = headers[key];
        break;
      }
    }
  }
  return Array.isArray(value) ? value.join(', ') : (value as string | undefined);
}

/** RFC 9110 13.1.2: weak comparison against each entity tag of the list, `*` matches any. */
export function ifNoneMatchMatches(ifNoneMatch: string, etag: string): boolean {
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const candidate of ifNoneMatch.split(',')) {
    const tag = candidate.trim();
    if (tag === '*') return true;
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === opaque) return true;
  }
  return false;
}

/** A nonce extnValue holding an OCTET STRING of 1–32 octets (RFC 8954); older clients' raw values up to 32 octets too. */
function isAcceptableNonce(extnValue: Uint8Array): boolean {
  if (extnValue.length >= 3 && extnValue[0] === 0x04 && extnValue[1] === extnValue.length - 2) return extnValue.length - 2 >= 1 && extnValue.length - 2 <= 32;
  return extnValue.length >= 1 && extnValue.length <= 32;
}

/**
 * What a source is asked for one request. A class, not an object literal with getters: the getters
 * of a literal are closures made per request; these are the prototype's. `serial` and
 * `authorityKeyId` are computed only when a source asks (the store's does, a responses file's does
 * not): a BigInt conversion and hex per request add up.
 */
class RequestLookup implements OcspLookup {
  private decimal: string | null = null;

  constructor(
    readonly certId: CertId,
    readonly issuer: OcspIssuer | null,
  ) {}

  get serial(): string {
    return (this.decimal ??= decimalSerial(this.certId.serialNumber));
  }

  get authorityKeyId(): string | null {
    return this.issuer !== null ? this.issuer.keyIdentifier : this.certId.hashAlgorithm === 'SHA1' ? hex(this.certId.issuerKeyHash) : null;
  }
}

/**
 * Largest request kept parsed: a request for one certificate is ≈ 80–130 bytes of DER (≈ 200
 * characters of URL-encoded base64 in a GET path). Bigger ones (several CertIDs, extensions) are
 * parsed each time, so that the kept requests stay small (≤ 10,000 × ≈ 1 KB per method) whatever
 * clients send — a POST body may be 64 KiB.
 */
const MAX_KEPT_REQUEST_BYTES = 512;
const MAX_KEPT_GET_PATH_CHARS = 1024;

/** A request parsed once, kept by its bytes. */
interface KnownRequest {
  readonly ocspRequest: OcspRequest;
  readonly certId: CertId;
  readonly issuer: OcspIssuer | null;
  readonly lookup: RequestLookup;
  /** The source's synchronous answer, kept when the source is {@link OcspResponseSource.fixed}. */
  found: PreparedOcspResponse | Uint8Array | null | undefined;
}

/** The bytes as latin1 text (one character per byte): a map key for them. */
function latin1(bytes: Uint8Array): string {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString('latin1');
}

/** A transport-independent OCSP responder. */
export class OcspResponder {
  private readonly source: OcspResponseSource;
  private readonly directory: OcspIssuerDirectory;
  private readonly path: string;
  private readonly signNonces: boolean;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private readonly prepared = new WeakMap<Uint8Array, PreparedOcspResponse>();
  private readonly resigned = new Map<string, PreparedOcspResponse>();
  private readonly resignedCacheSize: number;
  /**
   * Each stored response's answer, kept by the response object the source returned: a source that
   * reloads (the store's, every 5 s) returns new objects, which get answers of their own, and the
   * old ones are collected with their answers.
   */
  private readonly answers = new WeakMap<PreparedOcspResponse, CachedAnswer>();
  /**
   * Requests already parsed, by their DER (POST, as latin1 text) or their path (GET): the parse,
   * the issuer and the store key of a request depend on its bytes alone, and clients ask for the
   * same certificates again and again, so a repeat skips the decoding and the DER reading. The
   * source is still asked every time, unless it is `fixed` (its answer cannot change). Bounded:
   * emptied when full.
   */
  private readonly seenPosts = new Map<string, KnownRequest>();
  private readonly seenGets = new Map<string, KnownRequest>();
  private readonly seenRequestsSize: number;

  constructor(options: OcspResponderOptions) {
    this.source = options.source;
    this.directory = new OcspIssuerDirectory(options.issuers ?? []);
    this.path = options.path ?? '/';
    this.signNonces = options.nonces === 'sign';
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => {});
    this.resignedCacheSize = options.resignedCacheSize ?? 10_000;
    this.seenRequestsSize = options.seenRequestsSize ?? 10_000;
  }

  /** Answer one HTTP request. Never rejects. */
  async handle(request: OcspHttpRequest): Promise<OcspHttpResponse> {
    return this.respond(request);
  }

  /**
   * {@link handle}, without a promise when none is needed: the answer itself when the source answers
   * synchronously (a responses file) and nothing has to be signed, else a promise that never
   * rejects. For a transport that takes either (`certsmith ocspserve`): an async call and its
   * microtask per answer are a measurable share of an answer this small.
   */
  respond(request: OcspHttpRequest): OcspHttpResponse | Promise<OcspHttpResponse> {
    let known: KnownRequest | undefined;
    let key: string | null;
    let seen: Map<string, KnownRequest>;
    let der: Uint8Array | null;
    if (request.method === 'POST') {
      der = request.body ?? EMPTY;
      key = der.byteLength <= MAX_KEPT_REQUEST_BYTES ? latin1(der) : null;
      seen = this.seenPosts;
    } else if (request.method === 'GET') {
      der = null;
      key = request.path.length <= MAX_KEPT_GET_PATH_CHARS ? request.path : null;
      seen = this.seenGets;
    } else return METHOD_NOT_ALLOWED_ANSWER;
    if (key !== null) known = seen.get(key);
    if (known === undefined) {
      // GET: decoded only now, on a miss. POST: parsed from a copy when kept, so that a kept CertID
      // does not hold on to the whole socket chunk the body was cut from.
      der = der === null ? decodeOcspGetPath(request.path, this.path) : Uint8Array.from(der);
      if (der === null) return MALFORMED_ANSWER;
      let ocspRequest: OcspRequest;
      try {
        ocspRequest = parseOcspRequest(der);
      } catch {
        return MALFORMED_ANSWER;
      }
      // RFC 8954 2.1: a nonce is 1–32 octets; a responder that echoes nonces rejects longer ones
      // (otherwise any client could make it sign and return arbitrary data).
      if (this.signNonces && ocspRequest.nonce !== null && !isAcceptableNonce(ocspRequest.nonce)) return MALFORMED_ANSWER;
      const certId = ocspRequest.certIds[0]!;
      const issuer = this.directory.find(certId);
      known = { ocspRequest, certId, issuer, lookup: new RequestLookup(certId, issuer), found: undefined };
      // A request with a nonce is never asked again: keeping it would only push others out.
      if (key !== null && ocspRequest.nonce === null) {
        if (seen.size >= this.seenRequestsSize) seen.clear();
        seen.set(key, known);
      }
    }
    const { ocspRequest, certId, issuer, lookup } = known;

    let found: ReturnType<OcspResponseSource['find']> | undefined = known.found;
    if (found === undefined) {
      try {
        found = this.source.find(lookup);
      } catch (error) {
        this.onError(error);
        return INTERNAL_ERROR_ANSWER;
      }
      if (this.source.fixed === true && !(found instanceof Promise)) known.found = found;
    }
    if (found instanceof Promise) {
      return found.then(
        (result) => this.respondWith(result, request, ocspRequest, issuer, certId),
        (error: unknown) => {
          this.onError(error);
          return INTERNAL_ERROR_ANSWER;
        },
      );
    }
    return this.respondWith(found, request, ocspRequest, issuer, certId);
  }

  /** The answer once the source has answered. */
  private respondWith(
    found: PreparedOcspResponse | Uint8Array | null,
    request: OcspHttpRequest,
    ocspRequest: OcspRequest,
    issuer: OcspIssuer | null,
    certId: CertId,
  ): OcspHttpResponse | Promise<OcspHttpResponse> {
    if (found === null) return UNAUTHORIZED_ANSWER;
    const stored = this.prepare(found);
    if (stored === null) return UNPARSABLE_ANSWER;
    const ifNoneMatch = header(request.headers, 'if-none-match');
    const nonce = this.signNonces && issuer?.identity ? ocspRequest.nonce : null;
    const otherHash = stored.single.certId.hashAlgorithm !== certId.hashAlgorithm && issuer?.identity;
    if (nonce === null && !otherHash) return this.answer(stored, ifNoneMatch);
    return this.signedAnswer(stored, issuer!, certId, nonce, ifNoneMatch);
  }

  /** An answer that needs a signature first: a nonce echoed, or the stored status for another CertID hash. */
  private async signedAnswer(stored: PreparedOcspResponse, issuer: OcspIssuer, certId: CertId, nonce: Uint8Array | null, ifNoneMatch: string | undefined): Promise<OcspHttpResponse> {
    try {
      if (nonce !== null) {
        const fresh = await this.resign(stored, issuer, certId, nonce);
        return frozenAnswer(200, { 'Content-Type': OCSP_CONTENT_TYPE, 'Cache-Control': 'no-store' }, fresh.der);
      }
      return this.answer(await this.resignedFor(stored, issuer, certId), ifNoneMatch);
    } catch (error) {
      this.onError(error);
      return INTERNAL_ERROR_ANSWER;
    }
  }

  /**
   * Success headers (CFSSL's set), or 304 when If-None-Match matches. The 200 answer is built once
   * per stored response and second: only `max-age` moves with the clock (nextUpdate − now).
   */
  private answer(response: PreparedOcspResponse, ifNoneMatch: string | undefined): OcspHttpResponse {
    const maxAge = response.nextUpdateMs === null ? 0 : Math.max(0, Math.floor((response.nextUpdateMs - this.now()) / 1000));
    if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, response.etag)) return frozenAnswer(304, this.cachingHeaders(response, maxAge), EMPTY);
    const cached = this.answers.get(response);
    if (cached !== undefined && cached.maxAge === maxAge) return cached.answer;
    const headers = this.cachingHeaders(response, maxAge);
    headers['Content-Type'] = OCSP_CONTENT_TYPE;
    const answer = frozenAnswer(200, headers, response.der);
    if (cached === undefined) this.answers.set(response, { maxAge, answer });
    else {
      cached.maxAge = maxAge;
      cached.answer = answer;
    }
    return answer;
  }

  /** `Last-Modified`, `Cache-Control`, `ETag` and `Expires` of a stored response (200 and 304 alike). */
  private cachingHeaders(response: PreparedOcspResponse, maxAge: number): Record<string, string> {
    const headers: Record<string, string> = {
      'Last-Modified': response.lastModified,
      'Cache-Control': `max-age=${maxAge}, public, no-transform, must-revalidate`,
      ETag: response.etag,
    };
    if (response.expires !== null) headers['Expires'] = response.expires;
    return headers;
  }

  /** Prepared form of a source result; `null` (internalError, CFSSL) when stored DER does not parse. */
  private prepare(found: PreparedOcspResponse | Uint8Array): PreparedOcspResponse | null {
    if (isPreparedOcspResponse(found)) return found;
    let prepared = this.prepared.get(found);
    if (prepared === undefined) {
      try {
        prepared = prepareOcspResponse(found);
      } catch (error) {
        this.onError(error);
        return null;
      }
      this.prepared.set(found, prepared);
    }
    return prepared;
  }

  /** The stored status re-signed for the request's CertID (hash algorithm and serial), optionally with a nonce. */
  private async resign(stored: PreparedOcspResponse, issuer: OcspIssuer, certId: CertId, nonce: Uint8Array | null): Promise<PreparedOcspResponse> {
    const single = stored.single;
    const response = await buildOcspResponse({
      identity: issuer.identity!,
      serialNumber: certId.serialNumber,
      status: single.status,
      revokedAt: single.revokedAt ?? undefined,
      reason: single.reason ?? 0,
      thisUpdate: single.thisUpdate,
      nextUpdate: single.nextUpdate,
      hashAlgorithm: certId.hashAlgorithm,
      nonce,
    });
    return prepareOcspResponse(response.der);
  }

  /** {@link resign} for another CertID hash, cached per stored response and algorithm (bounded, oldest out). */
  private async resignedFor(stored: PreparedOcspResponse, issuer: OcspIssuer, certId: CertId): Promise<PreparedOcspResponse> {
    const key = `${stored.etag}:${certId.hashAlgorithm}`;
    const cached = this.resigned.get(key);
    if (cached !== undefined) return cached;
    const response = await this.resign(stored, issuer, certId, null);
    if (this.resigned.size >= this.resignedCacheSize) this.resigned.delete(this.resigned.keys().next().value!);
    this.resigned.set(key, response);
    return response;
  }
}
