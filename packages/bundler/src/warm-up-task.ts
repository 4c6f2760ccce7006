/**
 * The `bundle.warm-up` worker task: load the bundle context (trust pools, platforms) in a worker
 * before the server listens, so the first bundle request does not pay the load, the server's
 * readiness includes it, and a broken trust file stops start-up. Run once per worker with
 * {@link warmUpBundleWorkers}, usually with the {@link TrustSnapshot} the main thread read while
 * the workers started (then a worker builds its pools from it: no file read, no parse). A worker
 * that starts later (a crashed one replaced) loads the files on its first bundle request.
 */
import type { ErrorPayload } from '@certsmith/x509-core';
import { toErrorPayload } from '@certsmith/x509-core';
import { defineTask } from '@certsmith/worker-pool';
import type { TaskRunner } from '@certsmith/worker-pool';
import { bundleContextFailedFile, loadBundleContext } from './bundle-context.js';
import type { BundleContextConfig, BundleContextFile } from './bundle-context.js';
import type { TrustSnapshot } from './trust-snapshot.js';

/** Input of {@link bundleWarmUpTask}. */
export interface BundleWarmUpInput {
  /** The config bundle requests will carry (its JSON is the key the loaded context is kept under). */
  context: BundleContextConfig;
  /** The config's files, already read; absent = the worker reads them. */
  snapshot?: TrustSnapshot;
}

/** Outcome of one warm-up: sizes of what loaded, or which file failed and how. */
export type BundleWarmUpOutcome =
  | { ok: true; roots: number; intermediates: number; platforms: number }
  | { ok: false; file: BundleContextFile | null; error: ErrorPayload };

/** Load the context in this worker (kept for later bundle requests). Never throws. */
export const bundleWarmUpTask = defineTask({
  name: 'bundle.warm-up',
  module: import.meta.url,
  async run(input: BundleWarmUpInput): Promise<BundleWarmUpOutcome> {
    try {
      const context = await loadBundleContext(input.context, input.snapshot);
      return { ok: true, roots: context.pools.roots.size, intermediates: context.pools.intermediates.size, platforms: context.platforms.length };
    } catch (error) {
      return { ok: false, file: bundleContextFailedFile(error), error: toErrorPayload(error) };
    }
  },
});

/**
 * The `bundle.prepare` worker task: does nothing but make the worker import this module, and with
 * it the bundle context's code (chain-builder, ubiquity-rules), which is about a fifth of a fresh
 * worker's start-up. Sent as soon as a pool is created ({@link prepareBundleWorkers}), it runs while
 * the main thread still reads the trust files, so the warm-up that follows only builds the pools.
 */
export const bundlePrepareTask = defineTask({
  name: 'bundle.prepare',
  module: import.meta.url,
  run(): true {
    return true;
  },
});

/**
 * Have up to `workers` workers import the bundle code now ({@link bundlePrepareTask}); resolves when
 * they have. A worker that a pool does not reach this way imports it on its warm-up instead.
 */
export async function prepareBundleWorkers(runner: TaskRunner, workers: number): Promise<void> {
  await Promise.all(Array.from({ length: Math.max(1, workers) }, () => runner.run(bundlePrepareTask, undefined)));
}

/**
 * Warm `workers` workers at once (one task each: a pool hands concurrent tasks to idle workers, and
 * each load takes long enough that no worker takes two). Resolves with the first outcome (a
 * failure if any worker failed).
 */
export async function warmUpBundleWorkers(runner: TaskRunner, input: BundleWarmUpInput, workers: number): Promise<BundleWarmUpOutcome> {
  const outcomes = await Promise.all(Array.from({ length: Math.max(1, workers) }, () => runner.run(bundleWarmUpTask, input)));
  return outcomes.find((outcome) => !outcome.ok) ?? (outcomes[0] as BundleWarmUpOutcome);
}
