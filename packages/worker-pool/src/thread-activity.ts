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
