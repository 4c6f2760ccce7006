/**
 * The pool's worker threads: starts `size` of them, replaces those that go (at once, or after a
 * back-off while starts keep failing), tells when the first ones are ready or cannot start, and
 * stops them all on close.
 */
import { WorkerStartError } from './errors.js';
import type { PooledTask } from './pooled-task.js';
import type { TaskOutcome } from './protocol.js';
import { WorkerHandle } from './worker-handle.js';
import type { WorkerStart } from './worker-handle.js';
import type { PrestartedWorkers } from './prestarted-workers.js';

/** What the set reports to its pool. */
export interface WorkerSetEvents {
  /** A worker can take a batch (it became ready, or answered its batch). */
  free(): void;
  /** A batch was answered: `outcomes[i]` for `items[i]`, `null` when it comes late. */
  answered(items: readonly PooledTask[], outcomes: readonly (TaskOutcome | null)[]): void;
  /** A task answered late has settled. */
  late(item: PooledTask, outcome: TaskOutcome): void;
  /** A worker's thread is gone while it owed `owed` (a replacement is already on its way). */
  exited(handle: WorkerHandle, owed: PooledTask[], cause: Error): void;
  /** The pool's first workers cannot start: `owed` (if any) and everything waiting must fail with `error`. */
  startFailed(error: Error, owed: PooledTask[]): void;
  /** A pool-level failure for the log (`onError`). */
  report(error: unknown): void;
}

/** Longest the set waits for stopped threads to exit (one blocked in native code never does). */
const EXIT_WAIT_MS = 2_000;

/** The worker threads of one pool. */
export class WorkerSet {
  /** Set when the first workers could not start: every task fails with it. */
  startFailure: Error | null = null;
  /** Resolves once the first `size` workers are ready; rejects with {@link startFailure}. */
  readonly ready: Promise<void>;
  /** Workers that take batches (not retired, not exited), in start order. */
  private live: WorkerHandle[] = [];
  /** Every thread not yet exited, retired ones included. */
  private readonly threads = new Set<WorkerHandle>();
  /** Whether some worker has ever become ready (a later start failure is not the pool's). */
  private proven = false;
  private readyCount = 0;
  private respawnDelayMs = 0;
  private referenced = false;
  private stopped = false;
  /** Where the search for a free worker starts, so that work spreads over the workers. */
  private nextWorker = 0;
  private markReady: () => void = () => undefined;
  private markFailed: (error: Error) => void = () => undefined;

  constructor(
    private readonly size: number,
    private readonly start: WorkerStart,
    private readonly events: WorkerSetEvents,
    prestarted?: PrestartedWorkers,
  ) {
    this.ready = new Promise<void>((resolve, reject) => {
      this.markReady = resolve;
      this.markFailed = reject;
    });
    // Nobody may ever ask: an unobserved rejection must not end the process.
    this.ready.catch(() => undefined);
    // No thread to wait for (a pool of size 0 runs its tasks on the calling thread): `stop` must not
    // wait for starts that never come.
    if (size === 0) this.markReady();
    for (let index = 0; index < size; index += 1) this.startWorker(prestarted);
    // Threads started for a bigger pool, or otherwise (other flags): not needed.
    void prestarted?.stop();
  }

  /** Whether a worker has become ready since the pool started. */
  get started(): boolean {
    return this.proven;
  }

  /** Workers that can take a batch now, the search starting at a rotating position. */
  free(): WorkerHandle[] {
    const free = this.live.filter((handle) => handle.free);
    if (free.length > 1) {
      this.nextWorker = (this.nextWorker + 1) % free.length;
      return [...free.slice(this.nextWorker), ...free.slice(0, this.nextWorker)];
    }
    return free;
  }

  /** Workers that take batches. */
  workers(): readonly WorkerHandle[] {
    return this.live;
  }

  /** Every thread that may still owe tasks (retired ones until they exit). */
  owners(): Iterable<WorkerHandle> {
    return this.threads;
  }

  /** Stop sending `handle` work, end its thread and start another worker in its place. */
  retire(handle: WorkerHandle): void {
    handle.retire();
    this.live = this.live.filter((candidate) => candidate !== handle);
    this.replace(handle);
  }

  /** Keep the process alive while tasks are pending (an idle pool does not). */
  reference(on: boolean): void {
    if (on === this.referenced) return;
    this.referenced = on;
    for (const handle of this.threads) handle.reference(on);
  }

  /**
   * Stop every thread and wait (briefly) until they have exited. Waits first, up to `startingWaitMs`,
   * for the first workers to finish starting: terminating a worker in the middle of starting was the
   * likely cause of one SIGABRT at shutdown right after start-up in CI (not reproduced locally).
   */
  async stop(startingWaitMs: number): Promise<void> {
    await within(
      this.ready.catch(() => undefined),
      startingWaitMs,
    );
    this.stopped = true;
    const stopping = [...this.threads];
    for (const handle of stopping) handle.retire();
    this.live = [];
    await within(Promise.all(stopping.map((handle) => handle.gone)), EXIT_WAIT_MS);
  }

  private startWorker(prestarted?: PrestartedWorkers): void {
    const handle = new WorkerHandle(
      this.start,
      {
      ready: (ready) => {
        this.proven = true;
        this.respawnDelayMs = 0;
        if (ready.retired) return;
        this.readyCount += 1;
        if (this.readyCount >= this.size) this.markReady();
        this.events.free();
      },
      answered: (_handle, items, outcomes) => {
        this.events.answered(items, outcomes);
        this.events.free();
      },
      late: (_handle, item, outcome) => this.events.late(item, outcome),
      exited: (gone, owed, cause) => this.exited(gone, owed, cause),
    }, prestarted?.take(this.start));
    this.live.push(handle);
    this.threads.add(handle);
    if (this.referenced) handle.reference(true);
  }

  private exited(handle: WorkerHandle, owed: PooledTask[], cause: Error): void {
    this.threads.delete(handle);
    const wasLive = this.live.includes(handle);
    this.live = this.live.filter((candidate) => candidate !== handle);
    if (!this.proven && !this.stopped && this.startFailure === null) return this.failStart(cause, owed);
    // What it owed is reported with the tasks; a thread that ended on its own while it owed nothing
    // (an uncaught exception in a timer, a replacement whose init hook fails now) is reported here.
    if (!handle.retired && !owed.some((item) => item.state !== 'settled')) this.events.report(cause);
    if (wasLive) this.replace(handle);
    this.events.exited(handle, owed, cause);
  }

  /** Start another worker in place of `handle` (once), at once or after a back-off while starts keep failing. */
  private replace(handle: WorkerHandle): void {
    if (handle.replaced || this.stopped || this.startFailure !== null) return;
    handle.replaced = true;
    if (handle.becameReady && this.respawnDelayMs === 0) return this.startWorker();
    // It never became ready: the next start may fail the same way; do not spin.
    this.respawnDelayMs = Math.min(30_000, Math.max(1_000, this.respawnDelayMs * 2));
    setTimeout(() => {
      if (!this.stopped && this.startFailure === null) this.startWorker();
    }, this.respawnDelayMs).unref();
  }

  /** The first workers cannot start: the pool fails everything with the cause, now and later. */
  private failStart(cause: Error, owed: PooledTask[]): void {
    const failure = cause instanceof WorkerStartError || cause.name === 'WorkerInitError' ? cause : new WorkerStartError(`a worker thread could not start: ${cause.message}`, { cause });
    this.startFailure = failure;
    this.events.report(failure);
    this.markFailed(failure);
    for (const other of this.live) other.retire();
    this.live = [];
    this.events.startFailed(failure, owed);
  }
}

/** Wait for `promise`, at most `ms`. */
export async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
