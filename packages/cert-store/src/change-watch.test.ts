import { describe, expect, it, vi } from 'vitest';
import { GAP_TIMEOUT_MS, startChangeWatch } from './change-watch.js';
import type { ChangeSource } from './change-watch.js';
import type { CertificateChange } from './model.js';

function change(id: number): CertificateChange {
  return { id, serial: String(id), authorityKeyId: 'aa', label: '', status: 'revoked', reason: 1, revokedAt: null, changedAt: null };
}

/** A change log whose committed ids the test controls. */
function log(initial: number[]): ChangeSource & { ids: number[] } {
  const source = {
    ids: [...initial],
    latestChangeId: async () => 0,
    changesAfter: async (id: number, limit: number) => source.ids.filter((i) => i > id).sort((a, b) => a - b).slice(0, limit).map(change),
  };
  return source;
}

describe('startChangeWatch', () => {
  it('delivers every id once when a lower id commits after a higher one, and skips a rolled-back id after the gap timeout', async () => {
    vi.useFakeTimers();
    try {
      const source = log([1, 3]);
      const seen: number[] = [];
      const watch = startChangeWatch(source, (c) => void seen.push(c.id), { pollIntervalMs: 100, afterId: 0 });
      await vi.advanceTimersByTimeAsync(10);
      expect(seen).toEqual([1, 3]);
      source.ids.push(2); // committed late
      await vi.advanceTimersByTimeAsync(150);
      expect(seen).toEqual([1, 3, 2]);
      source.ids.push(5, 6); // 4 was rolled back
      await vi.advanceTimersByTimeAsync(150);
      expect(seen).toEqual([1, 3, 2, 5, 6]);
      await vi.advanceTimersByTimeAsync(GAP_TIMEOUT_MS + 200);
      source.ids.push(7);
      await vi.advanceTimersByTimeAsync(150);
      expect(seen).toEqual([1, 3, 2, 5, 6, 7]);
      await watch.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('polls again after a wake-up that came while a poll was running, however soon that poll ends', async () => {
    const source = log([1]);
    let wake: () => void = () => undefined;
    const delivered: Array<() => void> = [];
    const seen: number[] = [];
    // An interval no test waits for: only the wake-ups can bring id 2.
    const watch = startChangeWatch(
      source,
      (c) => {
        seen.push(c.id);
        // The change that arrives while this delivery runs, and the wake-up its commit sends.
        if (c.id === 1) {
          source.ids.push(2);
          wake();
        }
        delivered.shift()?.();
      },
      { pollIntervalMs: 3_600_000, afterId: 0, subscribeWakeups: (w) => ((wake = w), () => undefined) },
    );
    await new Promise<void>((resolve) => delivered.push(resolve));
    await new Promise<void>((resolve) => (seen.length >= 2 ? resolve() : delivered.push(resolve)));
    expect(seen).toEqual([1, 2]);
    await watch.close();
  });

  it('keeps polling after a failing poll and reports the error', async () => {
    vi.useFakeTimers();
    try {
      const source = log([1]);
      let fail = true;
      const failing: ChangeSource = {
        latestChangeId: source.latestChangeId,
        changesAfter: async (id, limit) => {
          if (fail) throw new Error('database down');
          return await source.changesAfter(id, limit);
        },
      };
      const errors: string[] = [];
      const seen: number[] = [];
      const watch = startChangeWatch(failing, (c) => void seen.push(c.id), { pollIntervalMs: 100, afterId: 0, onError: (e) => errors.push(e.message) });
      await vi.advanceTimersByTimeAsync(10);
      expect(errors).toEqual(['database down']);
      fail = false;
      await vi.advanceTimersByTimeAsync(150);
      expect(seen).toEqual([1]);
      await watch.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
