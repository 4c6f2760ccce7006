/**
 * V8's optimising compiler held back while `certsmith serve` starts, and given its usual threshold
 * once the server listens.
 */
import { setFlagsFromString } from 'node:v8';

/** V8 11.3's (Node 20's) `--interrupt-budget`: what {@link holdBackOptimisation} restores. */
export const V8_11_3_INTERRUPT_BUDGET = 67_584;

/** How many times the usual budget a function runs before V8 optimises it, during start-up. */
export const START_UP_BUDGET_FACTOR = 4;

/**
 * The `--interrupt-budget` for start-up, or `undefined` to leave V8 as it is: on a V8 other than
 * 11.3, whose default (and whether the flag exists) this module does not know, and when node was
 * started with its own `--interrupt-budget`.
 */
export function startUpInterruptBudget(v8Version: string, execArgv: readonly string[]): number | undefined {
  if (!v8Version.startsWith('11.3.')) return undefined;
  if (execArgv.some((flag) => flag === '--interrupt-budget' || flag.startsWith('--interrupt-budget='))) return undefined;
  return V8_11_3_INTERRUPT_BUDGET * START_UP_BUDGET_FACTOR;
}

/**
 * Hold back V8's tier-up to its optimising compiler (TurboFan) for the whole process, worker threads
 * included, until the returned function is called: then V8 optimises as it usually does.
 * Why: start-up runs a lot of code a few hundred times — module loading, indexing the trust files —
 * and V8 optimised much of it on its helper threads, ≈100 ms of CPU on the two cores that the main
 * thread, the first worker and the SQLite thread already share, for code that runs only at start-up
 * (docs/performance.md#later-tier-up). With the usual threshold in the steady state, request
 * handlers are optimised as before: the larger budget all the time measured ≈4 % fewer bundles per
 * second. V8 reads the budget each time it resets a function's counter, so setting it at run time
 * (Node's `v8.setFlagsFromString`) takes effect from each function's next tick.
 */
export function holdBackOptimisation(v8Version: string = process.versions.v8, execArgv: readonly string[] = process.execArgv): () => void {
  const budget = startUpInterruptBudget(v8Version, execArgv);
  if (budget === undefined) return () => undefined;
  setFlagsFromString(`--interrupt-budget=${budget}`);
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    setFlagsFromString(`--interrupt-budget=${V8_11_3_INTERRUPT_BUDGET}`);
  };
}
