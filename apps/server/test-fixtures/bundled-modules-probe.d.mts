import type { TaskDefinition } from '@certsmith/worker-pool';

export declare const bundledModulesProbeTask: TaskDefinition<void, string[]>;
