/**
 * The client side of a remote store: a full {@link Store} whose calls travel a {@link StoreChannel}
 * to the process that owns the store ({@link serveStore}) — in `serve --processes N`, each worker
 * process's store. The store batches the rows of one event-loop turn into one transaction, so the
 * client keeps a turn together too: every call made in one turn travels as one message (flushed
 * with `setImmediate`, like the store's own batcher), and the owner starts them together. Records
 * also wait while a group of records is unanswered and then go together (`record-groups.ts`).
 *
 * A client never hangs: a channel that closes, or an owner that stopped, fails pending and new
 * calls with `StoreUnavailableError` (503 + `Retry-After`) for good. Otherwise two things are told
 * apart, because a store call can be slow while its owner is well (a tidy of a large store, a
 * SQLite thread busy with one): a call not answered within `callTimeoutMs` fails alone; an owner
 * that says nothing at all while calls wait — asked by a probe its server answers without the
 * store — is stuck: every pending call fails, and new calls fail at once until it answers again.
 */
import { randomUUID } from 'node:crypto';
import { issuedCertificateFields, issuedCertificateRow, isIssuedCertificateFields } from '../certificate-row.js';
import { rowToRecord } from '../record-mapping.js';
import type { DbConfig, StoreDriver } from '../db-config.js';
import { StoreClosedError, StoreUnavailableError } from '../errors.js';
import type {
  CertificateChange,
  CertificateCount,
  CertificateJsonPage,
  CertificatePage,
  CertificateRecord,
  CertificateRowInput,
  CertificateSummary,
  ChangeSubscription,
  CountExpiringOptions,
  ExpiringCount,
  ListCertificatesOptions,
  ListOcspResponsesOptions,
  OcspResponseInput,
  OcspResponsePage,
  OcspResponseRecord,
  RecordCertificateInput,
  TidyOptions,
  TidyResult,
  WatchChangesOptions,
} from '../model.js';
import type { Store } from '../store.js';
import type { StoreChannel } from './store-channel.js';
import { STORE_PROTOCOL_VERSION, isStoreMessage } from './store-protocol.js';
import type { CallsMessage, ProtocolMethod, StoreCallMethod, WireCall, WireReply } from './store-protocol.js';
import { DEFAULT_RECORD_GROUPS_IN_FLIGHT, RecordGroups } from './record-groups.js';
import { directRecords } from './direct-records.js';
import type { DirectRecords } from './direct-records.js';
import { errorFromWire } from './wire-errors.js';
import type { WireError } from './wire-errors.js';
import { fromWire, toWire } from './wire-values.js';

/**
 * Default {@link ConnectStoreOptions.callTimeoutMs}: longer than the owner's own limits on a call
 * (PostgreSQL: 5 s to connect plus 10 s per query; SQLite: a 5 s busy timeout), so that a database
 * problem reaches the client as the owner's own error and this timeout only catches an owner that
 * is stuck or gone.
 */
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;

/**
 * Calls without a deadline of their own: `tidy` deletes in batches until done and may run for
 * minutes on a large store (in SQLite's thread, as one task); it waits as long as the owner shows
 * it is alive, and fails only when the owner is stuck or gone.
 */
const UNBOUNDED_CALLS: ReadonlySet<string> = new Set(['tidy']);

/** Options of {@link connectStore}. */
export interface ConnectStoreOptions {
  /**
   * The owner's driver (`store.driver` there), which {@link Store.driver} must name without a
   * round trip. The worker process knows it from the same configuration the owner opened.
   */
  driver: StoreDriver;
  /**
   * A call not answered after this long fails with 503 (`tidy` excepted); an owner silent for this
   * long while calls wait (a probe included) fails them all and new calls until it answers
   * (default {@link DEFAULT_CALL_TIMEOUT_MS}).
   */
  callTimeoutMs?: number;
  /** `retryAfterSeconds` of the 503s the client itself raises (default 1). */
  retryAfterSeconds?: number;
  /**
   * Messages of `recordCertificate` calls sent and not fully answered at most; records made
   * meanwhile wait and go together when one is answered (group commit; default 1).
   */
  maxRecordGroupsInFlight?: number;
  /**
   * The owner's database, as the owner opened it. When it is a SQLite WAL file (not `:memory:`, not
   * read-only), this client commits its issued rows (`recordCertificate`) there itself, on its own
   * connection, and sends the owner only the batches that meet a lock or a failing row
   * (`direct-records.ts`); otherwise, and by default, every call goes to the owner.
   */
  commitIssuedRowsTo?: DbConfig;
}

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /**
   * `Date.now()` after which the call fails, counted from the call (a record waiting for its group
   * counts too); `Infinity` for {@link UNBOUNDED_CALLS}.
   */
  deadline: number;
}

/** A subscription held by the owner for this client. */
interface RemoteWatch {
  onChange: (change: CertificateChange) => void | Promise<void>;
  onError: ((error: Error) => void) | undefined;
  /** The options sent to the owner (those that can be cloned). */
  options: Pick<WatchChangesOptions, 'pollIntervalMs' | 'afterId'>;
  /** `subscribing`: asked; `active`: the owner holds it; `lost`: asking failed while the owner did not answer, ask again when it does. */
  state: 'subscribing' | 'active' | 'lost' | 'closed';
  /** Deliveries run one after the other, in the order the owner sent them. */
  delivering: Promise<void>;
}

/**
 * A {@link Store} whose calls are answered by a {@link serveStore} on the other end of `channel`.
 * `close()` waits for the calls already made, ends this client's subscriptions and releases it on
 * the owner; it never closes the owner's store.
 */
export function connectStore(channel: StoreChannel, options: ConnectStoreOptions): Store {
  return new RemoteStore(channel, options);
}

class RemoteStore implements Store {
  readonly driver: StoreDriver;
  readonly #channel: StoreChannel;
  readonly #session = randomUUID();
  readonly #timeoutMs: number;
  readonly #retryAfterSeconds: number;
  #nextId = 1;
  #queue: WireCall[] = [];
  readonly #records: RecordGroups;
  /** Issued rows committed by this process (`commitIssuedRowsTo`); `null`: they go to the owner. */
  readonly #direct: DirectRecords | null;
  #flushScheduled = false;
  /** In call order: the first entry is the oldest call still waiting. */
  readonly #pending = new Map<number, PendingCall>();
  readonly #watches = new Map<number, RemoteWatch>();
  /** Checks deadlines and the owner's liveness while calls wait (one timer, not one per call). */
  #ticker: NodeJS.Timeout | null = null;
  /** When the owner last sent this client anything (or when the client began waiting on it). */
  #lastHeard = Date.now();
  /** When the liveness probe in flight was sent; `null`: none in flight. */
  #probeSentAt: number | null = null;
  /** Subscriptions to ask for again when the owner next answers. */
  #lostWatches = 0;
  /** Why every call fails for good (the channel closed, the owner stopped). */
  #failure: string | null = null;
  /** Why calls fail until the owner answers again (it said nothing for the timeout, a probe included). */
  #unresponsive: string | null = null;
  #closed = false;
  #closing: Promise<void> | null = null;
  #idleWaiters: Array<() => void> = [];
  readonly #detach: Array<() => void> = [];

  constructor(channel: StoreChannel, options: ConnectStoreOptions) {
    this.driver = options.driver;
    this.#channel = channel;
    this.#timeoutMs = options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    this.#retryAfterSeconds = options.retryAfterSeconds ?? 1;
    this.#records = new RecordGroups(options.maxRecordGroupsInFlight ?? DEFAULT_RECORD_GROUPS_IN_FLIGHT, () => this.#scheduleFlush());
    this.#direct = directRecords(options.commitIssuedRowsTo, {
      // Internal: a batch accepted before close() may still need the owner while the client closes.
      record: (sent) => this.#enqueue('recordCertificate', [sent]).then((issuedAt) => rowToRecord(issuedCertificateRow(sent, issuedAt as Date))),
      checkpoint: () => {
        if (this.#failure === null) this.#sendCalls([{ id: 0, method: 'checkpoint', args: [] }]);
      },
    });
    this.#detach.push(channel.onMessage((message) => this.#receive(message)));
    const stopClose = channel.onClose?.(() => this.#fail('the channel to the certificate store closed'));
    if (stopClose !== undefined) this.#detach.push(stopClose);
  }

  recordCertificate(input: RecordCertificateInput): Promise<CertificateRecord> {
    // Read the certificate here, in the process that signed it: a parsed certificate would lose its
    // class on the way, and the owner (one process for all) then only commits.
    let sent: RecordCertificateInput;
    try {
      sent = isIssuedCertificateFields(input.certificate) ? input : { ...input, certificate: issuedCertificateFields(input.certificate) };
    } catch (error) {
      return Promise.reject(error as Error);
    }
    if (this.#direct !== null) {
      if (this.#closed) return Promise.reject(new StoreClosedError());
      // The channel is gone for good (the owner stopped): as every other call, refused.
      if (this.#failure !== null) return Promise.reject(this.#unavailable(this.#failure));
      return this.#direct.record(sent);
    }
    // The owner answers with the row's issue time only (see serve-store.ts); the record is built
    // here from the same row, exactly as the owner's store built it.
    return this.#call<Date>('recordCertificate', [sent]).then((issuedAt) => rowToRecord(issuedCertificateRow(sent, issuedAt)));
  }

  insertCertificate(row: CertificateRowInput): Promise<void> {
    return this.#call('insertCertificate', [row]);
  }

  getCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null> {
    return this.#call('getCertificate', [serial, authorityKeyId]);
  }

  findCertificate(serial: string, authorityKeyId: string): Promise<CertificateRecord | null> {
    return this.#call('findCertificate', [serial, authorityKeyId]);
  }

  listCertificates(options?: ListCertificatesOptions): Promise<CertificatePage> {
    return this.#call('listCertificates', [options]);
  }

  listCertificateSummaries(options?: ListCertificatesOptions): Promise<CertificatePage<CertificateSummary>> {
    return this.#call('listCertificateSummaries', [options]);
  }

  listCertificatesJson(options?: ListCertificatesOptions, withPem?: boolean): Promise<CertificateJsonPage> {
    return this.#call('listCertificatesJson', [options, withPem]);
  }

  revokeCertificate(serial: string, authorityKeyId: string, reason: number): Promise<CertificateRecord> {
    return this.#call('revokeCertificate', [serial, authorityKeyId, reason]);
  }

  tidy(options?: TidyOptions): Promise<TidyResult> {
    return this.#call('tidy', [options]);
  }

  countCertificates(): Promise<CertificateCount[]> {
    return this.#call('countCertificates', []);
  }

  countExpiring(options?: CountExpiringOptions): Promise<ExpiringCount[]> {
    return this.#call('countExpiring', [options]);
  }

  upsertOcspResponse(response: OcspResponseInput): Promise<void> {
    return this.#call('upsertOcspResponse', [response]);
  }

  getOcspResponse(serial: string, authorityKeyId: string): Promise<OcspResponseRecord | null> {
    return this.#call('getOcspResponse', [serial, authorityKeyId]);
  }

  listOcspResponses(options?: ListOcspResponsesOptions): Promise<OcspResponsePage> {
    return this.#call('listOcspResponses', [options]);
  }

  nextCrlNumber(issuer: string): Promise<bigint> {
    return this.#call('nextCrlNumber', [issuer]);
  }

  ping(): Promise<void> {
    return this.#call('ping', []);
  }

  /**
   * The subscription is held by the owner (its store's watch, polling or LISTENing there) and the
   * changes are pushed here in order; `onChange` runs for one change at a time, as with a local
   * store. `onError` hears the owner's poll failures, and a 503 when the owner cannot be reached.
   */
  watchChanges(onChange: (change: CertificateChange) => void | Promise<void>, options: WatchChangesOptions = {}): ChangeSubscription {
    const id = this.#nextId++;
    const watch: RemoteWatch = {
      onChange,
      onError: options.onError,
      options: {
        ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
        ...(options.afterId === undefined ? {} : { afterId: options.afterId }),
      },
      state: 'subscribing',
      delivering: Promise.resolve(),
    };
    let closing: Promise<void> | null = null;
    if (this.#closed) {
      // As a local store's watch after close(): it reports the closed store and delivers nothing.
      watch.state = 'closed';
      queueMicrotask(() => tell(watch, new StoreClosedError()));
      return { close: async () => undefined };
    }
    this.#watches.set(id, watch);
    this.#subscribe(id, watch);
    return {
      close: () => {
        closing ??= this.#unsubscribe(id, watch);
        return closing;
      },
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#closeClient();
    return this.#closing;
  }

  async #closeClient(): Promise<void> {
    this.#closed = true;
    // As a local store does: calls made before close() finish (a record's certificate may go out).
    await this.#direct?.drain();
    this.#direct?.close();
    if (this.#pending.size > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    await Promise.all([...this.#watches.keys()].map(async (id) => await this.#unsubscribe(id, this.#watches.get(id)!)));
    this.#sendCalls([{ id: 0, method: 'release', args: [] }]);
    for (const detach of this.#detach) detach();
    this.#stopTicker();
  }

  #call<T>(method: StoreCallMethod, args: unknown[]): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return this.#enqueue(method, args) as Promise<T>;
  }

  /** Queue a call for this turn's message. Internal calls (subscriptions) also run while closing. */
  #enqueue(method: StoreCallMethod | ProtocolMethod, args: unknown[]): Promise<unknown> {
    const refusal = this.#failure ?? this.#unresponsive;
    if (refusal !== null) return Promise.reject(this.#unavailable(refusal));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // Deadlines in call order, so the ticker's oldest-first scan can stop at the first in time.
      this.#pending.set(id, { resolve, reject, deadline: UNBOUNDED_CALLS.has(method) ? Infinity : Date.now() + this.#timeoutMs });
      const call: WireCall = { id, method, args: args.map(toWire) };
      if (method === 'recordCertificate') {
        this.#records.hold(call);
        // A record that must wait for a group in flight is sent when that group is answered.
        if (this.#records.canSend) this.#scheduleFlush();
      } else {
        this.#queue.push(call);
        this.#scheduleFlush();
      }
      this.#watchDeadlines();
    });
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled) return;
    this.#flushScheduled = true;
    setImmediate(() => this.#flush());
  }

  #flush(): void {
    this.#flushScheduled = false;
    if (this.#failure !== null) return;
    const records = this.#records.take((id) => this.#pending.has(id));
    const calls = records.length === 0 ? this.#queue : [...this.#queue, ...records];
    if (calls.length === 0) return;
    this.#queue = [];
    this.#sendCalls(calls);
  }

  /** A call waits: keep its deadline and the owner's liveness in view. */
  #watchDeadlines(): void {
    // Silence counts from when the client starts waiting (as the call's deadline does), not from
    // an answer long ago.
    if (this.#ticker === null) this.#lastHeard = Math.max(this.#lastHeard, Date.now());
    this.#startTicker();
  }

  #sendCalls(calls: WireCall[]): void {
    try {
      this.#channel.send({ certsmithStore: STORE_PROTOCOL_VERSION, session: this.#session, calls } satisfies CallsMessage);
    } catch (error) {
      if ((error as Error).name !== 'DataCloneError') {
        this.#fail(`the channel to the certificate store failed: ${(error as Error).message}`);
      } else if (calls.length > 1) {
        // One call's arguments cannot be cloned: it fails alone, the others go.
        for (const call of calls) this.#sendCalls([call]);
      } else if (calls[0] !== undefined) {
        const error_ = new TypeError(`the arguments of ${calls[0].method} cannot be sent to the certificate store: ${(error as Error).message}`);
        this.#settle(calls[0].id)?.reject(error_);
      }
    }
  }

  #receive(message: unknown): void {
    if (!isStoreMessage(message) || this.#failure !== null) return;
    if (message.stopped === true) {
      this.#fail('the certificate store stopped serving this process');
      return;
    }
    if (message.session !== this.#session || !Array.isArray(message.replies)) return;
    this.#heard();
    for (const reply of message.replies as WireReply[]) {
      if ('watch' in reply) this.#deliver(reply);
      else if (reply.ok) this.#settle(reply.id)?.resolve(fromWire(reply.value));
      else this.#settle(reply.id)?.reject(errorFromWire(reply.error));
    }
  }

  /** Take a call out of the pending set (`undefined` when it already failed), waking `close()` when none is left. */
  #settle(id: number): PendingCall | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    this.#records.settled(id);
    if (this.#pending.size === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
    return pending;
  }

  /** The owner said something: it is alive; subscriptions it could not take are asked for again. */
  #heard(): void {
    this.#lastHeard = Date.now();
    this.#probeSentAt = null;
    this.#unresponsive = null;
    if (this.#lostWatches === 0) return;
    this.#lostWatches = 0;
    for (const [id, watch] of this.#watches) if (watch.state === 'lost') this.#subscribe(id, watch);
  }

  #startTicker(): void {
    if (this.#ticker !== null || this.#failure !== null) return;
    // A quarter of the timeout (at most 1 s): deadlines are kept to that precision, at one timer
    // callback per period while calls wait — none while idle.
    this.#ticker = setTimeout(() => this.#tick(), Math.max(5, Math.min(1000, this.#timeoutMs / 4)));
    // A store nobody waits on must not keep a process alive.
    this.#ticker.unref();
  }

  #stopTicker(): void {
    if (this.#ticker !== null) clearTimeout(this.#ticker);
    this.#ticker = null;
  }

  #tick(): void {
    this.#ticker = null;
    if (this.#failure !== null) return;
    const now = Date.now();
    const half = this.#timeoutMs / 2;
    if (this.#probeSentAt !== null && now - this.#probeSentAt >= half) {
      // Silent for half the timeout, then the probe unanswered for the other half: stuck or gone.
      this.#probeSentAt = null;
      const first = this.#unresponsive === null;
      this.#unresponsive = `the certificate store did not answer for ${this.#timeoutMs} ms`;
      this.#rejectAll(this.#unresponsive);
      if (first) this.#reportToWatches(this.#unresponsive);
    }
    // Calls past their deadline, oldest first: deadlines follow call order, so the first one still
    // in time ends the search (unbounded ones are passed over).
    for (const [id, pending] of this.#pending) {
      if (pending.deadline === Infinity) continue;
      if (pending.deadline > now) break;
      this.#settle(id)?.reject(this.#unavailable(`the certificate store did not answer within ${this.#timeoutMs} ms`));
    }
    const waiting = this.#pending.size > 0 || this.#unresponsive !== null;
    if (waiting && this.#probeSentAt === null && now - this.#lastHeard >= half) {
      // Answered by the owner's server at once, without the store: a slow store call does not delay it.
      this.#probeSentAt = now;
      this.#sendCalls([{ id: 0, method: 'alive', args: [] }]);
    }
    if (waiting) this.#startTicker();
  }

  /** The channel or the owner is gone for good. */
  #fail(reason: string): void {
    if (this.#failure !== null) return;
    this.#failure = reason;
    this.#queue = [];
    this.#records.clear();
    this.#rejectAll(reason);
    this.#reportToWatches(reason);
    this.#stopTicker();
  }

  #rejectAll(reason: string): void {
    this.#queue = [];
    this.#records.clear();
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(this.#unavailable(reason));
  }

  #reportToWatches(reason: string): void {
    for (const watch of this.#watches.values()) if (watch.state !== 'closed') tell(watch, this.#unavailable(reason));
  }

  #unavailable(reason: string): StoreUnavailableError {
    return new StoreUnavailableError(reason, { retryAfterSeconds: this.#retryAfterSeconds });
  }

  #subscribe(id: number, watch: RemoteWatch): void {
    watch.state = 'subscribing';
    this.#enqueue('watch', [id, watch.options]).then(
      () => {
        if (watch.state === 'subscribing') watch.state = 'active';
      },
      (error: Error) => {
        if (watch.state !== 'subscribing') return;
        // Unanswered: ask again once the owner answers (the owner ignores a second ask for the same id).
        const lost = this.#failure === null && error instanceof StoreUnavailableError;
        watch.state = lost ? 'lost' : 'closed';
        if (lost) this.#lostWatches += 1;
        tell(watch, error);
      },
    );
  }

  async #unsubscribe(id: number, watch: RemoteWatch): Promise<void> {
    if (watch.state === 'closed' && !this.#watches.has(id)) return await watch.delivering;
    const held = watch.state !== 'closed' && watch.state !== 'lost';
    watch.state = 'closed';
    this.#watches.delete(id);
    // After this no change is delivered (as a local watch stops at close); the owner's answer to
    // `unwatch` comes after every change it pushed, so none is left in flight either.
    if (held) await this.#enqueue('unwatch', [id]).catch(() => undefined);
    await watch.delivering;
  }

  #deliver(reply: { watch: number; change: unknown } | { watch: number; error: WireError }): void {
    const watch = this.#watches.get(reply.watch);
    if (watch === undefined || watch.state === 'closed') return;
    if ('error' in reply) {
      tell(watch, errorFromWire(reply.error));
      return;
    }
    const change = fromWire(reply.change) as CertificateChange;
    watch.delivering = watch.delivering
      .then(async () => {
        if (watch.state !== 'closed') await watch.onChange(change);
      })
      .catch((error: unknown) => tell(watch, error instanceof Error ? error : new Error(String(error))));
  }
}

/**
 * Give a subscription's `onError` an error. It runs inside the channel's message handler or a
 * timer: an `onError` that throws must not end the process, and it has nobody else to tell.
 */
function tell(watch: RemoteWatch, error: Error): void {
  try {
    watch.onError?.(error);
  } catch {
    // Nothing to do: the error was the subscriber's to handle.
  }
}
