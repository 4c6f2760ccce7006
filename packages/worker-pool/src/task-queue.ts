/**
 * The pool's queue with admission: at most `size + maxQueue` tasks are accepted and not yet
 * settled; beyond that a task is refused at once (503 + `Retry-After`) instead of letting latency
 * grow without bound. CFSSL runs everything on goroutines and has no such limit.
 */
import type { PooledTask } from './pooled-task.js';

/** Tasks waiting for a free thread, oldest first, and the count of accepted tasks. */
export class TaskQueue {
  private items: (PooledTask | null)[] = [];
  private head = 0;
  private removed = 0;
  private accepted = 0;

  /** @param limit most tasks accepted and not settled at once (running + waiting) */
  constructor(readonly limit: number) {}

  /** Tasks accepted and not yet settled (running + waiting). */
  get pending(): number {
    return this.accepted;
  }

  /** Tasks waiting for a thread. */
  get length(): number {
    return this.items.length - this.head - this.removed;
  }

  /** Count one more accepted task, or return false when {@link limit} are already pending. */
  admit(): boolean {
    if (this.accepted >= this.limit) return false;
    this.accepted += 1;
    return true;
  }

  /** An accepted task has settled. */
  release(): void {
    this.accepted -= 1;
  }

  push(item: PooledTask): void {
    this.items.push(item);
  }

  /** Put tasks back at the front, in their order (tasks sent again after their worker failed). */
  unshift(items: readonly PooledTask[]): void {
    if (items.length === 0) return;
    this.items = [...items, ...this.items.slice(this.head)];
    this.head = 0;
  }

  /**
   * Take up to `count` tasks from the front; a task marked `alone` is taken only by itself. With
   * `accept`, taking stops at the first task it refuses (the queue stays in order).
   */
  take(count: number, accept?: (item: PooledTask) => boolean): PooledTask[] {
    const taken: PooledTask[] = [];
    while (taken.length < count && this.head < this.items.length) {
      const item = this.items[this.head]!;
      if (item !== null && item.alone && taken.length > 0) break;
      if (item !== null && accept !== undefined && !accept(item)) break;
      this.items[this.head] = null;
      this.head += 1;
      if (item === null) this.removed -= 1;
      else {
        taken.push(item);
        if (item.alone) break;
      }
    }
    // `shift` on a long array copies it; compact only when the consumed part dominates.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return taken;
  }

  /** The oldest waiting task, if any. */
  peek(): PooledTask | undefined {
    for (let index = this.head; index < this.items.length; index += 1) {
      const item = this.items[index];
      if (item !== null && item !== undefined) return item;
    }
    return undefined;
  }

  /** Forget a waiting task (it timed out or was aborted in the queue). */
  remove(item: PooledTask): void {
    const index = this.items.indexOf(item, this.head);
    if (index === -1) return;
    this.items[index] = null;
    this.removed += 1;
  }

  /** Every waiting task, oldest first (for timeouts and shutdown). */
  *[Symbol.iterator](): Iterator<PooledTask> {
    for (let index = this.head; index < this.items.length; index += 1) {
      const item = this.items[index];
      if (item !== null && item !== undefined) yield item;
    }
  }
}
