/**
 * One task on its way through the pool, and the list of tasks a worker owes.
 */

/**
 * A task accepted by the pool: `waiting` in the queue, `sent` in a batch to a worker, `late` when
 * that batch was answered before it finished (it still runs in the worker and its outcome comes on
 * its own), then `settled`.
 */
export class PooledTask {
  state: 'waiting' | 'sent' | 'late' | 'settled' = 'waiting';
  /** Already sent once to a worker that crashed or stopped answering (sent again at most once). */
  resent = false;
  /** Travels in a batch of its own (sent again after a worker it shared crashed). */
  alone = false;
  /** Whether its deadline passed (`taskTimeoutMs`). */
  timedOut = false;
  /** The thread that owes it while `sent` or `late` (a worker, or the caller's lane). */
  owner: { readonly owed: OwedTasks } | null = null;
  /** When it stops waiting and running (`performance.now()` ms). */
  readonly deadline: number;

  constructor(
    readonly id: number,
    readonly name: string,
    readonly input: unknown,
    timeoutMs: number,
    now: number,
    /** Settles the caller's promise with the task's result. */
    readonly resolve: (result: unknown) => void,
    /** Settles the caller's promise with an error. */
    readonly reject: (error: unknown) => void,
  ) {
    this.deadline = now + timeoutMs;
  }
}

/**
 * The tasks one worker owes, in an array. Not a Set, and no Map keyed by task id either: a
 * long-lived Map or Set whose entries come and go at the request rate keeps each obsolete hash table
 * linked to the next one (V8 keeps the link for live iterators), and once one of those tables has
 * been promoted to the old generation it keeps every later table, and the tasks in them, alive
 * through young-generation GCs (docs/performance.md, "The event loop's old generation"). A worker
 * owes a batch's tasks plus its late ones, a few at a time, so scanning the array costs less than
 * hashing.
 */
export class OwedTasks implements Iterable<PooledTask> {
  private readonly items: PooledTask[] = [];

  get size(): number {
    return this.items.length;
  }

  add(item: PooledTask): void {
    this.items.push(item);
  }

  delete(item: PooledTask): boolean {
    const index = this.items.indexOf(item);
    if (index === -1) return false;
    this.items.splice(index, 1);
    return true;
  }

  find(id: number): PooledTask | undefined {
    return this.items.find((item) => item.id === id);
  }

  /** Remove and return every task. */
  takeAll(): PooledTask[] {
    return this.items.splice(0);
  }

  [Symbol.iterator](): Iterator<PooledTask> {
    return this.items[Symbol.iterator]();
  }
}
