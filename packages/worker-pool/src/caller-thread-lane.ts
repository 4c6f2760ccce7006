/**
 * The calling thread (the server's event loop) as a lane of the pool: with workers, when every one
 * is busy and tasks wait, it runs a few of them itself between its own I/O
 * (`WorkerPoolOptions.callerThread`); in a pool of size 0 it is the only lane and runs every task.
 */
import { performance } from 'node:perf_hooks';
import { toErrorPayload } from '@certsmith/x509-core';
import { OwedTasks } from './pooled-task.js';
import type { PooledTask } from './pooled-task.js';
import type { TaskOutcome } from './protocol.js';
import { TaskExecutor } from './task-execution.js';
import type { TaskDefinition } from './task.js';
import { runWorkerInits } from './worker-init.js';
import type { ResolvedWorkerInit } from './worker-init.js';

/** What the lane reports to its pool. */
export interface CallerLaneEvents {
  /** A task the lane ran has settled. */
  settled(item: PooledTask, outcome: TaskOutcome): void;
  /** The lane can take tasks again. */
  free(): void;
  /** The init hooks failed on this thread: the lane stays off. */
  failed(error: unknown): void;
}

/** Runs batches on the calling thread, one at a time. */
export class CallerThreadLane {
  /** Whether the lane may take a batch now. */
  private state: 'cold' | 'starting' | 'ready' | 'busy' | 'off' = 'cold';
  private readonly executor: TaskExecutor;
  /** The init hooks and task imports, once started ({@link start}). */
  private starting: Promise<void> | null = null;
  /** Tasks started here and not yet settled (they may run on, waiting on I/O). */
  readonly owed = new OwedTasks();
  /** CPU this thread spent running tasks synchronously, ms (for measurements). */
  busyMs = 0;

  /**
   * @param held the task definitions to run as given, without importing their modules: only when
   *   `inits` are the hooks this thread holds too (`workerInitsHeldHere`), so that tasks and hooks
   *   share one instance of each module
   */
  constructor(
    taskModules: Readonly<Record<string, string>>,
    private readonly inits: readonly ResolvedWorkerInit[],
    private readonly events: CallerLaneEvents,
    held?: ReadonlyMap<string, TaskDefinition>,
  ) {
    this.executor = new TaskExecutor(taskModules, held);
  }

  /**
   * Whether it can take a batch now. The first time it is asked it starts its init hooks and task
   * imports ({@link start}) and says no until they are done.
   */
  available(): boolean {
    if (this.state === 'ready') return true;
    if (this.state === 'cold') this.start().catch(() => undefined);
    return false;
  }

  /**
   * Run the init hooks and import the task modules on this thread, once; resolves when the lane can
   * take tasks (it then tells its pool: `free`), rejects with the hooks' failure (the lane stays off
   * and `failed` hears why). A pool of size 0 calls it at once, being nothing but this lane; a pool
   * with workers waits until the lane is first needed ({@link available}).
   */
  start(): Promise<void> {
    if (this.starting === null) {
      this.state = 'starting';
      this.starting = (async () => {
        await runWorkerInits(this.inits);
        await this.executor.preload();
      })().then(
        () => {
          this.state = 'ready';
          this.events.free();
        },
        (error: unknown) => {
          this.state = 'off';
          this.events.failed(error);
          throw error;
        },
      );
    }
    return this.starting;
  }

  /** Run `items` at the end of this turn (the I/O already read is handled first). */
  take(items: readonly PooledTask[]): void {
    this.state = 'busy';
    for (const item of items) {
      item.state = 'sent';
      item.owner = this;
      this.owed.add(item);
    }
    setImmediate(() => this.run(items));
  }

  private run(items: readonly PooledTask[]): void {
    const started = performance.now();
    // Worker semantics: the task gets its own copy of the input and the caller its own copy of the
    // result (a task may return objects it keeps, e.g. cached trust data). A task that only reads
    // its plain-data input gets the caller's: a copy would make no difference to it.
    const requests = items.map((item) => ({
      id: item.id,
      task: item.name,
      input: this.executor.readsInputOnly(item.name) ? item.input : structuredClone(item.input),
    }));
    const byId = (id: number): PooledTask | undefined => items.find((item) => item.id === id);
    const finish = (outcomes: (TaskOutcome | null)[]): void => {
      outcomes.forEach((outcome, index) => {
        const item = items[index]!;
        if (outcome === null) {
          if (item.state === 'sent') item.state = 'late';
          return;
        }
        this.events.settled(item, cloned(outcome));
      });
      this.state = 'ready';
      this.events.free();
    };
    const outcomes = this.executor.runBatch(requests, (id, outcome) => {
      const item = byId(id);
      if (item === undefined) return;
      this.events.settled(item, cloned(outcome));
    });
    this.busyMs += performance.now() - started;
    if (outcomes instanceof Promise) void outcomes.then(finish);
    else finish(outcomes);
  }
}

/** The outcome with its result copied as a worker's would be; a result that cannot be copied fails. */
function cloned(outcome: TaskOutcome): TaskOutcome {
  if (!outcome.ok || typeof outcome.result !== 'object' || outcome.result === null) return outcome;
  try {
    return { ok: true, result: structuredClone(outcome.result) };
  } catch (error) {
    return { ok: false, error: toErrorPayload(error) };
  }
}
