/**
 * A store's own status changes, told to its own change watches at once. The change log is written by
 * database triggers and followed by polling (SQLite: the only way; PostgreSQL: behind NOTIFY), which
 * is what other writers (cfssl, another instance) need. A change this store committed itself needs no
 * poll to be found: the store wakes its watches as soon as the commit is done, so that the processes
 * of `serve --processes N` — whose writes all pass through the owner's store, and whose watches are
 * the owner's watches (`serveStore`) — answer OCSP and CRLs alike right after a revocation instead
 * of up to one poll interval apart.
 */

/** The wake-up callbacks of one store's watches. */
export class ChangeWakeups {
  readonly #wakers = new Set<() => void>();

  /** Register a watch's "poll now"; returns the unregister function. */
  subscribe(wake: () => void): () => void {
    this.#wakers.add(wake);
    return () => void this.#wakers.delete(wake);
  }

  /** This store committed a change the change log records: every watch reads the log now. */
  wake(): void {
    for (const wake of this.#wakers) wake();
  }
}

/** Both sources of wake-ups of a watch (a store's own commits and, on PostgreSQL, NOTIFY). */
export function combineWakeups(...sources: Array<(wake: () => void) => () => void>): (wake: () => void) => () => void {
  return (wake) => {
    const stops = sources.map((subscribe) => subscribe(wake));
    return () => {
      for (const stop of stops) stop();
    };
  };
}
