/**
 * Errors of the certificate store. Codes follow CFSSL's `certdb` (`errors/error.go`: category
 * `CertStoreError` = 11000 with reasons `InsertionFailed` 100 and `RecordNotFound` 200) so clients
 * that know CFSSL's codes keep working; a database that cannot be reached is 503 (HTTP level) so the
 * HTTP layer answers 503 with `Retry-After` instead of a 400 or a 500.
 */
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';

/** Codes used by the certificate store. */
export const StoreErrorCode = {
  /** Any database error (CFSSL `CertStoreError`/`Unknown`): the driver's text is the message. */
  StoreFailed: 11000,
  /** An INSERT that changed no row (CFSSL `InsertionFailed`). */
  InsertionFailed: 11100,
  /** An UPDATE whose key matched no row (CFSSL `RecordNotFound`). */
  RecordNotFound: 11200,
  /** The database cannot be reached right now (down, restarting, locked too long): retry later. */
  Unavailable: ErrorCode.ServiceUnavailable,
  /** A bad `--db-config` file (CFSSL `PolicyError`/`InvalidPolicy` as `dbconf.LoadFile` returns). */
  InvalidConfig: ErrorCode.PolicyInvalid,
  /** A bad argument to a store call that a client controls (list filters, cursor). */
  BadRequest: ErrorCode.BadRequest,
} as const;

/** A database error: CFSSL answers these with code 11000 and the driver's text. */
export class StoreError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(StoreErrorCode.StoreFailed, message, options);
  }
}

/** An INSERT changed no row (CFSSL 11100 `failed to insert the certificate record`). */
export class RecordInsertError extends CertsmithError {
  constructor(message = 'failed to insert the certificate record') {
    super(StoreErrorCode.InsertionFailed, message);
  }
}

/**
 * No certificate row has the exact (serial, AKI) text given to a revoke: CFSSL 11200
 * `failed to revoke the certificate: certificate not found`.
 */
export class CertificateNotFoundError extends CertsmithError {
  constructor(message = 'failed to revoke the certificate: certificate not found') {
    super(StoreErrorCode.RecordNotFound, message);
  }
}

/**
 * The database is unreachable or did not answer in time (connection refused or lost, server
 * shutting down or starting, SQLite file locked past the busy timeout). The request can be retried:
 * the HTTP layer answers 503 with `Retry-After: {@link retryAfterSeconds}`. Nothing was recorded
 * for the call that failed, or its outcome is unknown; either way its certificate must not be
 * handed out.
 */
export class StoreUnavailableError extends CertsmithError {
  /** Seconds a client should wait before retrying. */
  readonly retryAfterSeconds: number;

  constructor(message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(StoreErrorCode.Unavailable, message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 1;
  }
}

/** A db-config file or value that CFSSL's `dbconf.LoadFile` would refuse (5200), or a driver certsmith does not have. */
export class DbConfigError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(StoreErrorCode.InvalidConfig, message, options);
  }
}

/**
 * The database schema is not what this version of certsmith needs: migrations are pending (and
 * the store was opened with `migrations: 'check'`), a required column is missing, or a column has
 * a type certsmith cannot use. The message names what and says how to fix it.
 */
export class SchemaError extends CertsmithError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(StoreErrorCode.StoreFailed, message, options);
  }
}

/** A list filter, limit or cursor that is not valid (code 400, as CFSSL's HTTP-level errors). */
export class InvalidStoreRequestError extends CertsmithError {
  constructor(message: string) {
    super(StoreErrorCode.BadRequest, message);
  }
}

/** The store was used after {@link Store.close}. */
export class StoreClosedError extends CertsmithError {
  constructor() {
    super(StoreErrorCode.Unavailable, 'the certificate store is closed');
  }
}

const errorClasses: Record<string, new (message: string) => CertsmithError> = {
  StoreError,
  RecordInsertError,
  CertificateNotFoundError,
  DbConfigError,
  SchemaError,
  InvalidStoreRequestError,
};

/**
 * The store's error class named `name` whose constructor takes the message alone, or `undefined`:
 * how an error that crossed a thread or process boundary by name becomes its class again.
 */
export function storeErrorClass(name: string): (new (message: string) => CertsmithError) | undefined {
  return Object.hasOwn(errorClasses, name) ? errorClasses[name] : undefined;
}

/** Rebuild a store error that crossed a thread boundary as `{ code, name, message }`. */
export function rebuildStoreError(payload: { code: number; name: string; message: string }): Error {
  if (payload.name === 'StoreUnavailableError') return new StoreUnavailableError(payload.message);
  const ErrorClass = storeErrorClass(payload.name);
  if (ErrorClass !== undefined) return new ErrorClass(payload.message);
  if (payload.code > 0) return new CertsmithError(payload.code, payload.message);
  const error = new Error(payload.message);
  error.name = payload.name;
  return error;
}
