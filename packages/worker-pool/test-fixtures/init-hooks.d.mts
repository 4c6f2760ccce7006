import type { TaskDefinition } from '@certsmith/worker-pool';

export declare function initWorker(data: unknown): Promise<void>;
export declare const initCallsTask: TaskDefinition<unknown, { calls: unknown[]; threadId: number }>;
