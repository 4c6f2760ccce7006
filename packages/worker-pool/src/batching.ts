/**
 * The batching policy: tasks that wait travel to a free worker together, several in one message,
 * and the tasks of one event-loop turn are sent together at the end of that turn. Why: a thread hop
 * (waking a sleeping thread, plus the structured clone) costs as much CPU as a whole bundle, and
 * under load it was paid once per request (see docs/performance.md#tasks-travel-in-batches).
 */

/**
 * Tasks the default message limit aims to keep in the messages of all workers together; see
 * {@link defaultMaxTasksPerMessage}.
 */
export const DEFAULT_MAX_TASKS_PER_MESSAGE = 8;

/**
 * Default `maxTasksPerMessage` for a pool of `size` workers: {@link DEFAULT_MAX_TASKS_PER_MESSAGE}
 * shared by the workers, at least 2. A worker answers a message once its tasks are done, so one
 * message must not take every waiting task while another worker is about to free up, nor so few
 * that thread wake-ups cost more than they save (see docs/performance.md#tasks-travel-in-batches).
 */
export function defaultMaxTasksPerMessage(size: number): number {
  return Math.max(2, Math.ceil(DEFAULT_MAX_TASKS_PER_MESSAGE / size));
}

/**
 * How many of `waiting` tasks the next free thread takes when `free` threads are free: an even
 * share, at most `maxPerMessage`.
 */
export function batchShare(waiting: number, free: number, maxPerMessage: number): number {
  return Math.min(maxPerMessage, Math.ceil(waiting / Math.max(1, free)));
}

/**
 * Runs `dispatch` once at the end of the current event-loop turn however often it is asked. The
 * requests a client burst makes readable together are parsed in one turn and then travel to an idle
 * worker in one message; sent at once, the first went alone and the rest waited for it (see
 * docs/performance.md#tasks-travel-in-batches). A lone request waits only for the rest of its turn.
 */
export class EndOfTurn {
  private scheduled = false;
  private readonly run = (): void => {
    this.scheduled = false;
    this.dispatch();
  };

  constructor(private readonly dispatch: () => void) {}

  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.run);
  }
}
