/**
 * The runtime settings of the worker processes the leader of `serve --processes N` forks: its own
 * node flags (the executable's `--max-semi-space-size=4 --single-threaded-gc`, cli.ts) and two
 * memory settings that cut their peak under load — the RSS target counts the whole process tree
 * (docs/performance.md, "serve --processes 2 — leader serves"). An operator's own values win. The
 * executable sets the same malloc settings for itself (cli.ts), so a leader it started passes its
 * own on; these matter when the leader runs without them (`node dist/cli.js serve`).
 */

/**
 * glibc's malloc: at most 2 arenas (default 8 per core: each thread that allocates may get its own,
 * and their free pages stay), and free memory above 128 KiB returned to the system at once.
 */
const MALLOC_SETTINGS: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };

/**
 * V8's old generation capped at 192 MiB: V8 sizes its heap for the machine's memory and collects
 * late; a worker's live data is a few tens of MB (its trust pools, caches), so the cap makes it
 * collect before its heap grows far past that. Same req/s measured.
 */
const MAX_OLD_SPACE = '--max-old-space-size=192';

/** A worker process's environment: `env` with the malloc settings the operator did not set. */
export function workerProcessEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of Object.entries(MALLOC_SETTINGS)) result[name] ??= value;
  return result;
}

/** A worker process's node flags: this process's `execArgv`, with the old-space cap unless it or NODE_OPTIONS sets one. */
export function workerProcessExecArgv(execArgv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const sets = (text: string) => /--max-old-space-size\b|--max_old_space_size\b/.test(text);
  if (execArgv.some(sets) || sets(env['NODE_OPTIONS'] ?? '')) return [...execArgv];
  return [...execArgv, MAX_OLD_SPACE];
}
