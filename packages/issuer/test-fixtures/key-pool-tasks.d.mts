import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const keyPoolStatsTask: TaskDefinition<unknown, { [spec: string]: unknown } | null>;
