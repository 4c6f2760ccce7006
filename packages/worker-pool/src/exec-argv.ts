/**
 * Node flags for worker threads: the parent's, minus what a worker cannot or must not take.
 */
import { Worker } from 'node:worker_threads';

/**
 * Node flags for workers: the parent's, minus `--conditions`/`-C`. Workers run the built `dist/`
 * files; a parent started with the `@certsmith/source` condition (vitest does this) would otherwise
 * make workers resolve workspace packages to TypeScript sources, which Node 20 cannot load.
 */
export function withoutResolveConditions(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const arg = execArgv[i]!;
    if (arg === '--conditions' || arg === '-C') i += 1;
    else if (!arg.startsWith('--conditions=') && !(arg.startsWith('-C') && arg.length > 2)) kept.push(arg);
  }
  return kept;
}

/**
 * Node flags minus those that say how the parent's own entry point is given (`-e`/`--eval` and
 * `-p`/`--print` with their script, `--input-type`): a worker's entry is a file, and Node refuses
 * `--input-type` with one, so `node --input-type=module -e "…"` could not start a pool.
 */
export function withoutEntryPointFlags(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i += 1) {
    const arg = execArgv[i]!;
    if (arg === '-e' || arg === '--eval' || arg === '-p' || arg === '--print' || arg === '--input-type') i += 1;
    else if (!/^--(?:eval|print|input-type)=/.test(arg)) kept.push(arg);
  }
  return kept;
}

/**
 * Node flags a worker thread can take: {@link withoutResolveConditions} and
 * {@link withoutEntryPointFlags}, minus the per-process flags
 * Node refuses in a Worker's `execArgv` (`--perf-basic-prof`, `--max-semi-space-size`, `--trace-gc`,
 * `--v8-pool-size`…). Those already apply to the whole process, workers included; passed again they
 * would make every worker fail to start (`ERR_WORKER_INVALID_EXEC_ARGV`), so `node
 * --perf-basic-prof certsmith serve` could not serve. Node has no API that lists them: the list is
 * tried once on a Worker that is stopped at once, and the flags its error names are dropped. Most
 * servers run with no flags, and then nothing is tried.
 */
export function workerExecArgv(execArgv: readonly string[]): string[] {
  const kept = withoutEntryPointFlags(withoutResolveConditions(execArgv));
  if (kept.length === 0) return kept;
  // The answer depends on the flags only: probe once per distinct list (tests create many pools).
  const key = JSON.stringify(kept);
  let accepted = acceptedExecArgv.get(key);
  if (accepted === undefined) {
    accepted = probeWorkerExecArgv(kept);
    acceptedExecArgv.set(key, accepted);
  }
  return [...accepted];
}

/** {@link workerExecArgv}'s answers, by flag list. */
const acceptedExecArgv = new Map<string, readonly string[]>();

function probeWorkerExecArgv(kept: string[]): string[] {
  try {
    const probe = new Worker('', { eval: true, execArgv: kept, stdout: true, stderr: true });
    void probe.terminate();
    return kept;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_WORKER_INVALID_EXEC_ARGV') throw error;
    // Node's text: `Initiated Worker with invalid execArgv flags: --a, --b`.
    const listed = /flags: (.*)$/.exec((error as Error).message)?.[1]?.split(', ') ?? [];
    // Anything else in the text (`--cpu-prof-dir must be used with --cpu-prof`) is a real mistake.
    if (listed.length === 0 || !listed.every((flag) => kept.includes(flag))) throw error;
    const refused = new Set(listed);
    return kept.filter((arg) => !refused.has(arg));
  }
}
