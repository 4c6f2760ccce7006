/**
 * Groups record calls into batches, each written by one transaction — group commit: the first call
 * schedules a flush with `setImmediate` (after the turn's I/O callbacks), every call until then
 * joins it, and while a batch is being written (at most `maxInFlight` at a time) new calls wait and
 * go together into the next one. So concurrent requests that finish signing in the same turn share
 * a transaction, and under load a batch holds everything that arrived during the previous commit:
 * one commit (one fsync, one round trip) serves many certificates instead of each paying its own.
 * Each caller gets its own outcome.
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
   * @param maxBatch items per batch at most (more waiting items are split).
   * @param maxInFlight batches being written at once at most (1: the next batch waits for the commit).
   */
  constructor(
    private readonly flush: (items: In[]) => Promise<Array<BatchOutcome<Out>>>,
    private readonly maxBatch = 500,
    private readonly maxInFlight = 1,
  ) {}

  /** Queue an item; resolves with its outcome once its batch is written. */
  add(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when every item queued so far has been written. */
  async drain(): Promise<void> {
    // Bounded: every pass either waits for a write to finish or lets a scheduled flush start one.
    while (this.scheduled || this.inFlight.size > 0 || this.queue.length > 0) {
      if (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight.size >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushQueue();
    });
  }

  private flushQueue(): void {
    while (this.inFlight.size < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      const done: Promise<void> = this.write(batch).finally(() => {
        this.inFlight.delete(done);
        // What arrived during this write goes out as the next batch.
        this.schedule();
      });
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
