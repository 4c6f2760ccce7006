import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { connect } from 'node:net';
import { BadRequestError, CertsmithError, ErrorCode, fromErrorPayload, toErrorPayload } from '@certsmith/x509-core';
import { describe, expect, it } from 'vitest';
import { INTERNAL_ERROR_MESSAGE, mapErrorToResponse } from './error-mapping.js';
import { ServiceUnavailableError, WorkerCrashedError } from './errors.js';
import { looksLikeInternalErrorText } from './internal-error-text.js';

/** The error `run` throws (real Node, V8 and OpenSSL errors, made by this Node). */
function thrownBy(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not throw');
}

const nodeErrors: Array<[string, Error]> = [
  ['a bad port (Node validation)', thrownBy(() => connect({ port: 99_999, host: '127.0.0.1' }))],
  ['a bad argument type (Node validation)', thrownBy(() => createPrivateKey(42 as never))],
  ['a private key OpenSSL cannot decode', thrownBy(() => createPrivateKey('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'))],
  ['a public key OpenSSL cannot decode', thrownBy(() => createPublicKey({ key: Buffer.from([0x30, 0x03, 0x02, 0x01, 0x01]), format: 'der', type: 'spki' }))],
  ['a certificate OpenSSL cannot decode', thrownBy(() => new X509Certificate(Buffer.from([0x30, 0x00])))],
  ['a property of undefined (V8)', thrownBy(() => (undefined as unknown as { x: number }).x)],
  ['runaway recursion (V8)', thrownBy(function recurse(): never { return recurse(); })],
  ['a JSON syntax error (V8)', thrownBy(() => JSON.parse('{"a":'))],
];

describe('mapErrorToResponse', () => {
  it('answers a coded CFSSL error with 400 and its code and message', () => {
    expect(mapErrorToResponse(new CertsmithError(ErrorCode.CertificateDecodeFailed))).toEqual({
      status: 400, code: 1002, message: 'Failed to decode certificate', headers: {}, unexpected: false,
    });
  });

  it('answers an HTTP-level coded error with its status, and 503 with Retry-After', () => {
    expect(mapErrorToResponse(new BadRequestError('missing request section'))).toMatchObject({ status: 400, code: 400, message: 'missing request section' });
    expect(mapErrorToResponse(new ServiceUnavailableError('queue full', 0.2))).toMatchObject({ status: 503, code: 503, headers: { 'Retry-After': '1' } });
  });

  it.each(nodeErrors)('answers an uncoded error from %s with 500 and the generic text only', (_name, error) => {
    expect(mapErrorToResponse(error)).toEqual({ status: 500, code: 500, message: INTERNAL_ERROR_MESSAGE, headers: {}, unexpected: true });
  });

  it.each(nodeErrors)('never sends the text of %s wrapped in a coded error; CFSSL wording instead', (_name, error) => {
    const wrapped = new CertsmithError(ErrorCode.DialFailed, error.message, { cause: error });
    expect(mapErrorToResponse(wrapped)).toEqual({
      status: 400, code: 6000, message: 'Failed to dial remote server', headers: {}, unexpected: false, replacedMessage: error.message,
    });
    // Rebuilt from a worker thread, without its cause: recognised by its shape.
    const rebuilt = fromErrorPayload(toErrorPayload(new CertsmithError(ErrorCode.PrivateKeyParseFailed, `key: ${error.message}`)));
    expect(mapErrorToResponse(rebuilt)).toMatchObject({ status: 400, code: 2003, message: 'Failed to parse private key' });
  });

  it('recognises the Node texts of every error above by shape alone', () => {
    expect(nodeErrors.filter(([, error]) => !looksLikeInternalErrorText(error.message)).map(([name, error]) => `${name}: ${error.message}`)).toEqual([]);
  });

  it('replaces an internal text in an HTTP-level coded error with a neutral text of its status', () => {
    const [, portError] = nodeErrors[0]!;
    expect(mapErrorToResponse(new BadRequestError(portError.message))).toMatchObject({ status: 400, code: 400, message: 'the request could not be processed' });
    expect(mapErrorToResponse(new WorkerCrashedError('bundle', { cause: portError }))).toMatchObject({ status: 500, code: 500 });
  });

  it('refuses an exposed client error (Koa / http-errors) whose text is internal', () => {
    const [, portError] = nodeErrors[0]!;
    const exposed = Object.assign(new Error(portError.message), { status: 400, expose: true });
    expect(mapErrorToResponse(exposed)).toMatchObject({ status: 500, message: INTERNAL_ERROR_MESSAGE, unexpected: true });
    expect(mapErrorToResponse(Object.assign(new Error('Bad Request'), { status: 400, expose: true }))).toMatchObject({ status: 400, message: 'Bad Request' });
  });

  it.each([
    [ErrorCode.DialFailed, 'dial tcp 127.0.0.1:443: connect: connection refused'],
    [ErrorCode.DialFailed, 'dial tcp: lookup no-such-host.invalid: no such host'],
    [ErrorCode.DialFailed, 'no remote signer reachable: http://127.0.0.1:9 (ECONNREFUSED), http://127.0.0.1:10 (UND_ERR_CONNECT_TIMEOUT)'],
    [ErrorCode.CertificateUnknownAuthority, 'x509: certificate signed by unknown authority'],
    [400, 'unexpected end of JSON input'],
    [400, 'json: cannot unmarshal string into Go struct field CertificateRequest.request.hosts of type []string'],
    [400, 'request body is not valid JSON (syntax error at position 5)'],
    [ErrorCode.CsrBadRequest, 'invalid OID part abc'],
    [ErrorCode.PrivateKeyGenerationFailed, 'RSA key is too weak'],
  ])('keeps certsmith\'s and Go\'s own wording: %i %s', (code, message) => {
    const response = mapErrorToResponse(new CertsmithError(code, message));
    expect(response.message).toBe(message);
    expect(response.replacedMessage).toBeUndefined();
  });

  it('keeps a coded message that merely has an internal error as its cause', () => {
    const [, portError] = nodeErrors[0]!;
    const response = mapErrorToResponse(new CertsmithError(ErrorCode.DialFailed, 'dial tcp localhost:99999: invalid port', { cause: portError }));
    expect(response.message).toBe('dial tcp localhost:99999: invalid port');
  });
});
