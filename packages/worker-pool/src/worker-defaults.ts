/**
 * Where a pool's worker threads come from and their default settings, apart from the pool itself:
 * {@link prestartWorkers} starts threads with the same settings before a pool exists, and must stay
 * light to import (it runs first thing in the `certsmith` executable).
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { resolveBuiltModule } from './task.js';

/** Default young generation limit of each worker thread, MiB (semi-spaces of 4 MiB). */
export const DEFAULT_WORKER_YOUNG_GENERATION_MB = 12;

/**
 * Default size of a pool: one worker per CPU but one, at least one. The event loop needs a core of
 * its own (it parses and answers every request, and hands work to the workers); with as many workers
 * as CPUs the busy threads contend for the cores, and each worker holds its own trust data (see
 * docs/performance.md#one-worker-per-core-but-one).
 */
export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * Location of the worker entry. Always the built `dist/worker-entry.js`: under vitest this module is
 * `src/worker-defaults.ts`, and {@link resolveBuiltModule} maps the sibling source to it.
 */
export function workerEntryUrl(): string {
  return resolveBuiltModule(new URL(import.meta.url.endsWith('.ts') ? './worker-entry.ts' : './worker-entry.js', import.meta.url).href);
}

/** The file a thread starts on: `entry` (a path or `file:` URL), default {@link workerEntryUrl}'s. */
export function workerEntryPath(entry?: string | URL): string {
  if (entry === undefined) return fileURLToPath(workerEntryUrl());
  return entry instanceof URL || entry.startsWith('file:') ? fileURLToPath(entry) : entry;
}
