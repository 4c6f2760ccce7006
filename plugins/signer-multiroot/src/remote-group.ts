/**
 * An ordered failover group of remotes (CFSSL's `ordered_list`, behaviour doc 4.4) with one
 * keep-alive undici pool per remote and back-off memory. Order of attempts for one call: remotes
 * that are up, in configured order; then remotes marked down, as a last resort, so a total outage
 * still recovers on the first call after a remote returns instead of waiting out its back-off.
 *
 * Failover rules: an attempt that provably never wrote the request (see `http-exchange.ts`) moves
 * on to the next remote. An attempt that may have reached the remote stops the call, unless the
 * caller says the request is idempotent (`/info`), because a remote that received a sign request
 * may have signed it. Any HTTP answer, even an error, ends the call: the remote is reachable and
 * its answer is the answer.
 */
import type { SignerLogger } from '@certsmith/signer-api';
import { SignerUnavailableError } from '@certsmith/signer-api';
import { ErrorCode } from '@certsmith/x509-core';
import { Pool } from 'undici';

import type { BackoffPolicy, RemoteState } from './backoff.js';
import { RemoteBackoff } from './backoff.js';
import type { RemoteFailure } from './errors.js';
import { RemoteSignerError, RemoteTransportError, RemoteUnreachableError } from './errors.js';
import type { HttpAnswer } from './http-exchange.js';
import { ExchangeError, postOnce } from './http-exchange.js';
import type { RemoteAddress } from './remote-address.js';

/** TLS material for https remotes (PEM texts). */
export interface RemoteTlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Settings of a {@link RemoteGroup}. */
export interface RemoteGroupOptions {
  remotes: readonly RemoteAddress[];
  timeoutMs: number;
  connectTimeoutMs: number;
  backoff: BackoffPolicy;
  connections: number;
  tls?: RemoteTlsOptions;
  logger: SignerLogger;
  /** Largest answer kept, in bytes (default 1 MiB: a certificate is a few KiB). */
  maxResponseBytes?: number;
  /** Clock for back-off, epoch ms (tests); budgets always use the monotonic clock. */
  now?: () => number;
}

/** What one call asks of the group. */
export interface GroupRequest {
  /** Path under the remote's base path, e.g. `/api/v1/cfssl/authsign`. */
  path: string;
  body: string;
  /** True when sending twice is harmless (`/info`): then failover also follows possibly-sent failures. */
  idempotent: boolean;
  /** Budget override in ms (health probes); defaults to the group's timeout. */
  timeoutMs?: number;
}

/** An answer and who gave it. */
export interface GroupAnswer {
  remote: string;
  answer: HttpAnswer;
}

interface Member {
  address: RemoteAddress;
  pool: Pool;
  backoff: RemoteBackoff;
}

const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;

// Our deadline, or undici's own header/body timers when they happen to fire first.
const isTimeout = (reason: string): boolean => reason === 'deadline' || reason === 'UND_ERR_HEADERS_TIMEOUT' || reason === 'UND_ERR_BODY_TIMEOUT';

/** The failover group; see the module comment for the rules. */
export class RemoteGroup {
  readonly #members: readonly Member[];
  readonly #options: RemoteGroupOptions;
  readonly #now: () => number;
  #closed = false;

  constructor(options: RemoteGroupOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#members = options.remotes.map((address) => ({
      address,
      backoff: new RemoteBackoff(address.url, options.backoff),
      pool: new Pool(address.origin, {
        connections: options.connections,
        // keep-alive is undici's default; pipelining stays at 1 so one slow signature never
        // delays another request queued behind it on the same socket.
        pipelining: 1,
        connect: {
          timeout: options.connectTimeoutMs,
          ...(address.scheme === 'https' && options.tls ? options.tls : {}),
        },
      }),
    }));
  }

  /** Remote URLs in configured order. */
  get remotes(): string[] {
    return this.#members.map((member) => member.address.url);
  }

  /** Back-off state of every remote. */
  states(): RemoteState[] {
    const now = this.#now();
    return this.#members.map((member) => member.backoff.state(now));
  }

  /**
   * Send `request` following the failover rules. Resolves with the first HTTP answer; rejects with
   * {@link RemoteTransportError} (7300) when a possibly-sent attempt failed on a non-idempotent
   * request, {@link RemoteUnreachableError} (6000) when no remote could be reached within the budget,
   * {@link RemoteSignerError} (7400) when an answer was too large, 2500 once closed.
   */
  async post(request: GroupRequest): Promise<GroupAnswer> {
    if (this.#closed) throw new SignerUnavailableError('signer is closed');
    const budget = request.timeoutMs ?? this.#options.timeoutMs;
    // Budgets run on the monotonic clock; the injectable clock only drives back-off.
    const deadline = performance.now() + budget;
    const now = this.#now();
    const up = this.#members.filter((member) => !member.backoff.isDown(now));
    const down = this.#members.filter((member) => member.backoff.isDown(now));
    const failures: RemoteFailure[] = [];
    const candidates = [...up, ...down];
    for (const [index, member] of candidates.entries()) {
      const remaining = Math.ceil(deadline - performance.now());
      const url = member.address.url;
      if (remaining <= 0) {
        failures.push({ remote: url, reason: `not tried, ${budget} ms budget spent` });
        continue;
      }
      // A sign attempt gets all that is left: once written it is the only attempt. An idempotent
      // request shares the budget so that a hanging remote leaves time for the next one.
      const attemptMs = request.idempotent ? Math.ceil(remaining / (candidates.length - index)) : remaining;
      try {
        const answer = await postOnce(member.pool, `${member.address.basePath}${request.path}`, request.body, {
          timeoutMs: attemptMs,
          maxResponseBytes: this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
        });
        this.#recordSuccess(member);
        return { remote: url, answer };
      } catch (error) {
        if (!(error instanceof ExchangeError)) throw error;
        const { failure } = error;
        if (failure.tooLarge) {
          this.#recordSuccess(member);
          throw new RemoteSignerError(ErrorCode.ApiClientHttpError, `remote ${url} answered with more than ${this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES} bytes`, {
            remote: url,
            status: 0,
          });
        }
        this.#recordFailure(member, failure.reason);
        if (failure.mayHaveBeenSent && !request.idempotent) {
          const what = isTimeout(failure.reason) ? `did not answer within ${attemptMs} ms` : `failed after the request was sent (${failure.reason})`;
          throw new RemoteTransportError(url, failure.reason, `remote ${url} ${what}; not retried on another remote because it may have signed`, {
            cause: failure.cause,
          });
        }
        failures.push({ remote: url, reason: isTimeout(failure.reason) ? `no answer within ${attemptMs} ms` : failure.reason });
      }
    }
    throw new RemoteUnreachableError(failures);
  }

  /**
   * Send `request` to every remote at once, ignoring back-off (health probes). Answers and
   * transport failures update the back-off state, so a probe can bring a remote back early.
   */
  async probe(request: GroupRequest): Promise<Array<{ remote: string; answer: HttpAnswer | null; reason: string | null }>> {
    if (this.#closed) throw new SignerUnavailableError('signer is closed');
    const timeoutMs = request.timeoutMs ?? this.#options.timeoutMs;
    const maxResponseBytes = this.#options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    return await Promise.all(
      this.#members.map(async (member) => {
        const remote = member.address.url;
        try {
          const answer = await postOnce(member.pool, `${member.address.basePath}${request.path}`, request.body, { timeoutMs, maxResponseBytes });
          this.#recordSuccess(member);
          return { remote, answer, reason: null };
        } catch (error) {
          if (!(error instanceof ExchangeError)) throw error;
          if (error.failure.tooLarge) this.#recordSuccess(member);
          else this.#recordFailure(member, error.failure.reason);
          return { remote, answer: null, reason: error.failure.reason };
        }
      }),
    );
  }

  /** Close every pool (in-flight requests finish first); idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#members.map((member) => member.pool.close().catch(() => undefined)));
  }

  #recordSuccess(member: Member): void {
    if (member.backoff.recordSuccess()) this.#options.logger.info('remote signer is answering again', { remote: member.address.url });
  }

  #recordFailure(member: Member, reason: string): void {
    const period = member.backoff.recordFailure(this.#now());
    if (period !== null) this.#options.logger.warn('remote signer marked down', { remote: member.address.url, reason, retryInMs: period });
  }
}
