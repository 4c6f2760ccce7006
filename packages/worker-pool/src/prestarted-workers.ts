/**
 * Worker threads started before their pool exists. A worker thread's own start — a Node
 * environment, then the import of its task modules — takes 150–250 ms on a 2-core machine, and a
 * server can only create its pool once its signers and store are up, when there is nothing else left
 * to overlap it with. Started first thing instead ({@link prestartWorkers}), the threads start and
 * import the modules they will need while the main thread imports its own; the pool then takes
 * them ({@link WorkerPoolOptions.prestarted}) and sends each its setup. Numbers:
 * docs/performance.md, start-up.
 *
 * This module is imported before everything else by the `certsmith` executable: it must stay light.
 */
import { MessageChannel, Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { workerExecArgv } from './exec-argv.js';
import type { PrestartData, TaskOutcome } from './protocol.js';
import { DEFAULT_WORKER_YOUNG_GENERATION_MB, defaultWorkerCount, workerEntryPath } from './worker-defaults.js';

/** Options of {@link prestartWorkers}. */
export interface PrestartOptions {
  /** Threads to start; default the pool's default size (`defaultWorkerCount`). */
  count?: number;
  /**
   * Modules each thread imports while it waits for its pool (URLs or absolute specifiers): those
   * its tasks and init hooks come from. A module that fails to import is left for the task to report.
   */
  preload?: readonly string[];
  /** As the pool's option; default {@link DEFAULT_WORKER_YOUNG_GENERATION_MB}. */
  maxYoungGenerationSizeMb?: number;
  /**
   * A task the first thread runs first thing, before it imports `preload` and before a pool takes it — work the
   * caller would otherwise do on its own thread while that thread is busy loading: `module` (URL or
   * specifier) exports the task's definition named `name`. Its result is
   * {@link PrestartedWorkers.taskResult}.
   */
  task?: { module: string; name: string; input: unknown };
  /**
   * The module the threads start on, as the pool's {@link WorkerPoolOptions.workerEntry} (which
   * must name the same file for the pool to take them); default the pool's own entry.
   */
  workerEntry?: string | URL;
}

/** How a thread was started: a pool takes it only when it would start its own threads the same way. */
interface StartSettings {
  readonly filename: string;
  readonly execArgv: readonly string[];
  readonly maxYoungGenerationSizeMb: number;
}

/** Threads started by {@link prestartWorkers}, waiting for a pool. */
export class PrestartedWorkers {
  readonly #settings: StartSettings;
  #waiting: Worker[] = [];
  /** The result of {@link PrestartOptions.task}, when one was given. */
  readonly taskResult: Promise<unknown> | undefined;

  /** @internal use {@link prestartWorkers} */
  constructor(settings: StartSettings, count: number, preload: readonly string[], task?: PrestartOptions['task']) {
    this.#settings = settings;
    const data: PrestartData = { prestart: true, preload: [...preload] };
    let taskPort: MessagePort | undefined;
    if (task !== undefined && count > 0) {
      const channel = new MessageChannel();
      taskPort = channel.port2;
      this.taskResult = taskResult(channel.port1);
    }
    for (let index = 0; index < count; index += 1) {
      const withTask = index === 0 && taskPort !== undefined && task !== undefined ? { data: { ...data, task: { ...task, port: taskPort } }, transferList: [taskPort] } : { data };
      const worker = new Worker(settings.filename, {
        workerData: withTask.data satisfies PrestartData,
        ...('transferList' in withTask ? { transferList: withTask.transferList } : {}),
        execArgv: [...settings.execArgv],
        resourceLimits: { maxYoungGenerationSizeMb: settings.maxYoungGenerationSizeMb },
      });
      // Until a pool takes it, it neither keeps the process alive nor counts when it fails: the pool
      // would start a thread of its own, and report that one's failure.
      worker.unref();
      worker.on('error', () => undefined);
      worker.once('exit', () => (this.#waiting = this.#waiting.filter((other) => other !== worker)));
      this.#waiting.push(worker);
    }
  }

  /** Threads still waiting for a pool. */
  get count(): number {
    return this.#waiting.length;
  }

  /**
   * One waiting thread started as `settings` says, or `undefined` (none left, or started
   * otherwise). The caller sends it its setup and listens to it from then on.
   */
  take(settings: StartSettings): Worker | undefined {
    const own = this.#settings;
    const same =
      own.filename === settings.filename &&
      own.maxYoungGenerationSizeMb === settings.maxYoungGenerationSizeMb &&
      own.execArgv.length === settings.execArgv.length &&
      own.execArgv.every((flag, index) => flag === settings.execArgv[index]);
    return same ? this.#waiting.shift() : undefined;
  }

  /** Stop the threads no pool took. */
  async stop(): Promise<void> {
    const left = this.#waiting;
    this.#waiting = [];
    await Promise.all(left.map((worker) => worker.terminate()));
  }
}

/**
 * The outcome a prestarted thread posts on `port`: its result, or the task's error; an error too
 * when the thread goes away without answering (the port closes).
 */
function taskResult(port: MessagePort): Promise<unknown> {
  const result = new Promise<unknown>((resolve, reject) => {
    port.once('message', (outcome: TaskOutcome) => {
      port.close();
      if (outcome.ok) resolve(outcome.result);
      // A plain error (x509-core's rebuilt ones would make this module heavy to import): the
      // caller decides what a failed task means, e.g. doing the work itself, which reports its own.
      else reject(Object.assign(new Error(outcome.error.message), { code: outcome.error.code }));
    });
    port.once('close', () => reject(new Error('the prestarted worker ended before its task answered')));
  });
  // Waiting for the answer must not keep the process alive, and an answer nobody asks for is not
  // an unhandled rejection.
  port.unref();
  result.catch(() => undefined);
  return result;
}

/**
 * Start worker threads for a pool that will be created later (see the module comment); give them to
 * it as {@link WorkerPoolOptions.prestarted}. Threads no pool takes are stopped when the pool is
 * created, or with {@link PrestartedWorkers.stop}.
 */
export function prestartWorkers(options: PrestartOptions = {}): PrestartedWorkers {
  const settings: StartSettings = {
    filename: workerEntryPath(options.workerEntry),
    execArgv: workerExecArgv(process.execArgv),
    maxYoungGenerationSizeMb: options.maxYoungGenerationSizeMb ?? DEFAULT_WORKER_YOUNG_GENERATION_MB,
  };
  return new PrestartedWorkers(settings, options.count ?? defaultWorkerCount(), options.preload ?? [], options.task);
}
