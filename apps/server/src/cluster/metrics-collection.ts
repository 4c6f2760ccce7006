/**
 * `/metrics` under `serve --processes N`: a scrape, in whichever process it arrives, answers every
 * serving process's metrics merged (`renderAggregatedMetrics`, prom-client's
 * `AggregatorRegistry.aggregate`). The leader collects them: it asks each worker process that is
 * ready for a snapshot of its registry and adds its own. A worker that exits or does not answer
 * within {@link SNAPSHOT_TIMEOUT_MS} is left out of that scrape rather than failing it; one that is
 * still starting is not asked.
 */
import type { MetricsSnapshot } from '@certsmith/http-api';
import { SERVE_CHANNEL } from './serve-messages.js';
import type { LeaderMessage } from './serve-messages.js';

/** Longest a scrape waits for one worker's snapshot (a worker busy with a long task answers late). */
export const SNAPSHOT_TIMEOUT_MS = 5_000;

interface Collection<P> {
  waitingFor: Set<P>;
  snapshots: MetricsSnapshot[];
  timer: NodeJS.Timeout;
  done: () => void;
}

/** Collections in progress, finished as the workers' snapshots arrive; `P` is a worker process's handle. */
export class MetricsCollector<P> {
  readonly #collections = new Map<number, Collection<P>>();
  readonly #send: (worker: P, message: LeaderMessage) => void;
  #nextId = 0;

  constructor(send: (worker: P, message: LeaderMessage) => void) {
    this.#send = send;
  }

  /** Every serving process's snapshot: each of `serving` (the workers ready now) and the leader's own. */
  async collect(serving: Iterable<P>, own: () => Promise<MetricsSnapshot>): Promise<MetricsSnapshot[]> {
    const id = this.#nextId++;
    const waitingFor = new Set(serving);
    const snapshots: MetricsSnapshot[] = [];
    const theirs = new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#finish(id), SNAPSHOT_TIMEOUT_MS);
      timer.unref();
      this.#collections.set(id, { waitingFor, snapshots, timer, done: resolve });
    });
    for (const worker of waitingFor) this.#send(worker, { channel: SERVE_CHANNEL, type: 'snapshot-metrics', id });
    if (waitingFor.size === 0) this.#finish(id);
    const mine = await own();
    await theirs;
    return [mine, ...snapshots];
  }

  /** `worker`'s snapshot for collection `id` (`null`: it could not read its metrics). */
  received(worker: P, id: number, snapshot: MetricsSnapshot | null): void {
    const collection = this.#collections.get(id);
    if (collection === undefined || !collection.waitingFor.delete(worker)) return;
    if (snapshot !== null) collection.snapshots.push(snapshot);
    if (collection.waitingFor.size === 0) this.#finish(id);
  }

  /** `worker` exited: no collection waits for it any more. */
  gone(worker: P): void {
    for (const [id, collection] of this.#collections) {
      if (collection.waitingFor.delete(worker) && collection.waitingFor.size === 0) this.#finish(id);
    }
  }

  #finish(id: number): void {
    const collection = this.#collections.get(id);
    if (collection === undefined) return;
    this.#collections.delete(id);
    clearTimeout(collection.timer);
    collection.done();
  }
}
