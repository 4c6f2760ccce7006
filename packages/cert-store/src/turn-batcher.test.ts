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
