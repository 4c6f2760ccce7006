import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const preloadedTask: TaskDefinition<void, boolean>;
