/**
 * How many processes `certsmith serve` runs (`--processes N`, docs/adr/0004-http-threads.md), decided
 * by the executable before it loads anything else: with more than one, the process started forks the
 * others once it serves. Imported first thing: it must stay light (node:os is built in).
 */
import { availableParallelism } from 'node:os';

/** Largest `--processes`. */
export const MAX_PROCESSES = 64;

/** Most processes `serve` runs when `--processes` is not given, however many CPUs the machine has. */
export const MAX_DEFAULT_PROCESSES = 8;

/**
 * `--processes` when it is not given: one serving process per CPU the process may use, at most
 * {@link MAX_DEFAULT_PROCESSES} (as `ocspserve --workers`), so that `serve` keeps every core busy
 * out of the box (ADR 0004: one event loop cannot). An embedded `startServer` is always one process.
 */
export const DEFAULT_PROCESSES = Math.min(availableParallelism(), MAX_DEFAULT_PROCESSES);

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
