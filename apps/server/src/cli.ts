#!/usr/bin/env -S MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 node --max-semi-space-size=4 --single-threaded-gc
/**
 * `certsmith` executable. `certsmith serve …` starts the server, prints
 * `certsmith listening on <url>` on stdout (besides the JSON `listening` log line), and on SIGTERM or
 * SIGINT stops accepting, lets in-flight requests finish, stops the workers, closes the signers and
 * exits 0. A second signal exits at once with code 1. Startup failures print `certsmith: <message>
 * (code N)` on stderr and exit 1 for usage errors, 2 when the config file or a signer cannot be
 * loaded.
 *
 * The executable runs node with two V8 flags (the shebang; `npm start` and the benchmark pass the
 * same ones; they are per-process flags, so they cannot be set from inside the server):
 * - `--max-semi-space-size=4`: the event loop's young generation at most 3 × 4 MiB, as each
 *   worker's (`maxYoungGenerationSizeMb`): see docs/performance.md#small-young-generations.
 * - `--single-threaded-gc`: each thread collects its own garbage instead of waking V8's helper
 *   threads, whose wake-ups compete for few cores: see docs/performance.md#one-gc-thread-per-thread.
 *   Setting it at run time (`v8.setFlagsFromString`) crashes V8 at the next full GC.
 * It also sets two glibc malloc settings, which glibc reads only as the process starts: at most 2
 * arenas, and free memory above 128 KiB handed back at once (cluster/worker-process-settings.ts
 * says why; the processes `serve --processes N` forks inherit them).
 */
import { existsSync } from 'node:fs';
import { prestartWorkers } from '@certsmith/worker-pool/prestart';
import { CODE_CACHE_FILES, loadBundle } from './bundle-loader.js';
import type { ServerOptionsInput } from './server-options.js';
import type { TrustSnapshot } from '@certsmith/bundler';
import { guessTrustFiles, prestartServeStore, readServeFlags, serveWorkerPrestart } from './serve-prestart.js';
import { holdBackOptimisation } from './start-up-tiering.js';
import { serveProcessCount } from './cluster/process-count.js';

// `serve` starts its worker threads first, before this thread imports the server (≈0.4 s on a
// 2-core AMD EPYC): both then load at once, on two cores (docs/performance.md, start-up). The first
// worker then reads the trust files the command line names, and the store the command line names
// starts opening as soon as the store's own modules are loaded: the server uses both when its
// resolved options name the same files and store (serve-prestart.ts). The other commands import
// only what they need.
const serveArgs = process.argv[2] === 'serve' ? readServeFlags(process.argv.slice(3)) : undefined;
// `serve --processes N` with N > 1: this process starts exactly as one process does and is the
// first of the N serving processes (cluster/serve-leader.ts); once it listens, it forks the others.
const processes = serveArgs === undefined ? 1 : serveProcessCount(serveArgs, process.argv.slice(3));
const serveFlags = serveArgs;
// Before any thread starts: V8 optimises less of the code that runs only while `serve` starts, and
// as usual once it listens (start-up-tiering.ts).
const restoreOptimisation = serveArgs === undefined ? undefined : holdBackOptimisation();
const trustFiles = serveArgs === undefined ? undefined : guessTrustFiles(serveArgs);
// The workers' code bundled into one file by `npm run build` when it is there
// (scripts/bundle-worker.mjs): the threads start on it and reach the trust files sooner than when they
// load each module's file (docs/performance.md, start-up pass 4).
const workerBundle = new URL('./worker.bundle.js', import.meta.url);
const workerEntry = serveArgs !== undefined && existsSync(workerBundle) ? workerBundle : undefined;
// `--workers 0`: the server starts no worker thread (every task on the event loop), so none is
// prestarted, and the trust files are read by this thread while the server starts. It is the
// default with more than one process (the other processes use the other cores).
const workersFlag = serveFlags?.get('workers');
const threadless = workersFlag === undefined ? processes > 1 : /^0+$/.test(workersFlag);
const prestarted =
  serveFlags === undefined || threadless
    ? undefined
    : prestartWorkers({
        ...(workerEntry === undefined ? {} : { workerEntry }),
        ...serveWorkerPrestart(trustFiles),
      });
// Awaited before the server is imported: the store's own modules load first, so its thread starts
// now rather than when every module of the server has been read.
const prestartedStore = serveFlags === undefined ? undefined : await prestartServeStore(serveFlags).catch(() => undefined);
// The program and the server: bundled into one file by `npm run build` when it is there, run with
// the code cache made for this command's V8 flags (bundle-loader.ts), else the compiled modules
// (cli-runtime.ts).
const bundled = new URL('./cli-runtime.bundle.cjs', import.meta.url);
const runtime = (
  existsSync(bundled) ? loadBundle(bundled, serveArgs === undefined ? CODE_CACHE_FILES.command : CODE_CACHE_FILES.serve).exports : await import('./cli-runtime.js')
) as typeof import('./cli-runtime.js');

async function serve(input: ServerOptionsInput): Promise<void> {
  const { isCodedError, startServer, startupExitCode, createServeLeader, WORKER_PROCESS_THREADS } = runtime;
  // With --processes N: this process's server shares its socket with the N−1 it forks once it listens.
  const leader = processes > 1 ? createServeLeader({ processes, args: process.argv.slice(2) }) : undefined;
  // A server outlives its log reader: when stdout's reader goes away (a closed pipe, `| head`),
  // writes fail with EPIPE and an unhandled stream error would stop the process. Keep serving;
  // the log lines are lost either way.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') process.stderr.write(`certsmith: stdout: ${error.message}\n`);
  });
  let server;
  try {
    const store = prestartedStore;
    const trustSnapshot = prestarted?.taskResult;
    server = await startServer({
      ...input,
      ...(leader === undefined ? {} : { workers: input.workers ?? WORKER_PROCESS_THREADS, ...leader.serverOptions }),
      ...(prestarted === undefined ? {} : { prestartedWorkers: prestarted }),
      ...(workerEntry === undefined ? {} : { workerEntry }),
      ...(store === undefined ? {} : { prestartedStore: store }),
      ...(trustFiles === undefined || trustSnapshot === undefined ? {} : { prestartedTrust: { files: trustFiles, snapshot: trustSnapshot as Promise<TrustSnapshot> } }),
    });
  } catch (error) {
    const code = isCodedError(error) ? ` (code ${error.code})` : '';
    process.stderr.write(`certsmith: ${error instanceof Error ? error.message : String(error)}${code}\n`);
    // 1: usage (flags, unreadable flag files); 2: the config file or a signer cannot be loaded.
    process.exit(startupExitCode(error));
  }
  // The JSON log is written asynchronously: let the start-up lines out first, so the plain line
  // stays the last line of start-up (scripts wait for it).
  const announce = (): Promise<void> =>
    new Promise((resolve) =>
      server.logger.flush(() => {
        process.stdout.write(`certsmith listening on ${server.url}\n`);
        resolve();
      }),
    );
  if (leader === undefined) await announce();
  // With --processes N this process answers already; the line waits until every process listens,
  // so that scripts and benchmarks waiting for it reach all of them.
  else leader.started(server, () => void announce());
  restoreOptimisation?.();

  const running = server;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      running.logger.warn({ signal }, 'second signal, exiting now');
      leader?.kill();
      process.exit(1);
    }
    stopping = true;
    running.logger.info({ signal }, 'signal received');
    // With --processes: the other processes stop with this one's server (its connection source), and its store closes after them.
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        running.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

await runtime.createProgram({ serve }).parseAsync(process.argv.slice(2), { from: 'user' });
