/**
 * Revocation on the certificate store, in a running server: revoke, the CRL of each CA, the OCSP
 * responses — signed when a certificate is issued, when it is revoked, and refreshed before they
 * expire — and what other writers of the store do (other instances, `certsmith revoke`, `cfssl
 * revoke`), learnt through the store's change feed (PostgreSQL `LISTEN/NOTIFY` at once, a poll as
 * safety net).
 *
 * What holds:
 * - a certificate this server issues is handed out only once its row and its OCSP response are
 *   stored ({@link RevocationService.signRecorded} runs in the record step; certadd too);
 * - a revoke answers once the row is revoked and its revoked response stored; the CA's CRL is
 *   rebuilt at once (in the background) and OCSP lookups on this instance see it immediately;
 * - another instance sees it as soon as the change reaches it (PostgreSQL: at once; the poll: within
 *   `changes.pollInterval`, default 5 s) and its OCSP cache entry lives at most 5 s;
 * - every unexpired certificate of a CA this server signs for has a response that stays valid for at
 *   least half the interval: the refresh runs at start-up and then every `interval / 8` (at most
 *   hourly), signing what is missing or due, and re-signing revoked certificates whose response
 *   still says otherwise (a change missed while the watch started or the database was away) — with
 *   several CAs in one store, rows of other CAs are simply not this server's to sign, never a reason
 *   to stop (CFSSL's ocsprefresh aborts, #1105);
 * - certificates added with certadd get their response at once; rows other writers insert (`cfssl
 *   sign` on the same database) at the next refresh.
 */
import type { CertificateChange, CertificateSummary, ChangeSubscription, Store } from '@certsmith/cert-store';
import { iterateCertificateSummaries, iterateOcspResponses } from '@certsmith/cert-store';
import type { Logger } from '@certsmith/http-api';
import type { CertificateStatusRecord, Crl, CrlStore, SignedOcspResponse, StoreOcspSource } from '@certsmith/revocation';
import { CrlCache, createStoreOcspSource, ocspStatusOf, prepareOcspResponse, signOcspForRecord } from '@certsmith/revocation';
import { CertsmithError, ErrorCode } from '@certsmith/x509-core';
import type { RevocationAuthorities, RevocationAuthority } from './revocation-authorities.js';
import type { RevocationSettings } from './revocation-settings.js';

/** What {@link RevocationService} needs. */
export interface RevocationServiceOptions {
  /** The store, for background work (errors are logged). */
  store: Store;
  /** The store as requests see it (an unreachable database answers 503 with a fixed message). */
  requestStore: Store;
  authorities: RevocationAuthorities;
  settings: RevocationSettings;
  logger: Logger;
  /**
   * Default true. False: this service follows the change feed as usual (its caches, its CRLs,
   * re-signing what another writer changed) but leaves the refresh schedule — every due response of
   * the store, at start-up and every interval / 8 — to another process on the same store that has
   * it: one worker process of `serve --processes` runs it for all of them, instead of each signing
   * the same responses again.
   */
  backgroundWork?: boolean;
}

/** What one refresh did. */
export interface RefreshSummary {
  signed: number;
  failed: number;
  durationMs: number;
}

const key = (authorityKeyId: string, serial: string): string => `${authorityKeyId}:${serial}`;

/** The store's revoked, unexpired rows of a CA, one page at a time (CRL entries). */
function crlStoreOf(store: Store): CrlStore {
  return {
    revokedCertificates: (authorityKeyId, now) => iterateCertificateSummaries(store, { status: 'revoked', authorityKeyId, expiresAfter: now }),
    nextCrlNumber: (authorityKeyId) => store.nextCrlNumber(authorityKeyId),
  };
}

/** Revocation state of a running server. */
export class RevocationService {
  /** OCSP responses as the responder reads them (cached 5 s; entries dropped on every known change). */
  readonly ocspSource: StoreOcspSource;
  readonly crls: CrlCache;
  private readonly options: RevocationServiceOptions;
  /** Rows whose response could not be signed (signer or store down): the next refresh signs them. */
  private readonly pending = new Set<string>();
  private subscription: ChangeSubscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<RefreshSummary> | null = null;
  private closed = false;

  constructor(options: RevocationServiceOptions) {
    this.options = options;
    this.ocspSource = createStoreOcspSource(options.requestStore);
    this.crls = new CrlCache({ store: crlStoreOf(options.requestStore), validityMs: options.settings.crlValidityMs });
  }

  private get logger(): Logger {
    return this.options.logger;
  }

  /** Time between refreshes: an eighth of the interval, from 1 minute to 1 hour. */
  get refreshEveryMs(): number {
    return Math.min(3_600_000, Math.max(60_000, Math.floor(this.options.settings.ocspIntervalMs / 8)));
  }

  /**
   * Sign and store the OCSP response of a certificate just recorded by certadd, before the certadd
   * is answered (issuance stores it in the row's own transaction: {@link signStatus}). A
   * certificate of a CA this server does not sign for (a remote signer's) gets none here.
   * @throws the signer's error (e.g. 2500) or the store's (503): the request then fails.
   */
  async signRecorded(record: CertificateStatusRecord): Promise<void> {
    const signed = await this.signStatus(record);
    if (signed === null) return;
    await this.options.requestStore.upsertOcspResponse(signed);
    this.ocspSource.invalidate(record.serial, record.authorityKeyId);
  }

  /**
   * The OCSP response stating `record`'s status, signed by the identity of its CA — for a
   * certificate being recorded (issuance stores it in the row's transaction; certadd right after
   * the row). `null` for a CA this server does not sign for (a remote signer's).
   * @throws the signer's error (e.g. 2500).
   */
  async signStatus(record: CertificateStatusRecord): Promise<SignedOcspResponse | null> {
    const authority = this.options.authorities.byKeyIdentifier(record.authorityKeyId);
    if (authority === undefined) return null;
    return await signOcspForRecord(authority.ocsp, record, { intervalMs: this.options.settings.ocspIntervalMs });
  }

  /** A certificate was recorded with its response ({@link signStatus}): drop what the responder cached for it. */
  recorded(serial: string, authorityKeyId: string): void {
    this.ocspSource.invalidate(serial, authorityKeyId);
  }

  /**
   * Revoke (serial, AKI) as CFSSL does (exact text match, 11200 when no row), then store the revoked
   * OCSP response and renew the CA's CRL. A response that cannot be signed now (signer down) fails
   * the request; the row stays revoked and the refresh signs it once the signer is back.
   */
  async revoke(serial: string, authorityKeyId: string, reason: number): Promise<void> {
    const row = await this.options.requestStore.revokeCertificate(serial, authorityKeyId, reason);
    const authority = this.options.authorities.byKeyIdentifier(row.authorityKeyId);
    this.ocspSource.invalidate(row.serial, row.authorityKeyId);
    if (authority === undefined) {
      this.logger.info({ serial: row.serial, aki: row.authorityKeyId }, 'revoked a certificate of a CA this server does not sign for: no OCSP response or CRL signed here');
      return;
    }
    this.renewCrl(authority);
    try {
      await this.options.requestStore.upsertOcspResponse(await signOcspForRecord(authority.ocsp, row, { intervalMs: this.options.settings.ocspIntervalMs }));
    } catch (error) {
      this.pending.add(key(row.authorityKeyId, row.serial));
      throw error;
    } finally {
      this.ocspSource.invalidate(row.serial, row.authorityKeyId);
    }
  }

  /**
   * The current CRL of `label` (default `default`): cached, rebuilt after a revocation and well
   * before nextUpdate, never signed per request.
   * @throws 5200 for a label no signer has; 2000 for a signer that cannot sign CRLs.
   */
  crlFor(label: string | undefined): Promise<Crl> {
    const name = label === undefined || label === '' ? 'default' : label;
    const authority = this.options.authorities.byLabel(name);
    if (authority === undefined) {
      const unavailable = this.options.authorities.unavailable.find((entry) => entry.label === name);
      if (unavailable !== undefined) throw new CertsmithError(ErrorCode.PrivateKeyUnknown, unavailable.reason);
      throw new CertsmithError(ErrorCode.PolicyInvalid, `unknown label ${JSON.stringify(name)}: no signer is configured for it`);
    }
    return this.crls.get(authority.ca);
  }

  /** Start the change watch and the refresh schedule (first refresh at once, in the background). */
  start(): void {
    const { store, settings } = this.options;
    this.subscription = store.watchChanges((change) => this.onChange(change), {
      ...(settings.changePollIntervalMs === undefined ? {} : { pollIntervalMs: settings.changePollIntervalMs }),
      onError: (error) => this.logger.warn({ err: error }, 'looking for revocations made elsewhere failed; trying again'),
    });
    if (this.options.backgroundWork !== false) this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => this.schedule(this.refreshEveryMs));
    }, delayMs);
    this.timer.unref();
  }

  /** Renew a CA's CRL in the background (the next request gets the new one). */
  private renewCrl(authority: RevocationAuthority): void {
    this.crls.invalidate(authority.keyIdentifier);
    this.crls.get(authority.ca).catch((error: unknown) => this.logger.warn({ err: error, signer: authority.label }, 'renewing the CRL failed; the next request tries again'));
  }

  /**
   * A status change by any writer: drop what this instance cached, renew the CRL, and make sure the
   * stored OCSP response says what the row says (re-signed when not: `certsmith revoke` and `cfssl
   * revoke` change only the row). Instances racing to re-sign store equivalent responses.
   */
  private async onChange(change: CertificateChange): Promise<void> {
    this.ocspSource.invalidate(change.serial, change.authorityKeyId);
    const authority = this.options.authorities.byKeyIdentifier(change.authorityKeyId);
    if (authority === undefined) return;
    this.renewCrl(authority);
    // Every process re-signs (not only the one with the background work): its own OCSP answers
    // must follow the row within the watch's delay, and a response it read before another process
    // re-signed would stay in its cache. Changes by other writers are rare; the race stores
    // equivalent responses.
    try {
      const { store } = this.options;
      const row = await store.getCertificate(change.serial, change.authorityKeyId);
      if (row === null) return;
      const stored = await store.getOcspResponse(row.serial, row.authorityKeyId);
      if (stored !== null && this.responseMatches(stored.body, row)) return;
      await store.upsertOcspResponse(await signOcspForRecord(authority.ocsp, row, { intervalMs: this.options.settings.ocspIntervalMs }));
    } catch (error) {
      this.pending.add(key(change.authorityKeyId, change.serial));
      this.logger.warn({ err: error, serial: change.serial, aki: change.authorityKeyId }, 'signing the OCSP response after a change failed; the refresh tries again');
    } finally {
      this.ocspSource.invalidate(change.serial, change.authorityKeyId);
    }
  }

  /** True when a stored response states the row's status (and reason, for revoked). */
  private responseMatches(body: Uint8Array, row: CertificateSummary): boolean {
    try {
      const single = prepareOcspResponse(body).single;
      const wanted = ocspStatusOf(row);
      if (single.status !== wanted.status) return false;
      return wanted.status !== 'revoked' || (single.reason ?? 0) === wanted.reason;
    } catch {
      return false;
    }
  }

  /**
   * Sign what is due: every unexpired certificate of this server's CAs whose stored response is
   * missing or expires within half the interval, and the rows whose signing failed earlier. One
   * run at a time; a failure is counted and logged, never a reason to stop.
   */
  refresh(now: Date = new Date()): Promise<RefreshSummary> {
    this.refreshing ??= this.refreshOnce(now).finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async refreshOnce(now: Date): Promise<RefreshSummary> {
    const started = performance.now();
    const { store, settings, authorities } = this.options;
    const summary: RefreshSummary = { signed: 0, failed: 0, durationMs: 0 };
    try {
      const freshUntil = new Date(now.getTime() + settings.ocspIntervalMs / 2);
      const fresh = new Set<string>();
      for await (const response of iterateOcspResponses(store, { expiresAfter: freshUntil })) {
        if (this.closed) return summary;
        fresh.add(key(response.authorityKeyId, response.serial));
      }
      const seen = new Set<string>();
      for (const authority of authorities.all) {
        if (seen.has(authority.keyIdentifier)) continue;
        seen.add(authority.keyIdentifier);
        // Revoked rows whose fresh response still states something else (a change this instance
        // did not see: it happened while the watch was starting, or the database was away).
        for await (const row of iterateCertificateSummaries(store, { status: 'revoked', authorityKeyId: authority.keyIdentifier, expiresAfter: now })) {
          if (this.closed) return summary;
          const id = key(row.authorityKeyId, row.serial);
          if (!fresh.has(id) || this.pending.has(id)) continue;
          const stored = await store.getOcspResponse(row.serial, row.authorityKeyId);
          if (stored === null || !this.responseMatches(stored.body, row)) this.pending.add(id);
        }
        for await (const row of iterateCertificateSummaries(store, { authorityKeyId: authority.keyIdentifier, expiresAfter: now })) {
          if (this.closed) return summary;
          const id = key(row.authorityKeyId, row.serial);
          if (fresh.has(id) && !this.pending.has(id)) continue;
          try {
            await store.upsertOcspResponse(await signOcspForRecord(authority.ocsp, row, { intervalMs: settings.ocspIntervalMs, now }));
            this.pending.delete(id);
            this.ocspSource.invalidate(row.serial, row.authorityKeyId);
            summary.signed++;
          } catch (error) {
            summary.failed++;
            this.pending.add(id);
            if (summary.failed <= 3) this.logger.warn({ err: error, serial: row.serial, aki: row.authorityKeyId }, 'refreshing an OCSP response failed; the next refresh tries again');
          }
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'the OCSP refresh stopped early (the store is unavailable?); the next refresh tries again');
    }
    summary.durationMs = Math.round(performance.now() - started);
    if (summary.signed > 0 || summary.failed > 0) this.logger.info({ ocspRefresh: summary }, 'OCSP responses refreshed');
    return summary;
  }

  /** Stop the schedule and the watch; waits for a refresh in progress to stop. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.subscription?.close();
    await this.refreshing?.catch(() => undefined);
  }
}
