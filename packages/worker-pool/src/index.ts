export { defineTask, isTaskDefinition, resolveBuiltModule } from './task.js';
export type { TaskDefinition, TaskInput, TaskOutput, TaskSpec } from './task.js';
export { createInlineTaskRunner } from './task-runner.js';
export type { InlineTaskRunnerOptions, RunTaskOptions, TaskRunner } from './task-runner.js';
export { importWorkerModule, registerBundledModules } from './bundled-modules.js';
export type { BundledModuleLoader } from './bundled-modules.js';
export { runWorkerThread } from './worker-thread.js';
export { tasksRunningInThisThread, trackTask } from './thread-activity.js';
export { resolveWorkerInits, runWorkerInits } from './worker-init.js';
export type { InitWorker, ResolvedWorkerInit, WorkerInit } from './worker-init.js';
export { createWorkerPool, defaultWorkerCount, workerEntryUrl, DEFAULT_MESSAGE_TIMEOUT_MS, DEFAULT_THREADLESS_TASKS_PER_TURN, DEFAULT_WORKER_YOUNG_GENERATION_MB } from './worker-pool.js';
export type { CallerThreadOptions, WorkerPool, WorkerPoolOptions } from './worker-pool.js';
export { PrestartedWorkers, prestartWorkers } from './prestarted-workers.js';
export type { PrestartOptions } from './prestarted-workers.js';
export { DEFAULT_MAX_TASKS_PER_MESSAGE, defaultMaxTasksPerMessage } from './batching.js';
export { withoutEntryPointFlags, withoutResolveConditions, workerExecArgv } from './exec-argv.js';
export {
  ServiceUnavailableError,
  UnknownTaskError,
  WorkerCrashedError,
  WorkerInitError,
  WorkerStartError,
  WorkerStuckError,
} from './errors.js';
