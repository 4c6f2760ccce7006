/**
 * How many tasks this thread is running now: what background work in a worker (the key pool)
 * checks so it only uses the thread while no request needs it.
 */
let running = 0;

/** Tasks started and not yet settled in this thread. */
export function tasksRunningInThisThread(): number {
  return running;
}

/** Count `run` as a task of this thread while it is pending. */
export async function trackTask<T>(run: () => Promise<T>): Promise<T> {
  running += 1;
  try {
    return await run();
  } finally {
    running -= 1;
  }
}

/** A task of this thread has started (the pool's executor; pair with {@link taskSettled}). */
export function taskStarted(): void {
  running += 1;
}

/** A task started with {@link taskStarted} has settled. */
export function taskSettled(): void {
  running -= 1;
}
