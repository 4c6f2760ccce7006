/**
 * The primary's side of `/metrics` under `serve --processes N`: a worker process that got a scrape
 * asks for every serving process's metrics; the primary asks each worker that listens for a snapshot
 * of its registry, adds its own ({@link primaryProcessMetrics}) and sends them all to the worker that
 * asked, which merges them (`renderAggregatedMetrics`, prom-client's `AggregatorRegistry.aggregate`).
 * A worker that exits or does not answer within {@link SNAPSHOT_TIMEOUT_MS} is left out of that
 * scrape rather than failing it; one that is still starting is not asked.
 */
import type { Worker } from 'node:cluster';
import type { MetricsSnapshot } from '@certsmith/http-api';
import { primaryProcessMetrics } from './primary-process-metrics.js';
import { SERVE_CHANNEL } from './serve-messages.js';
import type { PrimaryMessage } from './serve-messages.js';

/** Longest a scrape waits for one worker's snapshot (a worker busy with a long task answers late). */
export const SNAPSHOT_TIMEOUT_MS = 5_000;

interface Collection {
  requester: Worker;
  requestId: number;
  waitingFor: Set<Worker>;
  snapshots: MetricsSnapshot[];
  timer: NodeJS.Timeout;
}

/** Collections in progress, answered as the workers' snapshots arrive. */
export class MetricsCollector {
  readonly #collections = new Map<number, Collection>();
  readonly #send: (worker: Worker, message: PrimaryMessage) => void;
  #nextId = 0;

  constructor(send: (worker: Worker, message: PrimaryMessage) => void) {
    this.#send = send;
  }

  /** `requester` asked (its `requestId`); `serving` are the workers that listen now. */
  collect(requester: Worker, requestId: number, serving: Iterable<Worker>): void {
    const id = this.#nextId++;
    const waitingFor = new Set(serving);
    const timer = setTimeout(() => this.#finish(id), SNAPSHOT_TIMEOUT_MS);
    timer.unref();
    this.#collections.set(id, { requester, requestId, waitingFor, snapshots: [], timer });
    for (const worker of waitingFor) this.#send(worker, { channel: SERVE_CHANNEL, type: 'snapshot-metrics', id });
    if (waitingFor.size === 0) this.#finish(id);
  }

  /** `worker`'s snapshot for collection `id` (`null`: it could not read its metrics). */
  received(worker: Worker, id: number, snapshot: MetricsSnapshot | null): void {
    const collection = this.#collections.get(id);
    if (collection === undefined || !collection.waitingFor.delete(worker)) return;
    if (snapshot !== null) collection.snapshots.push(snapshot);
    if (collection.waitingFor.size === 0) this.#finish(id);
  }

  /** `worker` exited: no collection waits for it any more. */
  gone(worker: Worker): void {
    for (const [id, collection] of this.#collections) {
      if (collection.waitingFor.delete(worker) && collection.waitingFor.size === 0) this.#finish(id);
    }
  }

  #finish(id: number): void {
    const collection = this.#collections.get(id);
    if (collection === undefined) return;
    this.#collections.delete(id);
    clearTimeout(collection.timer);
    const snapshots = [...collection.snapshots, primaryProcessMetrics()];
    this.#send(collection.requester, { channel: SERVE_CHANNEL, type: 'metrics-collected', id: collection.requestId, snapshots });
  }
}
