import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const echoTask: TaskDefinition<unknown, { input: unknown; threadId: number }>;
export declare const readingTask: TaskDefinition<object, { inherited: unknown; threadId: number }>;
export declare const copiedReadingTask: TaskDefinition<object, { inherited: unknown; threadId: number }>;
export declare const codedFailureTask: TaskDefinition<unknown, never>;
export declare const plainFailureTask: TaskDefinition<unknown, never>;
export declare const gateTask: TaskDefinition<{ gate: SharedArrayBuffer; timeoutMs: number }, { opened: boolean }>;
export declare const rendezvousTask: TaskDefinition<{ expected: number; timeoutMs: number }, { met: number }>;
export declare const sleepTask: TaskDefinition<{ ms: number }, { slept: number; threadId: number }>;
export declare const uncloneableLaterTask: TaskDefinition<{ ms: number }, unknown>;
export declare const batchMatesTask: TaskDefinition<unknown, { mates: number }>;
export declare const uncloneableNowTask: TaskDefinition<unknown, unknown>;
