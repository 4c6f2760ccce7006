/**
 * The `bundle.warm-up` worker task: load the bundle context (trust pools, platforms) in a worker
 * before the server listens, so the first bundle request does not pay the load, the server's
 * readiness includes it, and a broken trust file stops start-up. Run once per worker with
 * {@link warmUpBundleWorkers}; a worker that starts later (a crashed one replaced) still loads on
 * its first bundle request.
 */
import type { ErrorPayload } from '@certsmith/x509-core';
import { toErrorPayload } from '@certsmith/x509-core';
import { defineTask } from '@certsmith/worker-pool';
import type { TaskRunner } from '@certsmith/worker-pool';
import { bundleContextFailedFile, loadBundleContext } from './bundle-context.js';
import type { BundleContextConfig, BundleContextFile } from './bundle-context.js';

/** Outcome of one warm-up: sizes of what loaded, or which file failed and how. */
export type BundleWarmUpOutcome =
  | { ok: true; roots: number; intermediates: number; platforms: number }
  | { ok: false; file: BundleContextFile | null; error: ErrorPayload };

/** Load `config` in this worker (kept for later bundle requests). Never throws. */
export const bundleWarmUpTask = defineTask({
  name: 'bundle.warm-up',
  module: import.meta.url,
  async run(config: BundleContextConfig): Promise<BundleWarmUpOutcome> {
    try {
      const context = await loadBundleContext(config);
      return { ok: true, roots: context.pools.roots.size, intermediates: context.pools.intermediates.size, platforms: context.platforms.length };
    } catch (error) {
      return { ok: false, file: bundleContextFailedFile(error), error: toErrorPayload(error) };
    }
  },
});

/**
 * Warm `workers` workers at once (one task each: a pool hands concurrent tasks to idle workers, and
 * each load takes long enough that no worker takes two). Resolves with the first outcome (a
 * failure if any worker failed).
 */
export async function warmUpBundleWorkers(runner: TaskRunner, config: BundleContextConfig, workers: number): Promise<BundleWarmUpOutcome> {
  const outcomes = await Promise.all(Array.from({ length: Math.max(1, workers) }, () => runner.run(bundleWarmUpTask, config)));
  return outcomes.find((outcome) => !outcome.ok) ?? (outcomes[0] as BundleWarmUpOutcome);
}
