/**
 * Per-thread setup that a use case gives the pool (the init hook). The pool knows nothing of what a
 * use case needs in its threads (signers recreated from their recipes, a pre-generated key pool,
 * trust data): each use case names a module of its own and the data it needs, and every thread that
 * runs tasks calls that module's `initWorker(data)` once before its first task.
 */
import { importWorkerModule } from './bundled-modules.js';
import { WorkerInitError } from './errors.js';
import { resolveBuiltModule } from './task.js';

/**
 * Per-thread setup a use case gives the pool: in every worker (and on any other thread that runs
 * tasks, e.g. the event loop if it takes tasks), `module` is imported and its exported function
 * `initWorker(data)` (may be async) is called once before that thread runs its first task.
 *
 * `data` crosses threads by structured clone, once per thread. Hooks run in the order given; one
 * that throws stops the thread from taking tasks (the pool reports it as a start-up failure).
 */
export interface WorkerInit {
  /** URL (usually the defining module's `import.meta.url`) or package specifier of the module. */
  module: string | URL;
  /** Passed to `initWorker`; plain data only. */
  data?: unknown;
  /**
   * The module's own `initWorker`, for the thread that already holds the module: the pool's calling
   * thread (a pool of size 0, or its `callerThread` lane) calls it instead of importing `module` —
   * when every hook of the pool comes with it, and it then runs the task definitions it was given
   * too. A bundled program holds these modules in its bundle, and an import by URL would load each
   * file a second time, with module state of its own (docs/performance.md, start-up pass 6b).
   * Worker threads always import `module` (a function does not cross threads).
   */
  initWorker?: InitWorker;
}

/** A {@link WorkerInit} as it travels to a thread: the module mapped to its built file. */
export interface ResolvedWorkerInit {
  readonly module: string;
  readonly data: unknown;
  /** Only on the thread that made it (the pool's calling thread), never posted: {@link WorkerInit.initWorker}. */
  readonly initWorker?: InitWorker;
}

/** The export a module named by a {@link WorkerInit} must have. */
export type InitWorker = (data: unknown) => void | Promise<void>;

/**
 * Map each hook's module to where a thread imports it from (workers run the built JavaScript; see
 * `resolveBuiltModule`), keeping `data` as is.
 */
export function resolveWorkerInits(inits: readonly WorkerInit[] | undefined): ResolvedWorkerInit[] {
  return (inits ?? []).map((init) => ({ module: resolveBuiltModule(String(init.module)), data: init.data }));
}

/**
 * The hooks as the pool's calling thread runs them: with their own `initWorker` when every hook
 * came with it (see {@link WorkerInit.initWorker}), else `null` (the thread imports their modules
 * as a worker does).
 */
export function workerInitsHeldHere(inits: readonly WorkerInit[] | undefined): ResolvedWorkerInit[] | null {
  const given = inits ?? [];
  if (!given.every((init) => typeof init.initWorker === 'function')) return null;
  return given.map((init) => ({ module: resolveBuiltModule(String(init.module)), data: init.data, initWorker: init.initWorker! }));
}

/**
 * Run hooks in order on this thread: import each module (unless the hook came with its
 * `initWorker`) and await its `initWorker(data)`. Rejects with a {@link WorkerInitError} naming the
 * first module that fails.
 */
export async function runWorkerInits(inits: readonly ResolvedWorkerInit[]): Promise<void> {
  for (const init of inits) {
    let initWorker: unknown = init.initWorker;
    if (initWorker === undefined) {
      let exports: Record<string, unknown>;
      try {
        exports = await importWorkerModule(init.module);
      } catch (error) {
        throw new WorkerInitError(init.module, `cannot be imported: ${(error as Error).message}`, { cause: error });
      }
      initWorker = exports['initWorker'];
    }
    if (typeof initWorker !== 'function') throw new WorkerInitError(init.module, 'does not export a function named initWorker');
    try {
      await (initWorker as InitWorker)(init.data);
    } catch (error) {
      throw new WorkerInitError(init.module, `initWorker failed: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
  }
}
