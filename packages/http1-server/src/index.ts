/**
 * `@certsmith/http1-server`: a small, hardened HTTP/1.1 server on node:net for tiny request/answer
 * services — certsmith's stand-alone OCSP responder. See the package README for what it does and
 * does not do, and why it exists next to node:http.
 */
export { createHttp1Server } from './http1-server.js';
export type { Http1Server, Http1ServerOptions, Http1ListenTarget } from './http1-server.js';
export type { Http1Handler } from './http1-connection.js';
export { Http1RequestParser } from './request-parser.js';
export type { Http1Request, Http1Headers, Http1Limits, Http1ParseEvent, Http1ParsePhase } from './request-parser.js';
export { encodeResponse, InvalidResponseError } from './response-encoder.js';
export type { Http1Response, ResponseFraming } from './response-encoder.js';
