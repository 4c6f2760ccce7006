/**
 * Per-remote down marks with exponential back-off. A remote whose dial failed is skipped for a
 * while so every request does not pay a refused connection (or a connect timeout) before failing
 * over; when the period ends the remote is tried first again (it is earlier in the configured
 * order), and a failure of that probe doubles the period up to a cap. CFSSL's ordered list has no
 * such memory (it retries every remote on every call, behaviour doc 4.4).
 */

/** Back-off settings. */
export interface BackoffPolicy {
  /** First down period after a failure, in ms. */
  initialMs: number;
  /** Longest down period, in ms. */
  maxMs: number;
}

/** Observable state of one remote. */
export interface RemoteState {
  remote: string;
  /** True while the remote is skipped (except as a last resort). */
  down: boolean;
  /** Failures since the remote last answered. */
  consecutiveFailures: number;
  /** Epoch ms when the down period ends (0 when up). */
  downUntil: number;
}

/** Down-mark bookkeeping of one remote; time comes from the caller so tests need no fake timers. */
export class RemoteBackoff {
  readonly remote: string;
  readonly #policy: BackoffPolicy;
  #failures = 0;
  #downUntil = 0;

  constructor(remote: string, policy: BackoffPolicy) {
    this.remote = remote;
    this.#policy = policy;
  }

  /** True while the down period lasts. */
  isDown(now: number): boolean {
    return now < this.#downUntil;
  }

  /**
   * Record a failed exchange; returns the new down period in ms, or `null` when the remote was
   * already marked down. Concurrent requests that fail against the same outage must not escalate
   * the period once each: only a failure after the period ended (the probe) doubles it.
   */
  recordFailure(now: number): number | null {
    if (this.isDown(now)) return null;
    this.#failures += 1;
    const period = Math.min(this.#policy.maxMs, this.#policy.initialMs * 2 ** Math.min(this.#failures - 1, 30));
    this.#downUntil = now + period;
    return period;
  }

  /** Record an answer (any HTTP answer proves the remote is reachable); returns true if it was failing. */
  recordSuccess(): boolean {
    const wasFailing = this.#failures > 0;
    this.#failures = 0;
    this.#downUntil = 0;
    return wasFailing;
  }

  /** Snapshot for health reports. */
  state(now: number): RemoteState {
    return { remote: this.remote, down: this.isDown(now), consecutiveFailures: this.#failures, downUntil: this.#downUntil };
  }
}
