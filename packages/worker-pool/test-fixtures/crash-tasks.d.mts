import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const exitTask: TaskDefinition<{ code?: number }, never>;
export declare const uncaughtTask: TaskDefinition<unknown, never>;
export declare const whoTask: TaskDefinition<unknown, { threadId: number }>;
export declare const delayedExitTask: TaskDefinition<{ ms: number }, never>;
export declare const stuckTask: TaskDefinition<{ counter: SharedArrayBuffer; blockMs: number; always?: boolean }, { attempt: number; threadId: number }>;
