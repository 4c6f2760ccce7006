/**
 * One worker thread of the pool: starts it, sends it batches, and hands what it posts back to the
 * pool. It keeps what the worker owes (the tasks of its batch in flight and its late ones) so that
 * the pool knows, when the thread exits or falls silent, which tasks went with it.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { WorkerInitError, WorkerStartError } from './errors.js';
import { OwedTasks } from './pooled-task.js';
import type { PooledTask } from './pooled-task.js';
import type { BatchMessage, SetupMessage, TaskOutcome, TaskRequest, WorkerMessage, WorkerSetup } from './protocol.js';

/** What a {@link WorkerHandle} reports to its pool. */
export interface WorkerHandleEvents {
  /** The worker ran its init hooks and takes tasks. */
  ready(handle: WorkerHandle): void;
  /** The batch in flight was answered: `outcomes[i]` for `items[i]`, `null` when it comes late. */
  answered(handle: WorkerHandle, items: readonly PooledTask[], outcomes: readonly (TaskOutcome | null)[]): void;
  /** A task answered late has settled. */
  late(handle: WorkerHandle, item: PooledTask, outcome: TaskOutcome): void;
  /** The thread is gone; `owed` are the tasks it had not answered (its batch in flight and late ones). */
  exited(handle: WorkerHandle, owed: PooledTask[], cause: Error): void;
}

/** How to start a worker. */
export interface WorkerStart {
  readonly filename: string;
  readonly setup: WorkerSetup;
  readonly execArgv: readonly string[];
  readonly maxYoungGenerationSizeMb: number;
}

/** A worker thread and what it owes. */
export class WorkerHandle {
  /** Whether its init hooks have run (it said it is ready). */
  becameReady = false;
  /** Whether the pool stopped it (shutdown, a timeout, silence) rather than the thread ending itself. */
  retired = false;
  /** The tasks sent and not yet settled: the batch in flight plus late ones. */
  readonly owed = new OwedTasks();
  /** The tasks of the batch in flight, or null when the worker can take a batch. */
  current: readonly PooledTask[] | null = null;
  /** When the worker was last heard from (any message, heartbeats included), `performance.now()` ms. */
  lastHeard = performance.now();
  /** Whether the thread has exited. */
  exited = false;
  /** Set when the worker was stopped because a task sent to it timed out: that task's name. */
  stoppedBy: string | undefined = undefined;
  /** Set when the worker was stopped for going silent while it owed tasks. */
  stuck = false;
  /** Whether the pool has started another worker in its place. */
  replaced = false;
  /** Resolves once the thread has exited. */
  readonly gone: Promise<void>;
  private readonly worker: Worker;
  private lastBatch = 0;
  private failure: Error | undefined = undefined;
  private referenced = false;

  /** @param prestarted a thread started as `start` says before the pool existed (`prestartWorkers`): it gets its setup now */
  constructor(start: WorkerStart, events: WorkerHandleEvents, prestarted?: Worker) {
    if (prestarted !== undefined) prestarted.postMessage({ type: 'setup', setup: start.setup } satisfies SetupMessage);
    this.worker =
      prestarted ??
      new Worker(start.filename, {
        workerData: start.setup,
        execArgv: [...start.execArgv],
        // A small young generation: tasks make short-lived garbage, and V8's default would keep more
        // RSS committed per worker for no speed-up (see docs/performance.md#small-young-generations).
        resourceLimits: { maxYoungGenerationSizeMb: start.maxYoungGenerationSizeMb },
      });
    // An idle worker does not keep the process alive; the pool references it while tasks are pending.
    this.worker.unref();
    this.worker.on('message', (message: WorkerMessage) => {
      this.lastHeard = performance.now();
      switch (message.type) {
        case 'heartbeat':
          return;
        case 'ready':
          this.becameReady = true;
          return events.ready(this);
        case 'answer': {
          const items = this.current;
          if (items === null || message.batch !== this.lastBatch) return;
          this.current = null;
          return events.answered(this, items, message.outcomes);
        }
        case 'late': {
          // A late outcome may even come before its batch's answer: the task is owed from the start.
          const item = this.owed.find(message.id);
          if (item !== undefined) events.late(this, item, message.outcome);
          return;
        }
        case 'init-failed':
          this.failure = message.module === '' ? new WorkerStartError(message.message) : new WorkerInitError(message.module, message.detail);
          return;
      }
    });
    // An uncaught exception ends the thread; 'exit' follows.
    this.worker.on('error', (error) => (this.failure ??= error));
    let markGone: () => void = () => undefined;
    this.gone = new Promise((resolve) => (markGone = resolve));
    this.worker.on('exit', (code) => {
      markGone();
      this.exited = true;
      this.current = null;
      const cause = this.failure ?? new Error(`worker thread exited with code ${code}`);
      events.exited(this, this.owed.takeAll(), cause);
    });
  }

  /** The worker's thread id. */
  get threadId(): number {
    return this.worker.threadId;
  }

  /** Whether the pool may send it a batch now. */
  get free(): boolean {
    return this.becameReady && !this.retired && !this.exited && this.current === null;
  }

  /**
   * Send `items` as one batch. Throws when an input cannot be cloned (a caller's bug); then nothing
   * was sent and the worker stays free.
   */
  send(items: readonly PooledTask[]): void {
    const tasks: TaskRequest[] = [];
    for (const item of items) tasks.push({ id: item.id, task: item.name, input: item.input });
    this.lastBatch += 1;
    this.worker.postMessage({ type: 'batch', batch: this.lastBatch, tasks } satisfies BatchMessage);
    this.current = items;
    for (const item of items) {
      item.state = 'sent';
      item.owner = this;
      this.owed.add(item);
    }
  }

  /** Keep the process alive while tasks are pending (or not). */
  reference(on: boolean): void {
    if (on === this.referenced || this.exited) return;
    this.referenced = on;
    if (on) this.worker.ref();
    else this.worker.unref();
  }

  /** Stop sending it work and end the thread; 'exited' follows (unless the thread is blocked in native code). */
  retire(): void {
    this.retired = true;
    if (!this.exited) void this.worker.terminate();
  }
}
