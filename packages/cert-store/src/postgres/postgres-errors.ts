/** node-postgres errors as the store's coded errors. */
import { CertificateNotFoundError, SchemaError, StoreError, StoreUnavailableError } from '../errors.js';
import { isCodedError } from '@certsmith/x509-core';

/**
 * SQLSTATEs that mean "the server cannot serve now": class 08 (connection exception), 57P01–57P03
 * (shutdown, crash, starting up), 53300 (too many connections), 57014 (statement timeout).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || ['57P01', '57P02', '57P03', '53300', '57014'].includes(code);
}

/** Socket-level failures: nothing answers at the address, or the connection broke. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT']);

/** node-postgres' own texts for a broken or timed-out connection. */
const UNAVAILABLE_TEXT = /Connection terminated|timeout exceeded when trying to connect|Query read timeout|connection error|Client was closed|Cannot use a pool after calling end/i;

/** Map anything node-postgres throws to StoreUnavailableError (503) or StoreError (11000, the server's text). */
export function postgresError(error: unknown): Error {
  if (isCodedError(error) && (error instanceof StoreError || error instanceof StoreUnavailableError || error instanceof CertificateNotFoundError || error instanceof SchemaError)) {
    return error;
  }
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
    if (isUnavailableSqlState(code)) return new StoreUnavailableError(`the certificate database is unavailable: ${message}`, { cause: error });
    return new StoreError(message, { cause: error });
  }
  if ((typeof code === 'string' && NETWORK_CODES.has(code)) || UNAVAILABLE_TEXT.test(message)) {
    return new StoreUnavailableError(`the certificate database is unavailable: ${message}`, { cause: error });
  }
  return new StoreError(message, { cause: error });
}
