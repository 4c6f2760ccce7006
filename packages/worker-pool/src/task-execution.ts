/**
 * Running tasks in the thread that received them: find each task's definition in its module
 * (imported on first use, then kept), run it, and turn its result or error into a
 * {@link TaskOutcome}. A batch's tasks start together; its answer does not wait for tasks that
 * still wait on I/O one turn later.
 */
import { toErrorPayload } from '@certsmith/x509-core';
import { importWorkerModule } from './bundled-modules.js';
import type { TaskOutcome, TaskRequest } from './protocol.js';
import { isTaskDefinition } from './task.js';
import type { TaskDefinition } from './task.js';
import { taskSettled, taskStarted } from './thread-activity.js';

/** Runs tasks by name in this thread, importing each task's module on first use. */
export class TaskExecutor {
  private readonly loading = new Map<string, Promise<TaskDefinition>>();
  /** Definitions already imported (or held): their tasks start without waiting for a promise. */
  private readonly loaded = new Map<string, TaskDefinition>();

  /**
   * @param taskModules task name → module URL or specifier to import it from
   * @param held definitions this thread already holds (the pool's calling thread, see
   *   `WorkerInit.initWorker`): run as they are, their modules never imported
   */
  constructor(
    private readonly taskModules: Readonly<Record<string, string>>,
    held?: ReadonlyMap<string, TaskDefinition>,
  ) {
    for (const [name, definition] of held ?? []) this.loaded.set(name, definition);
  }

  /**
   * Whether `task` is loaded (or held) and declared {@link TaskDefinition.readsInputOnly}: its
   * input need not be copied before it runs here.
   */
  readsInputOnly(task: string): boolean {
    return this.loaded.get(task)?.readsInputOnly === true;
  }

  /**
   * Run one task; never throws (failures come back as `{ ok: false, error }`). A task whose
   * definition is loaded and that returns a plain value is answered synchronously: no promise per
   * task on the hot path.
   */
  run(task: string, input: unknown): TaskOutcome | Promise<TaskOutcome> {
    const definition = this.loaded.get(task);
    if (definition !== undefined) return start(definition, input);
    return this.load(task).then((loaded) => start(loaded, input), failure);
  }

  /**
   * Start `tasks` together and answer with their outcomes once they have settled — except tasks
   * still pending one event-loop turn after the start (an AIA fetch, RSA primes on libuv's thread
   * pool): those are `null` and `onLate` gets their outcome when they settle, so a slow task never
   * holds the answers of the quick ones sent with it, and the thread takes new work meanwhile.
   * Synchronous when every task was.
   */
  runBatch(tasks: readonly TaskRequest[], onLate: (id: number, outcome: TaskOutcome) => void): (TaskOutcome | null)[] | Promise<(TaskOutcome | null)[]> {
    const outcomes: (TaskOutcome | null)[] = new Array<TaskOutcome | null>(tasks.length).fill(null);
    let answered = false;
    let open = 0;
    let allSettled: () => void = () => undefined;
    for (let index = 0; index < tasks.length; index += 1) {
      const request = tasks[index]!;
      const outcome = this.run(request.task, request.input);
      if (!(outcome instanceof Promise)) {
        outcomes[index] = outcome;
        continue;
      }
      open += 1;
      void outcome.then((settled) => {
        if (answered) onLate(request.id, settled);
        else outcomes[index] = settled;
        open -= 1;
        if (open === 0) allSettled();
      });
    }
    if (open === 0) return outcomes;
    const settled = new Promise<void>((resolve) => (allSettled = resolve));
    return Promise.race([settled, new Promise((resolve) => setImmediate(resolve))]).then(() => {
      answered = true;
      return outcomes;
    });
  }

  /**
   * Import every task's module now, before the thread takes work: the first task of each kind then
   * starts at once instead of after an import, so whether it is answered with its batch or late
   * depends on the task, not on which request came first. A module that fails is left for its
   * first task to report (and to try again).
   */
  async preload(): Promise<void> {
    await Promise.all(Object.keys(this.taskModules).filter((name) => !this.loaded.has(name)).map((name) => this.load(name).catch(() => undefined)));
  }

  private load(name: string): Promise<TaskDefinition> {
    let task = this.loading.get(name);
    if (task === undefined) {
      task = this.import(name);
      this.loading.set(name, task);
      task.then(
        (definition) => this.loaded.set(name, definition),
        // A failed import is not kept, so a fixed module (or a transient error) is tried again next time.
        () => this.loading.delete(name),
      );
    }
    return task;
  }

  private async import(name: string): Promise<TaskDefinition> {
    const module = this.taskModules[name];
    if (module === undefined) throw new Error(`worker has no task named "${name}"`);
    const exports = await importWorkerModule(module);
    const task = Object.values(exports).find((value) => isTaskDefinition(value) && value.name === name);
    if (task === undefined) throw new Error(`module ${module} does not export a task named "${name}"`);
    return task as TaskDefinition;
  }
}

/** Run a loaded task, counted as running in this thread until it settles. */
function start(definition: TaskDefinition, input: unknown): TaskOutcome | Promise<TaskOutcome> {
  taskStarted();
  let result: unknown;
  try {
    result = definition.run(input);
  } catch (error) {
    taskSettled();
    return failure(error);
  }
  if (!isPromiseLike(result)) {
    taskSettled();
    return { ok: true, result };
  }
  return Promise.resolve(result).then(
    (value) => {
      taskSettled();
      return { ok: true, result: value };
    },
    (error: unknown) => {
      taskSettled();
      return failure(error);
    },
  );
}

function failure(error: unknown): TaskOutcome {
  const outcome: TaskOutcome = { ok: false, error: toErrorPayload(error) };
  if (error instanceof Error && error.stack !== undefined) outcome.stack = error.stack;
  return outcome;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
