/**
 * Store errors on a structured-clone channel. A clone keeps an `Error`'s message but not its class
 * nor its fields (`code`, `retryAfterSeconds`), and the HTTP layer keys on exactly those: the CFSSL
 * code goes into the envelope (11000, 11200, 400 …) and a 503 with `retryAfterSeconds` becomes
 * `Retry-After`. So an error travels as `{ name, code, message, retryAfterSeconds? }` and is rebuilt
 * as the same class on the other side. Only the code and the message cross — never the `cause`
 * (a driver error object may carry a connection string) nor the stack.
 */
import { CertsmithError } from '@certsmith/x509-core';
import { StoreClosedError, StoreUnavailableError, storeErrorClass } from '../errors.js';

/** An error as it crosses the channel. */
export interface WireError {
  name: string;
  /** CFSSL code; 0 for an error without one. */
  code: number;
  message: string;
  /** Of a 503 that says when to retry. */
  retryAfterSeconds?: number;
}

/** `error` as plain data. */
export function errorToWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', code: 0, message: String(error) };
  const code = (error as { code?: unknown }).code;
  const wire: WireError = { name: error.name, code: typeof code === 'number' && code > 0 ? code : 0, message: error.message };
  const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  if (typeof retryAfter === 'number' && Number.isFinite(retryAfter)) wire.retryAfterSeconds = retryAfter;
  return wire;
}

/**
 * The error {@link errorToWire} described, as the same class where the store defines it; another
 * coded error becomes a `CertsmithError` with its code and name (callers compare codes, not classes).
 */
export function errorFromWire(wire: WireError): Error {
  if (wire.name === 'StoreUnavailableError') {
    return new StoreUnavailableError(wire.message, wire.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: wire.retryAfterSeconds });
  }
  if (wire.name === 'StoreClosedError') return new StoreClosedError();
  const ErrorClass = storeErrorClass(wire.name);
  if (ErrorClass !== undefined) return new ErrorClass(wire.message);
  const error = wire.code > 0 ? new CertsmithError(wire.code, wire.message) : new Error(wire.message);
  error.name = wire.name;
  if (wire.retryAfterSeconds !== undefined) Object.assign(error, { retryAfterSeconds: wire.retryAfterSeconds });
  return error;
}
