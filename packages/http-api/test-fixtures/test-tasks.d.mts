import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const codedFailureTask: TaskDefinition<unknown, never>;
export declare const plainFailureTask: TaskDefinition<unknown, never>;
export declare const gateTask: TaskDefinition<{ gate: SharedArrayBuffer; timeoutMs: number }, { opened: boolean }>;
