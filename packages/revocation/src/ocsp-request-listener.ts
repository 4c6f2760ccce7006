/**
 * A node:http request listener around an {@link OcspResponder}, for embedding the responder in a
 * node:http server (`certsmith ocspserve` uses `@certsmith/http1-server` instead, for speed; Koa
 * mounts the responder through its own middleware in `serve`). Bodies are capped — an OCSP request is
 * a few hundred bytes, and CFSSL's unbounded read lets a client make the responder buffer anything —
 * and a request over the cap is answered malformedRequest without reading further.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

import { ocspErrorResponse } from './ocsp-response-builder.js';
import type { OcspHttpResponse, OcspResponder } from './ocsp-responder.js';

/** Options of {@link createOcspRequestListener}. */
export interface OcspRequestListenerOptions {
  /** Largest POST body read; default 64 KiB. */
  maxBodyBytes?: number;
}

const MALFORMED = ocspErrorResponse('malformedRequest');
const EMPTY = new Uint8Array(0);

/**
 * Write an answer in one go: headers with a Content-Length (no chunked framing) and the body. A 304
 * gets none: its Content-Length would have to be the 200's (RFC 9110 8.6), and it has no body.
 */
function send(response: ServerResponse, answer: OcspHttpResponse): void {
  // writeHead sends the header block at once, so the length must be among the headers given to it;
  // the responder's answers are shared and frozen, so the length goes on a copy.
  const headers: Record<string, string | number> = { ...answer.headers };
  if (answer.status !== 304) headers['Content-Length'] = answer.body.byteLength;
  response.writeHead(answer.status, headers);
  response.end(answer.body);
}

/** A `(request, response)` listener for `http.createServer`. */
export function createOcspRequestListener(responder: OcspResponder, options: OcspRequestListenerOptions = {}): (request: IncomingMessage, response: ServerResponse) => void {
  const maxBodyBytes = options.maxBodyBytes ?? 64 * 1024;
  return (request, response) => {
    const method = request.method ?? 'GET';
    if (method !== 'POST') {
      // GET carries the request in its path, and every other method is answered 405 whatever it
      // sends: nothing to read (node:http discards an unread body once the answer is written).
      void responder.handle({ method, path: request.url ?? '/', headers: request.headers, body: EMPTY }).then((answer) => send(response, answer));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on('data', (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        refused = true;
        response.writeHead(400, { 'Content-Type': 'application/ocsp-response', 'Cache-Control': 'max-age=0, no-cache', Connection: 'close' });
        response.end(MALFORMED);
        request.resume();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => {
      if (refused) return;
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      void responder.handle({ method, path: request.url ?? '/', headers: request.headers, body }).then((answer) => send(response, answer));
    });
  };
}
