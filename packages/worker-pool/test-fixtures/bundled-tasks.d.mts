import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const BUNDLED_MODULE: string;
export declare function initWorker(data: unknown): void;
export declare const bundledTask: TaskDefinition<unknown, { input: unknown; initData: unknown; entry: boolean }>;
