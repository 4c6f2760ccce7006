/**
 * How many processes `certsmith serve` runs (`--processes N`, docs/adr/0004-http-threads.md), decided
 * by the executable before it loads anything else: with more than one, its process becomes the
 * primary and loads none of the server. Imported first thing: it must stay light.
 */

/** Largest `--processes`. */
export const MAX_PROCESSES = 64;

/** `--processes` when it is not given: one process, the layout of an embedded `startServer`. */
export const DEFAULT_PROCESSES = 1;

/**
 * The process count `serve`'s command line asks for (`flags` as `readServeFlags` reads them, `args`
 * the raw arguments after `serve`). One when the value is not a count from 1 to
 * {@link MAX_PROCESSES} — the one process then reports the bad value as any bad flag, from the
 * program's own parsing — and when help is asked for.
 */
export function serveProcessCount(flags: ReadonlyMap<string, string>, args: readonly string[]): number {
  if (args.some((arg) => arg === '-h' || arg === '--help' || arg === '-help')) return 1;
  const value = flags.get('processes');
  if (value === undefined) return DEFAULT_PROCESSES;
  if (!/^\d+$/.test(value)) return 1;
  const count = Number(value);
  return count >= 1 && count <= MAX_PROCESSES ? count : 1;
}
