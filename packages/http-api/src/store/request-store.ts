/**
 * The certificate store as request handlers use it. A database that cannot be reached fails a
 * request with 503 and `Retry-After` (the store's `StoreUnavailableError`); its text comes from the
 * driver (`connect ECONNREFUSED 10.0.0.5:5432`, `terminating connection due to administrator
 * command`), which names the database's address and is the operator's business, not the client's.
 * So the client gets one fixed message and the operator the driver's text in the log — once per
 * {@link UNAVAILABLE_LOG_INTERVAL_MS} with the count of the failures in between, so that an outage
 * under load does not flood the log with one line per request.
 */
import type { Store } from '@certsmith/cert-store';
import { isCodedError } from '@certsmith/x509-core';
import type { Logger } from 'pino';
import { ServiceUnavailableError } from '../errors.js';

/** What a client reads when the store cannot be reached. */
export const STORE_UNAVAILABLE_MESSAGE = 'the certificate store is unavailable; retry later';

/** At most one "store unavailable" log line per this many milliseconds. */
export const UNAVAILABLE_LOG_INTERVAL_MS = 10_000;

/** HTTP-level code of an unreachable database (the store's `StoreUnavailableError`, `StoreClosedError`). */
const UNAVAILABLE = 503;

/**
 * `store` with every call's 503 turned into a {@link ServiceUnavailableError} carrying
 * {@link STORE_UNAVAILABLE_MESSAGE} and the store's `retryAfterSeconds` (at least 1). Other errors
 * (11000 with the driver's text, as CFSSL answers them; 400 for a bad cursor) pass unchanged.
 */
export function storeForRequests(store: Store, logger: Logger): Store {
  let lastLogged = -Infinity;
  let suppressed = 0;
  const answer = (error: unknown): never => {
    if (!isCodedError(error) || error.code !== UNAVAILABLE) throw error;
    const now = Date.now();
    if (now - lastLogged >= UNAVAILABLE_LOG_INTERVAL_MS) {
      logger.warn({ err: error, driver: store.driver, failuresNotLogged: suppressed }, 'certificate store unavailable: requests that need it answer 503');
      lastLogged = now;
      suppressed = 0;
    } else {
      suppressed += 1;
    }
    const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
    throw new ServiceUnavailableError(STORE_UNAVAILABLE_MESSAGE, typeof retryAfter === 'number' && retryAfter >= 1 ? retryAfter : 1);
  };
  const guard = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      return answer(error);
    }
  };
  return {
    driver: store.driver,
    recordCertificate: (input) => guard(() => store.recordCertificate(input)),
    insertCertificate: (row) => guard(() => store.insertCertificate(row)),
    getCertificate: (serial, authorityKeyId) => guard(() => store.getCertificate(serial, authorityKeyId)),
    findCertificate: (serial, authorityKeyId) => guard(() => store.findCertificate(serial, authorityKeyId)),
    listCertificates: (options) => guard(() => store.listCertificates(options)),
    listCertificateSummaries: (options) => guard(() => store.listCertificateSummaries(options)),
    listCertificatesJson: (options, withPem) => guard(() => store.listCertificatesJson(options, withPem)),
    revokeCertificate: (serial, authorityKeyId, reason) => guard(() => store.revokeCertificate(serial, authorityKeyId, reason)),
    tidy: (options) => guard(() => store.tidy(options)),
    countCertificates: () => guard(() => store.countCertificates()),
    countExpiring: (options) => guard(() => store.countExpiring(options)),
    upsertOcspResponse: (response) => guard(() => store.upsertOcspResponse(response)),
    getOcspResponse: (serial, authorityKeyId) => guard(() => store.getOcspResponse(serial, authorityKeyId)),
    listOcspResponses: (options) => guard(() => store.listOcspResponses(options)),
    nextCrlNumber: (issuer) => guard(() => store.nextCrlNumber(issuer)),
    watchChanges: (onChange, options) => store.watchChanges(onChange, options),
    ping: () => guard(() => store.ping()),
    // Request handlers never close the server's store; the server does at shutdown.
    close: () => Promise.resolve(),
  };
}
