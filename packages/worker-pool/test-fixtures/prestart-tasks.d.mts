import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const preloadedTask: TaskDefinition<void, boolean>;
export declare const doubleTask: TaskDefinition<number, { doubled: number; preloaded: boolean }>;
export declare const failingTask: TaskDefinition<void, never>;
