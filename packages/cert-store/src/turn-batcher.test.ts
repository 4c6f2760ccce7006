import { describe, expect, it } from 'vitest';
import { TurnBatcher } from './turn-batcher.js';

describe('TurnBatcher.add', () => {
  it('writes the items of one turn as one batch and resolves each with its own outcome', async () => {
    const batches: number[][] = [];
    const batcher = new TurnBatcher<number, number>(async (items) => {
      batches.push(items);
      return items.map((n) => (n === 3 ? { ok: false, error: new Error('three') } : { ok: true, value: n * 10 }));
    });
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => batcher.add(n)));
    expect(batches).toEqual([[1, 2, 3, 4]]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([10, 20, 'three', 40]);
    await batcher.add(5);
    expect(batches).toEqual([[1, 2, 3, 4], [5]]);
  });

  it('splits a turn into batches of at most maxBatch and fails a whole batch when the writer throws', async () => {
    const sizes: number[] = [];
    const batcher = new TurnBatcher<number, number>(async (items) => {
      sizes.push(items.length);
      if (items.includes(0)) throw new Error('down');
      return items.map((value) => ({ ok: true, value }));
    }, 2);
    const results = await Promise.allSettled([0, 1, 2, 3, 4].map((n) => batcher.add(n)));
    expect(sizes).toEqual([2, 2, 1]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  });
});

describe('TurnBatcher group commit', () => {
  it('holds what arrives during a write and writes it as the next batch (one write at a time)', async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const firstWrite = new Promise<void>((resolve) => (release = resolve));
    let writing = 0;
    let mostAtOnce = 0;
    const batcher = new TurnBatcher<number, number>(async (items) => {
      writing += 1;
      mostAtOnce = Math.max(mostAtOnce, writing);
      batches.push(items);
      if (batches.length === 1) await firstWrite;
      writing -= 1;
      return items.map((value) => ({ ok: true, value }));
    });
    const first = batcher.add(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(batches).toEqual([[1]]);
    // Three more turns while the first batch is being written.
    const later: Array<Promise<number>> = [];
    for (let turn = 0; turn < 3; turn += 1) {
      later.push(batcher.add(10 + turn));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(batches).toEqual([[1]]);
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 10, 11, 12]);
    expect(batches).toEqual([[1], [10, 11, 12]]);
    expect(mostAtOnce).toBe(1);
  });

  it('writes up to maxInFlight batches at once', async () => {
    let writing = 0;
    let mostAtOnce = 0;
    const batcher = new TurnBatcher<number, number>(
      async (items) => {
        writing += 1;
        mostAtOnce = Math.max(mostAtOnce, writing);
        await new Promise((resolve) => setTimeout(resolve, 5));
        writing -= 1;
        return items.map((value) => ({ ok: true, value }));
      },
      1,
      2,
    );
    expect(await Promise.all([1, 2, 3, 4].map((n) => batcher.add(n)))).toEqual([1, 2, 3, 4]);
    expect(mostAtOnce).toBe(2);
  });
});

describe('TurnBatcher.drain', () => {
  it('resolves after every queued batch is written', async () => {
    let written = 0;
    const batcher = new TurnBatcher<number, number>(async (items) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      written += items.length;
      return items.map((value) => ({ ok: true, value }));
    });
    void batcher.add(1);
    void batcher.add(2);
    await batcher.drain();
    expect(written).toBe(2);
  });
});
