/**
 * Prometheus metrics of the certificate store, on a server's registry:
 *
 * | metric | what |
 * |---|---|
 * | `certsmith_certificates{label,status}` | recorded certificates by issuing label and status |
 * | `certsmith_certificates_expiring_30d{label}` | unrevoked certificates expiring within 30 days, by label |
 * | `certsmith_ca_certificate_expiry_seconds{label}` | seconds until each signer's CA certificate expires (negative once expired) |
 * | `certsmith_certificate_store_up` | 1 when the last count query answered, else 0 |
 * | `certsmith_certificate_store_tidy_runs_total{outcome}` / `…_tidy_removed_total{kind}` / `…_last_tidy_timestamp_seconds` | scheduled tidy |
 *
 * The counts come from two grouped queries the store answers from covering indexes (no PEM is
 * read), at most once per {@link DEFAULT_COUNT_REFRESH_MS} whatever the number of scrapers. Label
 * values are bounded: a `ca_label` that is not one of the server's signer labels (rows added by
 * certadd or by another CA sharing the database) is counted under `(other)`, a status other than
 * CFSSL's three likewise.
 */
import type { Store, TidyResult } from '@certsmith/cert-store';
import type { Signer } from '@certsmith/signer-api';
import { parseCertificate } from '@certsmith/x509-core';
import { Counter, Gauge } from '../prom-client-parts.js';
import type { Registry } from 'prom-client';

/** How long counts are reused before the store is asked again. */
export const DEFAULT_COUNT_REFRESH_MS = 15_000;

/** The window of `certsmith_certificates_expiring_30d`. */
const EXPIRING_WINDOW_MS = 30 * 24 * 60 * 60 * 1000;

/** Longest a scrape waits for a signer's CA certificate (a remote signer may fetch it). */
const CA_CERTIFICATE_TIMEOUT_MS = 2_000;

/** Label value for labels and statuses outside the bounded sets. */
export const OTHER_LABEL_VALUE = '(other)';

const STATUSES = new Set(['good', 'revoked', 'unknown']);

/** A signer of the server, for the CA expiry gauge. */
export interface CaSignerSource {
  readonly label: string;
  readonly signer: Pick<Signer, 'getCertificate'>;
}

/** Options of {@link watchCertificateStore}. */
export interface CertificateStoreMetricsOptions {
  store: Pick<Store, 'countCertificates' | 'countExpiring'>;
  /** The server's signers: their labels bound the `label` values; their CA certificates feed the expiry gauge. */
  signers: readonly CaSignerSource[];
  /** Reuse counts this long (default {@link DEFAULT_COUNT_REFRESH_MS}). */
  countRefreshMs?: number;
  /** Clock (tests). */
  now?: () => Date;
}

/** What the server reports into the store metrics besides what is read at scrape time. */
export interface CertificateStoreMetrics {
  /** A scheduled tidy finished. */
  observeTidy(result: TidyResult): void;
  /** A scheduled tidy failed. */
  observeTidyFailure(): void;
}

interface Counts {
  byLabelAndStatus: Map<string, number>;
  expiringByLabel: Map<string, number>;
}

/** Register the store metrics on `registry`. One store per registry. */
export function watchCertificateStore(registry: Registry, options: CertificateStoreMetricsOptions): CertificateStoreMetrics {
  const registers = [registry];
  const now = options.now ?? (() => new Date());
  const refreshMs = options.countRefreshMs ?? DEFAULT_COUNT_REFRESH_MS;
  const knownLabels = new Set(['', ...options.signers.map((source) => source.label)]);
  const boundedLabel = (label: string): string => (knownLabels.has(label) ? label : OTHER_LABEL_VALUE);
  const boundedStatus = (status: string): string => (STATUSES.has(status) ? status : OTHER_LABEL_VALUE);

  let counts: Counts | null = null;
  let countedAt = -Infinity;
  let refreshing: Promise<Counts | null> | null = null;
  let up = 0;
  /** The counts, refreshed when older than `refreshMs`; `null` while the store does not answer. */
  const currentCounts = (): Promise<Counts | null> => {
    if (Date.now() - countedAt < refreshMs) return Promise.resolve(counts);
    refreshing ??= (async () => {
      try {
        const [byStatus, expiring] = await Promise.all([options.store.countCertificates(), options.store.countExpiring({ withinMs: EXPIRING_WINDOW_MS, now: now() })]);
        const fresh: Counts = { byLabelAndStatus: new Map(), expiringByLabel: new Map() };
        for (const row of byStatus) {
          const key = JSON.stringify([boundedLabel(row.label), boundedStatus(row.status)]);
          fresh.byLabelAndStatus.set(key, (fresh.byLabelAndStatus.get(key) ?? 0) + row.count);
        }
        for (const row of expiring) {
          const label = boundedLabel(row.label);
          fresh.expiringByLabel.set(label, (fresh.expiringByLabel.get(label) ?? 0) + row.count);
        }
        counts = fresh;
        countedAt = Date.now();
        up = 1;
      } catch {
        // Stale counts would look current: show none until the store answers again.
        counts = null;
        countedAt = -Infinity;
        up = 0;
      } finally {
        refreshing = null;
      }
      return counts;
    })();
    return refreshing;
  };

  new Gauge({
    name: 'certsmith_certificates',
    // Every process of a server counts the same database (serve --processes): one count, not a sum.
    aggregator: 'first',
    help: 'Certificates in the certificate store, by issuing label and status (label "(other)": not one of this server\'s signer labels).',
    labelNames: ['label', 'status'] as const,
    registers,
    async collect() {
      this.reset();
      const current = await currentCounts();
      for (const [key, count] of current?.byLabelAndStatus ?? []) {
        const [label, status] = JSON.parse(key) as [string, string];
        this.set({ label, status }, count);
      }
    },
  });
  new Gauge({
    name: 'certsmith_certificates_expiring_30d',
    // The same database in every process, as above.
    aggregator: 'first',
    help: 'Unrevoked certificates in the certificate store that expire within 30 days, by issuing label.',
    labelNames: ['label'] as const,
    registers,
    async collect() {
      this.reset();
      const current = await currentCounts();
      if (current === null) return;
      // Every signer label, 0 included, so an alert on "> 0" sees the series before it moves.
      for (const { label } of options.signers) this.set({ label }, 0);
      for (const [label, count] of current.expiringByLabel) this.set({ label }, count);
    },
  });
  new Gauge({
    name: 'certsmith_certificate_store_up',
    // 0 when any process of the server cannot reach the store.
    aggregator: 'min',
    help: '1 when the certificate store answered the last count query, 0 when it could not be reached.',
    registers,
    async collect() {
      await currentCounts();
      this.set(up);
    },
  });

  const caExpiry = new Map<string, number>();
  new Gauge({
    name: 'certsmith_ca_certificate_expiry_seconds',
    // The same CAs in every process.
    aggregator: 'min',
    help: 'Seconds until the CA certificate of each signer label expires (negative once expired).',
    labelNames: ['label'] as const,
    registers,
    async collect() {
      this.reset();
      await Promise.all(
        options.signers.map(async ({ label, signer }) => {
          if (!caExpiry.has(label)) {
            const notAfter = await caCertificateNotAfter(signer);
            if (notAfter === null) return;
            caExpiry.set(label, notAfter);
          }
          this.set({ label }, Math.round((caExpiry.get(label)! - now().getTime()) / 1000));
        }),
      );
    },
  });

  const tidyRuns = new Counter({
    name: 'certsmith_certificate_store_tidy_runs_total',
    help: 'Scheduled tidy runs of the certificate store, by outcome (success, failure).',
    labelNames: ['outcome'] as const,
    registers,
  });
  const tidyRemoved = new Counter({
    name: 'certsmith_certificate_store_tidy_removed_total',
    help: 'Rows removed by scheduled tidy runs: expired certificates, their OCSP responses, old change-log entries.',
    labelNames: ['kind'] as const,
    registers,
  });
  const lastTidy = new Gauge({
    name: 'certsmith_certificate_store_last_tidy_timestamp_seconds',
    // The latest tidy of any process.
    aggregator: 'max',
    help: 'When the last successful scheduled tidy finished (Unix time).',
    registers,
  });
  for (const outcome of ['success', 'failure']) tidyRuns.inc({ outcome }, 0);
  for (const kind of ['certificates', 'ocsp_responses', 'changes']) tidyRemoved.inc({ kind }, 0);

  return {
    observeTidy(result) {
      tidyRuns.inc({ outcome: 'success' });
      tidyRemoved.inc({ kind: 'certificates' }, result.certificates);
      tidyRemoved.inc({ kind: 'ocsp_responses' }, result.ocspResponses);
      tidyRemoved.inc({ kind: 'changes' }, result.changes);
      lastTidy.set(now().getTime() / 1000);
    },
    observeTidyFailure() {
      tidyRuns.inc({ outcome: 'failure' });
    },
  };
}

/** The notAfter (ms) of a signer's CA certificate, or `null` when it cannot be had in time. */
async function caCertificateNotAfter(signer: Pick<Signer, 'getCertificate'>): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const certificate = await Promise.race([
      signer.getCertificate(),
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), CA_CERTIFICATE_TIMEOUT_MS);
      }),
    ]);
    return certificate === null ? null : parseCertificate(certificate.der).notAfter.getTime();
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}
