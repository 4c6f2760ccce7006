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

/** The responder's answer. */
export interface OcspHttpResponse {
  status: number;
  /** Header names in canonical case; a fresh object per answer, the caller's to add to. */
  headers: Record<string, string>;
  body: Uint8Array;
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
  /** Called with source failures and unparsable stored responses (for the log); never with secrets. */
  onError?: (error: unknown) => void;
}

const OCSP_CONTENT_TYPE = 'application/ocsp-response';
const NO_CACHE = 'max-age=0, no-cache';
const EMPTY = new Uint8Array(0);
const MALFORMED = ocspErrorResponse('malformedRequest');
const INTERNAL_ERROR = ocspErrorResponse('internalError');
const UNAUTHORIZED = ocspErrorResponse('unauthorized');

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

function errorAnswer(status: number, body: Uint8Array): OcspHttpResponse {
  return { status, headers: { 'Content-Type': OCSP_CONTENT_TYPE, 'Cache-Control': NO_CACHE }, body };
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
  private readonly cacheControls = new Map<number, { maxAge: number; value: string }>();

  constructor(options: OcspResponderOptions) {
    this.source = options.source;
    this.directory = new OcspIssuerDirectory(options.issuers ?? []);
    this.path = options.path ?? '/';
    this.signNonces = options.nonces === 'sign';
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? (() => {});
    this.resignedCacheSize = options.resignedCacheSize ?? 10_000;
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
    let der: Uint8Array | null;
    if (request.method === 'POST') der = request.body ?? EMPTY;
    else if (request.method === 'GET') der = decodeOcspGetPath(request.path, this.path);
    else return { status: 405, headers: { Allow: 'GET, POST', 'Cache-Control': NO_CACHE }, body: EMPTY };
    if (der === null) return errorAnswer(400, MALFORMED);

    let ocspRequest: OcspRequest;
    try {
      ocspRequest = parseOcspRequest(der);
    } catch {
      return errorAnswer(400, MALFORMED);
    }
    // RFC 8954 2.1: a nonce is 1–32 octets; a responder that echoes nonces rejects longer ones
    // (otherwise any client could make it sign and return arbitrary data).
    if (this.signNonces && ocspRequest.nonce !== null && !isAcceptableNonce(ocspRequest.nonce)) return errorAnswer(400, MALFORMED);
    const certId = ocspRequest.certIds[0]!;
    const issuer = this.directory.find(certId);
    let serial: string | null = null;
    const lookup: OcspLookup = {
      certId,
      // Both computed when a source asks (the store's does, a responses file's does not): a BigInt
      // conversion and hex per request add up.
      get serial() {
        return (serial ??= decimalSerial(certId.serialNumber));
      },
      get authorityKeyId() {
        return issuer !== null ? issuer.keyIdentifier : certId.hashAlgorithm === 'SHA1' ? hex(certId.issuerKeyHash) : null;
      },
      issuer,
    };

    let found: ReturnType<OcspResponseSource['find']>;
    try {
      found = this.source.find(lookup);
    } catch (error) {
      this.onError(error);
      return errorAnswer(500, INTERNAL_ERROR);
    }
    if (found instanceof Promise) {
      return found.then(
        (result) => this.respondWith(result, request, ocspRequest, issuer, certId),
        (error: unknown) => {
          this.onError(error);
          return errorAnswer(500, INTERNAL_ERROR);
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
    if (found === null) return errorAnswer(200, UNAUTHORIZED);
    const stored = this.prepare(found);
    if (stored === null) return errorAnswer(200, INTERNAL_ERROR);
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
        return { status: 200, headers: { 'Content-Type': OCSP_CONTENT_TYPE, 'Cache-Control': 'no-store' }, body: fresh.der };
      }
      return this.answer(await this.resignedFor(stored, issuer, certId), ifNoneMatch);
    } catch (error) {
      this.onError(error);
      return errorAnswer(500, INTERNAL_ERROR);
    }
  }

  /** Success headers (CFSSL's set), or 304 when If-None-Match matches. */
  private answer(response: PreparedOcspResponse, ifNoneMatch: string | undefined): OcspHttpResponse {
    const headers: Record<string, string> = {
      'Last-Modified': response.lastModified,
      'Cache-Control': this.cacheControl(response.nextUpdateMs),
      ETag: response.etag,
    };
    if (response.expires !== null) headers['Expires'] = response.expires;
    if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, response.etag)) return { status: 304, headers, body: EMPTY };
    headers['Content-Type'] = OCSP_CONTENT_TYPE;
    return { status: 200, headers, body: response.der };
  }

  /**
   * `Cache-Control` for a response with this nextUpdate, now: the same text for every answer in the
   * same second, so it is kept per nextUpdate (responses signed together share one) rather than
   * formatted per answer.
   */
  private cacheControl(nextUpdateMs: number | null): string {
    const maxAge = nextUpdateMs === null ? 0 : Math.max(0, Math.floor((nextUpdateMs - this.now()) / 1000));
    const key = nextUpdateMs ?? 0;
    const cached = this.cacheControls.get(key);
    if (cached !== undefined && cached.maxAge === maxAge) return cached.value;
    if (cached === undefined && this.cacheControls.size >= 1024) this.cacheControls.clear();
    const value = `max-age=${maxAge}, public, no-transform, must-revalidate`;
    this.cacheControls.set(key, { maxAge, value });
    return value;
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
