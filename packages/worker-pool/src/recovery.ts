/**
 * What the pool does when a worker fails it: a thread that crashes, one that stops answering, and
 * tasks that run out of time. The rule throughout: only the guilty task fails; the others complete
 * elsewhere, and no task is sent to a worker more than twice.
 */
import { ServiceUnavailableError, WorkerCrashedError, WorkerStuckError } from './errors.js';
import type { PooledTask } from './pooled-task.js';
import { WorkerHandle } from './worker-handle.js';

/** What recovery needs from the pool. */
export interface RecoveryHost {
  readonly retryAfterSeconds: number;
  readonly taskTimeoutMs: number;
  /** Whether the pool is shutting down. */
  closing(): boolean;
  /** Settle `item` with `error` (no-op when settled). */
  fail(item: PooledTask, error: unknown): void;
  /** Put tasks back at the front of the queue and dispatch. */
  requeue(items: PooledTask[]): void;
  /** Stop sending `handle` work, end its thread and start another worker in its place. */
  retire(handle: WorkerHandle): void;
  /** Report a pool-level failure (`onError`). */
  report(error: unknown): void;
}

/** Crash, stuck-worker and timeout handling of one pool. */
export class Recovery {
  constructor(private readonly host: RecoveryHost) {}

  /** The 503 of a task that ran out of time. */
  timeoutError(name: string): ServiceUnavailableError {
    return new ServiceUnavailableError(`task ${name} did not finish within ${this.host.taskTimeoutMs} ms`, this.host.retryAfterSeconds);
  }

  /**
   * A task ran out of time (it counts from the moment it was accepted). Still waiting: only the
   * queue forgets it (the caller removed it). Sent and unanswered: it is answered now, and its worker,
   * which may be stuck in this very task, is stopped; the tasks sent with it fail on the worker's
   * exit, naming it. Answered late: the worker serves others; its answer is dropped when it comes.
   */
  timeOut(item: PooledTask): void {
    item.timedOut = true;
    const owner = item.state === 'sent' && item.owner instanceof WorkerHandle ? item.owner : null;
    this.host.fail(item, this.timeoutError(item.name));
    if (owner !== null && owner.current?.includes(item) === true && !owner.retired) {
      owner.stoppedBy = item.name;
      this.host.retire(owner);
    }
  }

  /**
   * A worker's thread is gone while it owed `owed` (its batch in flight and its late tasks).
   * Stopped for a timeout: the others fail with a 503 naming the task that timed out. Stopped for
   * silence: each is sent again once. Shut down: 503. Crashed owing one task: that task stopped
   * it, and fails (500). Crashed owing several (a batch travels together): the pool cannot tell
   * which one stopped it, so each is sent again once, alone: the innocent ones complete, the guilty
   * one stops a second worker and then fails.
   */
  workerExited(handle: WorkerHandle, owed: PooledTask[], cause: Error): void {
    const open = owed.filter((item) => item.state !== 'settled');
    if (open.length === 0) return;
    const stoppedBy = handle.stoppedBy;
    if (stoppedBy !== undefined) {
      for (const item of open) {
        const message = `task ${item.name} was stopped with its worker: task ${stoppedBy}, sent with it, did not finish within ${this.host.taskTimeoutMs} ms`;
        this.host.fail(item, new ServiceUnavailableError(message, this.host.retryAfterSeconds));
      }
      return;
    }
    if (handle.stuck) return this.resendOnce(open);
    if (this.host.closing()) {
      for (const item of open) this.host.fail(item, new ServiceUnavailableError('server is shutting down', this.host.retryAfterSeconds));
      return;
    }
    const resendable = open.length > 1 && open.every((item) => this.mayResend(item));
    if (!resendable) {
      // The worker entry never throws (failures come back as outcomes), so a thread that ended
      // mid-task stopped itself (`process.exit`, an uncaught exception, a native crash): only its
      // tasks fail, with a code, and the log gets the cause.
      for (const item of open) {
        const crashed = new WorkerCrashedError(item.name, { cause });
        this.host.report(crashed);
        this.host.fail(item, crashed);
      }
      return;
    }
    this.host.report(new WorkerCrashedError(open.map((item) => item.name).join(', '), { cause }));
    for (const item of open) {
      item.resent = true;
      item.alone = true;
    }
    this.host.requeue(open);
  }

  /**
   * Workers not heard from for `silenceMs` while they owe tasks: their event loop does not run (a
   * native block; nothing certsmith runs computes for seconds without an await). Each is reported,
   * stopped and replaced; its tasks are sent again once when its thread has exited, or after
   * `resendAfterMs` anyway (a thread blocked in native code may never exit).
   */
  checkSilence(handles: Iterable<WorkerHandle>, now: number, silenceMs: number, reportedMs: number, resendAfterMs: number): void {
    for (const handle of handles) {
      if (handle.retired || handle.owed.size === 0 || now - handle.lastHeard <= silenceMs) continue;
      this.host.report(new WorkerStuckError([...handle.owed].map((item) => item.name), reportedMs));
      handle.stuck = true;
      this.host.retire(handle);
      const timer = setTimeout(() => {
        if (!handle.exited) this.resendOnce(handle.owed.takeAll());
      }, resendAfterMs);
      timer.unref();
    }
  }

  /** Send tasks again, once, ahead of the queue; those already sent twice fail with 503. */
  private resendOnce(items: readonly PooledTask[]): void {
    const resend: PooledTask[] = [];
    for (const item of items) {
      if (item.state === 'settled') continue;
      if (this.mayResend(item)) {
        item.resent = true;
        resend.push(item);
      } else {
        this.host.fail(item, new ServiceUnavailableError(`task ${item.name} was sent to two workers that both stopped answering; retry later`, this.host.retryAfterSeconds));
      }
    }
    this.host.requeue(resend);
  }

  private mayResend(item: PooledTask): boolean {
    return !item.resent && !item.timedOut && !this.host.closing();
  }
}
