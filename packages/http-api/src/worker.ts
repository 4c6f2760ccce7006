/**
 * Worker-thread entry point of the pool. Piscina calls the default export once per task; it finds
 * the task by name in the registry the pool passed as `workerData`, imports the defining module on
 * first use (then keeps it), runs it and returns a {@link TaskOutcome}.
 *
 * This file must be the built `dist/worker.js`: worker threads run plain JavaScript (Node 20 cannot
 * load TypeScript), so the pool always points here even when tests run from sources.
 */
import { MessageChannel, isMainThread, parentPort, threadId, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { toErrorPayload } from '@certsmith/x509-core';
import { isTaskDefinition, runWorkerInits, trackTask } from '@certsmith/worker-pool';
import type { TaskDefinition } from '@certsmith/worker-pool';
import { LATE_OUTCOME_PORT, WORKER_HEARTBEAT, WORKER_HEARTBEAT_INTERVAL_MS, isDirectBatchRequest } from './worker-protocol.js';
import type {
  DirectBatchAnswer,
  DirectBatchRequest,
  LateOutcome,
  LateOutcomePortAnnouncement,
  TaskBatchOutcome,
  TaskBatchRequest,
  TaskOutcome,
  TaskRequest,
  WorkerSetup,
} from './worker-protocol.js';

const loaded = new Map<string, Promise<TaskDefinition>>();

// The use cases' setup (signers, a key pool…) runs before the worker announces itself, so no task
// reaches it earlier; a hook that fails makes this module fail to load: the pool's start-up failure.
if (!isMainThread) await runWorkerInits((workerData as WorkerSetup | undefined)?.inits ?? []);

/**
 * The port this worker posts late outcomes on, announced to the pool at start (Piscina passes
 * `parentPort` messages other than its own on as the pool's `message` event). Null outside a worker.
 */
const lateOutcomes: MessagePort | null = announceLateOutcomePort();

function announceLateOutcomePort(): MessagePort | null {
  if (isMainThread || parentPort === null) return null;
  const { port1, port2 } = new MessageChannel();
  const announcement: LateOutcomePortAnnouncement = { [LATE_OUTCOME_PORT]: true, port: port2, threadId };
  parentPort.postMessage(announcement, [port2]);
  // The pool sends batches straight to this port (see `sendDirect` in worker-pool.ts).
  port1.on('message', (message: unknown) => {
    if (isDirectBatchRequest(message)) void answerDirectBatch(port1, message);
  });
  // Piscina's own port keeps the thread alive; this one must not keep it from exiting.
  port1.unref();
  const interval = (workerData as WorkerSetup | undefined)?.heartbeatIntervalMs ?? WORKER_HEARTBEAT_INTERVAL_MS;
  setInterval(() => port1.postMessage(WORKER_HEARTBEAT), interval).unref();
  return port1;
}

/**
 * Piscina's entry: one task (sent alone because it carries an abort signal), or a batch of them.
 * Never throws.
 */
export default function runTaskMessage(message: TaskRequest | TaskBatchRequest): Promise<TaskOutcome | TaskBatchOutcome> {
  if ('batch' in message) return runTaskBatch(message);
  return runTaskRequest(message);
}

/**
 * Start a batch's tasks together and answer once they have settled — except tasks still waiting
 * on I/O or libuv's thread pool one event-loop turn after the start (an AIA fetch, RSA primes):
 * those are answered `null` and post their {@link LateOutcome} when they settle, so a slow task
 * never holds the answers of the quick ones sent with it, and the worker takes new work meanwhile.
 */
async function runTaskBatch(message: TaskBatchRequest): Promise<TaskBatchOutcome> {
  const outcomes: (TaskOutcome | null)[] = message.batch.map(() => null);
  let answered = false;
  const settled = Promise.all(
    message.batch.map(async (request, index) => {
      const outcome = await runTaskRequest(request);
      if (!answered) outcomes[index] = outcome;
      else postLateOutcome(request.id, outcome);
    }),
  );
  // A lone task has no one to hold up: its message is simply answered when it is done.
  if (message.batch.length > 1 && lateOutcomes !== null) await Promise.race([settled, new Promise((resolve) => setImmediate(resolve))]);
  else await settled;
  answered = true;
  return { outcomes, worker: threadId };
}

/** Run a batch the pool sent on this worker's port and answer there (see {@link runTaskBatch}). */
async function answerDirectBatch(port: MessagePort, message: DirectBatchRequest): Promise<void> {
  const { outcomes } = await runTaskBatch({ batch: message.batch });
  try {
    port.postMessage({ direct: message.direct, outcomes } satisfies DirectBatchAnswer);
  } catch {
    // An outcome that cannot be cloned (a task returned a function) goes back as its own error;
    // the others as they are.
    const checked = outcomes.map((outcome) => {
      if (outcome === null) return null;
      try {
        structuredClone(outcome);
        return outcome;
      } catch (error) {
        return { ok: false, error: toErrorPayload(error) } satisfies TaskOutcome;
      }
    });
    port.postMessage({ direct: message.direct, outcomes: checked } satisfies DirectBatchAnswer);
  }
}

/** Post a late outcome; one that cannot be cloned (a task returned a function) goes back as its error. */
function postLateOutcome(id: number, outcome: TaskOutcome): void {
  try {
    lateOutcomes!.postMessage({ id, outcome } satisfies LateOutcome);
  } catch (error) {
    lateOutcomes!.postMessage({ id, outcome: { ok: false, error: toErrorPayload(error) } } satisfies LateOutcome);
  }
}

/** Run one task request; never throws (failures come back as `{ ok: false, error }`). */
export async function runTaskRequest(request: TaskRequest): Promise<TaskOutcome> {
  try {
    const task = await loadTask(request.task);
    return { ok: true, result: await trackTask(async () => task.run(request.input)) };
  } catch (error) {
    const outcome: TaskOutcome = { ok: false, error: toErrorPayload(error) };
    if (error instanceof Error && error.stack !== undefined) outcome.stack = error.stack;
    return outcome;
  }
}

function loadTask(name: string): Promise<TaskDefinition> {
  let task = loaded.get(name);
  if (task === undefined) {
    task = importTask(name);
    // A failed import is not cached, so a fixed module (or a transient error) is retried next time.
    task.catch(() => loaded.delete(name));
    loaded.set(name, task);
  }
  return task;
}

async function importTask(name: string): Promise<TaskDefinition> {
  const setup = workerData as WorkerSetup | undefined;
  const module = setup?.taskModules[name];
  if (module === undefined) throw new Error(`worker has no task named "${name}"`);
  const exports = (await import(module)) as Record<string, unknown>;
  const task = Object.values(exports).find((value) => isTaskDefinition(value) && value.name === name);
  if (task === undefined) throw new Error(`module ${module} does not export a task named "${name}"`);
  return task as TaskDefinition;
}
