/**
 * A counting semaphore with a FIFO queue: it bounds how many signatures are inside the token at
 * once (`maxConcurrency`). HSMs have a fixed number of crypto engines and sessions; queueing here
 * keeps requests in arrival order instead of letting the token answer `CKR_SESSION_COUNT`.
 */

/** A FIFO counting semaphore. */
export class Semaphore {
  private available: number;
  private readonly waiters: Array<() => void> = [];

  /** @param permits how many holders may run at once (≥ 1). */
  constructor(permits: number) {
    if (!Number.isInteger(permits) || permits < 1) throw new RangeError(`permits must be a positive integer, got ${permits}`);
    this.available = permits;
  }

  /** Wait for a permit. Every resolved `acquire` must be paired with one {@link Semaphore.release}. */
  acquire(): Promise<void> {
    if (this.available > 0) {
      this.available--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Return a permit, handing it straight to the longest waiter when there is one. */
  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.available++;
  }

  /** Run `task` while holding a permit. */
  async use<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /** Callers currently waiting for a permit. */
  get pending(): number {
    return this.waiters.length;
  }
}
