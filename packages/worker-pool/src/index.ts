export { defineTask, isTaskDefinition, resolveBuiltModule } from './task.js';
export type { TaskDefinition, TaskInput, TaskOutput, TaskSpec } from './task.js';
export { createInlineTaskRunner } from './task-runner.js';
export type { InlineTaskRunnerOptions, RunTaskOptions, TaskRunner } from './task-runner.js';
export { tasksRunningInThisThread, trackTask } from './thread-activity.js';
export { UnknownTaskError } from './errors.js';
export { WorkerInitError, resolveWorkerInits, runWorkerInits } from './worker-init.js';
export type { InitWorker, ResolvedWorkerInit, WorkerInit } from './worker-init.js';
