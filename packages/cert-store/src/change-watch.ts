/**
 * Following the change log (`certsmith_certificate_changes`) from one instance. Ids come from an
 * autoincrement/sequence; on PostgreSQL a transaction that took a lower id can commit after one
 * with a higher id, so the watch keeps a watermark below which every id has been seen, re-reads
 * above it, delivers each id once, and gives up on a missing id (a rolled-back transaction) after
 * {@link GAP_TIMEOUT_MS}.
 */
import type { CertificateChange, ChangeSubscription } from './model.js';

/** How long a missing id is waited for before it is taken as rolled back. */
export const GAP_TIMEOUT_MS = 30_000;
const PAGE = 1000;

/** Where the watch reads changes from. */
export interface ChangeSource {
  latestChangeId(): Promise<number>;
  changesAfter(id: number, limit: number): Promise<CertificateChange[]>;
}

/** Options of {@link startChangeWatch}. */
export interface ChangeWatchOptions {
  pollIntervalMs: number;
  afterId?: number;
  onError?: (error: Error) => void;
  /** Registers a callback that makes the watch poll at once (NOTIFY); returns an unregister function. */
  subscribeWakeups?: (wake: () => void) => () => void;
}

export function startChangeWatch(
  source: ChangeSource,
  onChange: (change: CertificateChange) => void | Promise<void>,
  options: ChangeWatchOptions,
): ChangeSubscription {
  let watermark: number | null = options.afterId ?? null;
  const seenAbove = new Set<number>();
  let gapSince: { id: number; at: number } | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;

  const report = (error: unknown) => options.onError?.(error instanceof Error ? error : new Error(String(error)));

  async function pollOnce(): Promise<boolean> {
    watermark ??= await source.latestChangeId();
    const start: number = watermark;
    let mark = start;
    const changes = await source.changesAfter(mark, PAGE);
    for (const change of changes) {
      if (closed) return false;
      if (seenAbove.has(change.id) || change.id <= mark) continue;
      seenAbove.add(change.id);
      try {
        await onChange(change);
      } catch (error) {
        report(error);
      }
    }
    // Bounded: each step removes one id from the set or moves past one missing id.
    while (seenAbove.size > 0) {
      const next = mark + 1;
      if (seenAbove.delete(next)) {
        mark = next;
        gapSince = null;
        continue;
      }
      if (gapSince === null || gapSince.id !== next) gapSince = { id: next, at: Date.now() };
      if (Date.now() - gapSince.at < GAP_TIMEOUT_MS) break;
      mark = next;
      gapSince = null;
    }
    watermark = mark;
    // Read on at once only when this page moved the watermark (a gap would return the same page again).
    return changes.length === PAGE && mark > start;
  }

  async function poll(): Promise<void> {
    try {
      // Bounded by the log's length: each round reads one page further.
      while (!closed && (await pollOnce()));
    } catch (error) {
      report(error);
    }
  }

  function schedule(delay: number): void {
    if (closed) return;
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(run, delay);
    timer.unref();
  }

  function run(): void {
    timer = null;
    if (running !== null) {
      again = true;
      return;
    }
    running = poll().finally(() => {
      running = null;
      if (again) {
        again = false;
        schedule(0);
      } else schedule(options.pollIntervalMs);
    });
  }

  /**
   * Poll now. During a poll, only note it: a timer set now could fire after the poll has ended and
   * been replaced by the poll's own `schedule(pollIntervalMs)`, and the wake-up would be lost for a
   * whole interval (a NOTIFY, or a commit of this store, that came while a poll read the log).
   */
  function wake(): void {
    if (closed) return;
    if (running !== null) again = true;
    else schedule(0);
  }

  const unsubscribe = options.subscribeWakeups?.(wake);
  schedule(0);
  return {
    async close() {
      closed = true;
      unsubscribe?.();
      if (timer !== null) clearTimeout(timer);
      if (running !== null) await running;
    },
  };
}
