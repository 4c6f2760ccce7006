/**
 * Worker-thread entry point of the pool. Piscina calls the default export once per task; it finds
 * the task by name in the registry the pool passed as `workerData`, imports the defining module on
 * first use (then keeps it), runs it and returns a {@link TaskOutcome}.
 *
 * This file must be the built `dist/worker.js`: worker threads run plain JavaScript (Node 20 cannot
 * load TypeScript), so the pool always points here even when tests run from sources.
 */
import { workerData } from 'node:worker_threads';
import { toErrorPayload } from '@certsmith/x509-core';
import { startWorkerKeyPool } from './issue/worker-key-pool.js';
import { isTaskDefinition } from './task.js';
import { trackTask } from './worker-activity.js';
import type { TaskDefinition } from './task.js';
import type { TaskOutcome, TaskRequest, WorkerSetup } from './worker-protocol.js';

const loaded = new Map<string, Promise<TaskDefinition>>();

// A configured key pool starts filling as soon as the thread is up, before any request arrives.
startWorkerKeyPool();

/** Run one task request; never throws (failures come back as `{ ok: false, error }`). */
export default async function runTaskRequest(request: TaskRequest): Promise<TaskOutcome> {
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
