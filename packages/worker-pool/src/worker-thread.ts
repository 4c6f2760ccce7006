/**
 * What every worker thread of the pool runs ({@link runWorkerThread}): the use cases' init hooks,
 * then the batches the pool posts on `parentPort`, answered there; a heartbeat from a timer lets the
 * pool tell a stuck thread from a busy one. Started by `worker-entry.ts`, or by the entry of a
 * bundle that registers its modules first (`bundled-modules.ts`).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { toErrorPayload } from '@certsmith/x509-core';
import { WorkerInitError } from './errors.js';
import type {
  BatchAnswerMessage,
  BatchMessage,
  HeartbeatMessage,
  InitFailedMessage,
  LateOutcomeMessage,
  PrestartData,
  PrestartTaskData,
  ReadyMessage,
  SetupMessage,
  TaskOutcome,
  WorkerSetup,
} from './protocol.js';
import { TaskExecutor } from './task-execution.js';
import { isTaskDefinition } from './task.js';
import type { TaskDefinition } from './task.js';
import { runWorkerInits } from './worker-init.js';
import { importWorkerModule } from './bundled-modules.js';

const HEARTBEAT: HeartbeatMessage = { type: 'heartbeat' };

async function main(port: MessagePort, setup: WorkerSetup): Promise<void> {
  // The heartbeat starts before the init hooks: a hook that blocks its thread is a stuck worker too.
  setInterval(() => port.postMessage(HEARTBEAT), setup.heartbeatIntervalMs).unref();
  try {
    await runWorkerInits(setup.inits);
  } catch (error) {
    const message = String((error as Error)?.message ?? error);
    const failed: InitFailedMessage =
      error instanceof WorkerInitError ? { type: 'init-failed', module: error.module, detail: error.detail, message } : { type: 'init-failed', module: '', detail: message, message };
    port.postMessage(failed);
    // Ends only this thread; the pool reports the failure.
    process.exit(1);
  }
  const executor = new TaskExecutor(setup.taskModules);
  await executor.preload();
  const postLate = (id: number, outcome: TaskOutcome): void => post(port, { type: 'late', id, outcome } satisfies LateOutcomeMessage);
  port.on('message', (message: BatchMessage) => {
    const answer = (outcomes: (TaskOutcome | null)[]): void => post(port, { type: 'answer', batch: message.batch, outcomes } satisfies BatchAnswerMessage);
    const outcomes = executor.runBatch(message.tasks, postLate);
    if (outcomes instanceof Promise) void outcomes.then(answer);
    else answer(outcomes);
  });
  port.postMessage({ type: 'ready' } satisfies ReadyMessage);
}

/**
 * Post a message carrying outcomes. A result structured clone refuses (a task returned a function)
 * goes back as its own error; the other outcomes of the message as they are.
 */
function post(port: MessagePort, message: BatchAnswerMessage | LateOutcomeMessage): void {
  try {
    port.postMessage(message);
  } catch {
    if (message.type === 'late') {
      port.postMessage({ ...message, outcome: cloneableOutcome(message.outcome) } satisfies LateOutcomeMessage);
    } else {
      port.postMessage({ ...message, outcomes: message.outcomes.map((outcome) => (outcome === null ? null : cloneableOutcome(outcome))) } satisfies BatchAnswerMessage);
    }
  }
}

function cloneableOutcome(outcome: TaskOutcome): TaskOutcome {
  try {
    structuredClone(outcome);
    return outcome;
  } catch (error) {
    return { ok: false, error: toErrorPayload(error) };
  }
}

/**
 * The setup of a thread started before its pool: it imports what its tasks will need while it
 * waits for the pool's {@link SetupMessage}. A module that fails to import is reported by the task
 * that needs it, not here.
 */
async function adoptedSetup(port: MessagePort, data: PrestartData): Promise<WorkerSetup> {
  const setup = new Promise<WorkerSetup>((resolve) => port.once('message', (message: SetupMessage) => resolve(message.setup)));
  // The task first, with only its own modules: another thread waits for its result, while the
  // other modules are needed only once the pool takes this thread (docs/performance.md, start-up
  // pass 3).
  if (data.task !== undefined) await runPrestartTask(data.task);
  await Promise.all(data.preload.map(async (module) => await importWorkerModule(module).catch(() => undefined)));
  return await setup;
}

/** Run the task a prestarted thread was given and post its outcome on the task's own port. */
async function runPrestartTask(task: PrestartTaskData): Promise<void> {
  let outcome: TaskOutcome;
  try {
    const exports = await importWorkerModule(task.module);
    const definition = Object.values(exports).find((value): value is TaskDefinition => isTaskDefinition(value) && value.name === task.name);
    if (definition === undefined) throw new Error(`module ${task.module} does not export a task named "${task.name}"`);
    outcome = { ok: true, result: await definition.run(task.input) };
  } catch (error) {
    outcome = { ok: false, error: toErrorPayload(error) };
  }
  try {
    task.port.postMessage(outcome);
  } catch (error) {
    task.port.postMessage({ ok: false, error: toErrorPayload(error) } satisfies TaskOutcome);
  }
  task.port.close();
}

/**
 * Run this worker thread for its pool until the pool ends it; does nothing outside a worker thread.
 * Modules the thread imports by URL (tasks, init hooks, its preload) come from the bundled modules
 * registered before the call (`registerBundledModules`), else by `import()`.
 */
export async function runWorkerThread(): Promise<void> {
  if (parentPort === null) return;
  const data = workerData as WorkerSetup | PrestartData;
  await main(parentPort, 'prestart' in data ? await adoptedSetup(parentPort, data) : data);
}
