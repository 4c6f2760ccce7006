/**
 * Worker tasks: CPU-heavy work (parsing, chain building, key generation, signing) that runs on the
 * worker-thread pool instead of the event loop. A task is defined once, in its own module, and is
 * referenced by the same object on the main thread (to run it) and in the worker (to execute it):
 *
 * ```ts
 * export const certinfoTask = defineTask({
 *   name: 'certinfo',
 *   module: import.meta.url,          // where the worker imports this definition from
 *   run: (input: CertinfoTaskInput): CertinfoResult => …,
 * });
 * ```
 *
 * Inputs and results cross threads by structured clone: plain data only (no class instances, no
 * functions). Errors cross as `{code, name, message}` (x509-core `toErrorPayload`) and are rebuilt on
 * the main thread, so a CFSSL code thrown in a worker reaches the client unchanged.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Marks task definitions; `Symbol.for` so a definition loaded from `dist/` matches one from `src/`. */
const TASK_DEFINITION = Symbol.for('certsmith.http-api.task-definition');

/**
 * A task: a name unique within a pool, the module that exports this very definition, and the function
 * the worker runs. `TInput`/`TOutput` type the main-thread `run` call.
 */
export interface TaskDefinition<TInput = unknown, TOutput = unknown> {
  readonly [TASK_DEFINITION]: true;
  /** Unique task name, e.g. `certinfo`, `bundle`, `newcert`. */
  readonly name: string;
  /**
   * URL (usually the defining module's `import.meta.url`) or package specifier of a module that
   * exports this definition. A `…/src/x.ts` URL is mapped to `…/dist/x.js` by {@link resolveBuiltModule},
   * since workers run the built JavaScript even when the caller runs from sources under vitest.
   */
  readonly module: string;
  /** The work itself; runs inside a worker thread. */
  run(input: TInput): TOutput | Promise<TOutput>;
  /** See {@link TaskSpec.readsInputOnly}. */
  readonly readsInputOnly: boolean;
}

/** Input type of a task definition. */
export type TaskInput<TTask> = TTask extends TaskDefinition<infer TInput, unknown> ? TInput : never;
/** Output type of a task definition (the awaited result of `run`). */
export type TaskOutput<TTask> = TTask extends TaskDefinition<never, infer TOutput> ? TOutput : never;

/** What {@link defineTask} takes. */
export interface TaskSpec<TInput, TOutput> {
  name: string;
  module: string | URL;
  run(input: TInput): TOutput | Promise<TOutput>;
  /**
   * The task's promise that a copy of its input would make no difference: `run` changes no part of
   * the input and keeps no object or array of it once it has settled, and the input is plain data
   * that a structured clone copies as it is (strings, numbers, booleans, `null`, plain objects and
   * arrays of them; no `Buffer`, `Map` or class instance). The pool's calling thread then hands the
   * task the caller's input instead of a structured clone of it (a worker thread gets a copy
   * either way): the clone cost the event loop ≈5 µs of a ≈120 µs bundle request
   * (docs/performance.md#bundle-cpu-per-request). Default `false`.
   */
  readsInputOnly?: boolean;
}

/**
 * Define a worker task. The definition must be exported from `module` (any export name) so the
 * worker can find it by `name`. No work happens at definition time.
 */
export function defineTask<TInput, TOutput>(spec: TaskSpec<TInput, TOutput>): TaskDefinition<TInput, TOutput> {
  if (!/^[a-z][a-z0-9_.-]*$/.test(spec.name)) {
    throw new TypeError(`task name must be lower-case letters, digits, "_", "." or "-", got ${JSON.stringify(spec.name)}`);
  }
  return Object.freeze({
    [TASK_DEFINITION]: true as const,
    name: spec.name,
    module: String(spec.module),
    run: spec.run,
    readsInputOnly: spec.readsInputOnly === true,
  });
}

/** True for objects made by {@link defineTask} (from any copy of this package). */
export function isTaskDefinition(value: unknown): value is TaskDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[TASK_DEFINITION] === true;
}

/**
 * Where a worker should import a module from. Every certsmith package compiles `src/<x>.ts` to
 * `dist/<x>.js` (tsconfig `rootDir: src`, `outDir: dist`), so a source URL seen under vitest maps to
 * its built file; other URLs and bare package specifiers are returned unchanged.
 */
export function resolveBuiltModule(module: string): string {
  if (!module.startsWith('file:')) return module;
  const path = fileURLToPath(module);
  const match = /^(.*)([\\/])src([\\/].*)\.(?:m?ts|tsx)$/.exec(path);
  if (match === null) return module;
  const [, root, separator, rest] = match;
  return pathToFileURL(`${root}${separator}dist${rest}.js`).href;
}
