/**
 * Every row of a filtered listing as an async iterable, one page at a time (bounded memory): what
 * a CRL builder (`status: 'revoked'`, the CA's AKI, `expiresAfter: now`), an OCSP refresh,
 * `certs list|export` or `ocspdump` (`expiresAfter: now`) reads.
 */
import type {
  CertificatePage,
  CertificateRecord,
  CertificateSummary,
  ListCertificatesOptions,
  ListOcspResponsesOptions,
  OcspResponseRecord,
} from './model.js';
import type { Store } from './store.js';

/** All certificates matching the filters, in the listing's order; pages of `limit` (default 1000). */
export function iterateCertificates(
  store: Pick<Store, 'listCertificates'>,
  filters: Omit<ListCertificatesOptions, 'cursor'> = {},
): AsyncGenerator<CertificateRecord> {
  return everyRow((options) => store.listCertificates(options), filters);
}

/** {@link iterateCertificates} without each row's PEM (`Store.listCertificateSummaries`): for readers that do not need the certificate itself. */
export function iterateCertificateSummaries(
  store: Pick<Store, 'listCertificateSummaries'>,
  filters: Omit<ListCertificatesOptions, 'cursor'> = {},
): AsyncGenerator<CertificateSummary> {
  return everyRow((options) => store.listCertificateSummaries(options), filters);
}

async function* everyRow<Row extends CertificateSummary>(
  list: (options: ListCertificatesOptions) => Promise<CertificatePage<Row>>,
  filters: Omit<ListCertificatesOptions, 'cursor'>,
): AsyncGenerator<Row> {
  let cursor: string | undefined;
  // Bounded by the table: every page moves the keyset cursor forward.
  do {
    const page = await list({ limit: 1000, ...filters, ...(cursor === undefined ? {} : { cursor }) });
    yield* page.certificates;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}

/** All stored OCSP responses matching the filters, in (serial, AKI) order; pages of `limit` (default 1000). */
export async function* iterateOcspResponses(
  store: Pick<Store, 'listOcspResponses'>,
  filters: Omit<ListOcspResponsesOptions, 'cursor'> = {},
): AsyncGenerator<OcspResponseRecord> {
  let cursor: string | undefined;
  do {
    const page = await store.listOcspResponses({ limit: 1000, ...filters, ...(cursor === undefined ? {} : { cursor }) });
    yield* page.responses;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
