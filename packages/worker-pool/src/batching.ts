/**
 * The batching policy: tasks that wait travel to a free worker together, several in one message,
 * and the tasks of one event-loop turn are sent together at the end of that turn. Why: a thread hop
 * costs ≈50–150 µs of CPU (waking a sleeping thread is a system call on both sides, plus the
 * structured clone), as much as a whole bundle; under load it was paid once per request
 * (docs/performance.md, fourth and fifth passes).
 */

/**
 * Tasks the default message limit aims to keep in the messages of all workers together; see
 * {@link defaultMaxTasksPerMessage}.
 */
export const DEFAULT_MAX_TASKS_PER_MESSAGE = 8;

/**
 * Default `maxTasksPerMessage` for a pool of `size` workers: {@link DEFAULT_MAX_TASKS_PER_MESSAGE}
 * shared by the workers, at least 2. A worker answers a message once its tasks are done, so one
 * message must not take every waiting task while another worker is about to free up: newcert at 16
 * clients, measured side by side on 2 cores, did best with messages of 8 for one worker and of 4 for
 * two (8 left the second worker idle; 2–3 cost more thread wake-ups than they saved).
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
 * worker in one message; sent at once, the first went alone and the rest waited for it (bundle at 16
 * clients, one worker: a third of the messages carried a single task; with this, seven in ten carry
 * eight, and the event loop and the worker each spend ≈7% less CPU per request). A lone request
 * waits only for the rest of its turn: a few microseconds.
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
