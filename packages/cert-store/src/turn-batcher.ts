/**
 * Groups the calls made during one event-loop turn into one batch: the first call of a turn
 * schedules a flush with `setImmediate` (which runs after the turn's I/O callbacks), and every call
 * until then joins it. Each caller gets its own outcome. Concurrent requests that finish signing
 * in the same turn are thus recorded by one transaction.
 */

/** The outcome of one item of a batch. */
export type BatchOutcome<Out> = { ok: true; value: Out } | { ok: false; error: Error };

interface Pending<In, Out> {
  item: In;
  resolve: (value: Out) => void;
  reject: (error: Error) => void;
}

export class TurnBatcher<In, Out> {
  private queue: Array<Pending<In, Out>> = [];
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  /**
   * @param flush writes one batch; returns one outcome per item in order, or throws to fail them all.
   * @param maxBatch items per batch at most (a turn with more is split).
   */
  constructor(
    private readonly flush: (items: In[]) => Promise<Array<BatchOutcome<Out>>>,
    private readonly maxBatch = 500,
  ) {}

  /** Queue an item; resolves with its outcome once its batch is written. */
  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flushQueue());
      }
    });
  }

  /** Resolves when every batch queued so far has been written. */
  async drain(): Promise<void> {
    if (this.scheduled) await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private flushQueue(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    for (let start = 0; start < queue.length; start += this.maxBatch) {
      const batch = queue.slice(start, start + this.maxBatch);
      const done = this.write(batch).finally(() => this.inFlight.delete(done));
      this.inFlight.add(done);
    }
  }

  private async write(batch: Array<Pending<In, Out>>): Promise<void> {
    let outcomes: Array<BatchOutcome<Out>>;
    try {
      outcomes = await this.flush(batch.map((p) => p.item));
    } catch (error) {
      for (const p of batch) p.reject(error as Error);
      return;
    }
    batch.forEach((p, i) => {
      const outcome = outcomes[i];
      if (outcome === undefined) p.reject(new Error('the batch writer returned fewer outcomes than items'));
      else if (outcome.ok) p.resolve(outcome.value);
      else p.reject(outcome.error);
    });
  }
}
