/**
 * The runtime settings of the worker processes the leader of `serve --processes N` forks: its own
 * node flags (the executable's `--max-semi-space-size=4 --single-threaded-gc --max-old-space-size=1024`,
 * cli.ts) and two memory settings that cut their peak under load — the RSS target counts the whole process tree
 * (docs/performance.md, "serve --processes 2 — leader serves"). An operator's own values win.
 */

/**
 * glibc's malloc: at most 2 arenas (default 8 per core: each thread that allocates may get its own,
 * and their free pages stay), and free memory above 128 KiB returned to the system at once.
 */
const MALLOC_SETTINGS: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' };

/**
 * The executable's old-generation limit (src/cli.ts), for a leader started without it (`node
 * dist/cli.js serve`): with no limit V8 sizes its heap for the machine's memory and lets the old
 * generation grow to 4× its live data between full collections; a worker process's live data is a
 * few tens of MB. Forks otherwise inherit the leader's flags, this one included.
 */
const MAX_OLD_SPACE = '--max-old-space-size=1024';

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
