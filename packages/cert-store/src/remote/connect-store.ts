/**
 * The client side of a remote store: a full {@link Store} whose calls travel a {@link StoreChannel}
 * to the process that owns the store ({@link serveStore}) — in `serve --processes N`, each worker
 * process's store. The store batches the rows of one event-loop turn into one transaction, so the
 * client keeps a turn together too: every call made in one turn travels as one message (flushed
 * with `setImmediate`, like the store's own batcher), and the owner starts them together.
 *
 * A client never hangs: a channel that closes, or an owner that stopped, fails pending and new
 * calls with `StoreUnavailableError` (503 + `Retry-After`) for good; an owner that does not answer
 * a call within `callTimeoutMs` fails every pending call with it and answers new calls with it at
 * once — while one probe per timeout checks the owner — until the owner answers again.
 */
import { randomUUID } from 'node:crypto';
import { issuedCertificateFields, issuedCertificateRow, isIssuedCertificateFields } from '../certificate-row.js';
import { rowToRecord } from '../record-mapping.js';
import type { StoreDriver } from '../db-config.js';
import { StoreClosedError, StoreUnavailableError } from '../errors.js';
import type {
  CertificateChange,
  CertificateCount,
  CertificatePage,
  CertificateRecord,
  CertificateRowInput,
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

/** Options of {@link connectStore}. */
export interface ConnectStoreOptions {
  /**
   * The owner's driver (`store.driver` there), which {@link Store.driver} must name without a
   * round trip. The worker process knows it from the same configuration the owner opened.
   */
  driver: StoreDriver;
  /** A call the owner has not answered after this long fails with 503 (default {@link DEFAULT_CALL_TIMEOUT_MS}). */
  callTimeoutMs?: number;
  /** `retryAfterSeconds` of the 503s the client itself raises (default 1). */
  retryAfterSeconds?: number;
}

interface PendingCall {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  /** `Date.now()` after which the owner counts as not answering; 0 until the call is sent. */
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
  #flushScheduled = false;
  /** In send order: the first entry is the oldest call still waiting. */
  readonly #pending = new Map<number, PendingCall>();
  readonly #watches = new Map<number, RemoteWatch>();
  #timer: NodeJS.Timeout | null = null;
  /** Why every call fails for good (the channel closed, the owner stopped). */
  #failure: string | null = null;
  /** Why calls fail until the owner answers again (it let a call go unanswered past the timeout). */
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
    this.#watches.set(id, watch);
    this.#subscribe(id, watch);
    let closing: Promise<void> | null = null;
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
    if (this.#pending.size > 0) await new Promise<void>((resolve) => this.#idleWaiters.push(resolve));
    await Promise.all([...this.#watches.keys()].map(async (id) => await this.#unsubscribe(id, this.#watches.get(id)!)));
    this.#sendCalls([{ id: 0, method: 'release', args: [] }]);
    for (const detach of this.#detach) detach();
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #call<T>(method: StoreCallMethod, args: unknown[]): Promise<T> {
    if (this.#closed) return Promise.reject(new StoreClosedError());
    return this.#enqueue(method, args) as Promise<T>;
  }

  /**
   * Queue a call for this turn's message. Internal calls (subscriptions) also run while closing; a
   * `probe` also goes while the owner is not answering.
   */
  #enqueue(method: StoreCallMethod | ProtocolMethod, args: unknown[], probe = false): Promise<unknown> {
    const refusal = this.#failure ?? (probe ? null : this.#unresponsive);
    if (refusal !== null) return Promise.reject(this.#unavailable(refusal));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, deadline: 0 });
      this.#queue.push({ id, method, args: args.map(toWire) });
      if (!this.#flushScheduled) {
        this.#flushScheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#flushScheduled = false;
    const calls = this.#queue;
    if (calls.length === 0) return;
    this.#queue = [];
    const deadline = Date.now() + this.#timeoutMs;
    for (const call of calls) {
      const pending = this.#pending.get(call.id);
      if (pending !== undefined) pending.deadline = deadline;
    }
    this.#sendCalls(calls);
    this.#armTimer();
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
    if (this.#unresponsive !== null) this.#recovered();
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
    if (this.#pending.size === 0 && this.#idleWaiters.length > 0) {
      const waiters = this.#idleWaiters;
      this.#idleWaiters = [];
      for (const wake of waiters) wake();
    }
    return pending;
  }

  /**
   * One timer for all calls, set for the oldest: calls are sent in order, so when the oldest has
   * been answered in time the next deadline is later (no timer per call on the hot path).
   */
  #armTimer(): void {
    if (this.#timer !== null) return;
    const oldest = this.#pending.values().next().value;
    if (oldest === undefined || oldest.deadline === 0) return;
    this.#timer = setTimeout(() => this.#onTimer(), Math.max(0, oldest.deadline - Date.now()));
    // A store nobody waits on must not keep a process alive.
    this.#timer.unref();
  }

  #onTimer(): void {
    this.#timer = null;
    if (this.#failure !== null) return;
    const oldest = this.#pending.values().next().value;
    if (oldest === undefined || oldest.deadline === 0) return;
    if (oldest.deadline > Date.now()) {
      this.#armTimer();
      return;
    }
    const first = this.#unresponsive === null;
    this.#unresponsive = `the certificate store did not answer within ${this.#timeoutMs} ms`;
    this.#rejectAll(this.#unresponsive);
    if (first) this.#reportToWatches(this.#unresponsive);
    // Probe: any answer from the owner ends the refusal (late answers to the failed calls do too);
    // while there is none, this probe times out in turn and the next one goes.
    this.#enqueue('ping', [], true).catch(() => undefined);
  }

  #recovered(): void {
    this.#unresponsive = null;
    for (const [id, watch] of this.#watches) if (watch.state === 'lost') this.#subscribe(id, watch);
  }

  /** The channel or the owner is gone for good. */
  #fail(reason: string): void {
    if (this.#failure !== null) return;
    this.#failure = reason;
    this.#queue = [];
    this.#rejectAll(reason);
    this.#reportToWatches(reason);
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #rejectAll(reason: string): void {
    this.#queue = [];
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(this.#unavailable(reason));
  }

  #reportToWatches(reason: string): void {
    for (const watch of this.#watches.values()) if (watch.state !== 'closed') watch.onError?.(this.#unavailable(reason));
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
        watch.state = this.#failure === null && this.#unresponsive !== null ? 'lost' : 'closed';
        watch.onError?.(error);
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
      watch.onError?.(errorFromWire(reply.error));
      return;
    }
    const change = fromWire(reply.change) as CertificateChange;
    watch.delivering = watch.delivering
      .then(async () => {
        if (watch.state !== 'closed') await watch.onChange(change);
      })
      .catch((error: unknown) => watch.onError?.(error instanceof Error ? error : new Error(String(error))));
  }
}
