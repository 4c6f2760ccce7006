/**
 * The primary process of `certsmith serve --processes N` (docs/adr/0004-http-threads.md): N
 * node:cluster worker processes serve the one port — node:cluster's round-robin hands each new
 * connection to the next one — and each is a whole server (`serve-worker.ts`). This process forks
 * the first one first thing, before it loads anything else, reads the trust files once for all of
 * them (`primary-trust.ts`), forks the others once the first listens, and keeps what must be one:
 *
 * - the certificate store: the workers resolve which store their options name and ask for it; the
 *   first request opens it (with its migrations: they run here only) and every worker gets it
 *   served over its IPC channel (`serveStore`), the default store's opening started while the
 *   workers load (`prestartServeStore`);
 * - `/metrics`: the worker that gets a scrape asks here, and gets every serving process's metrics
 *   to merge (`metrics-collection.ts`);
 * - the process's life: `certsmith listening on <url>` once every worker listens; a start-up
 *   failure printed once, as one process prints it, with its exit code; a worker that dies replaced
 *   (at most {@link MAX_RESTARTS} times); on SIGTERM/SIGINT the workers stop accepting and finish
 *   their requests, then the store is closed. A second signal ends everything at once (exit 1).
 *
 * One worker process (the first, or its replacement) runs the store-wide background work — the
 * scheduled tidy and the OCSP refresh — for all of them (`StartServerOptions.backgroundWork`).
 */
import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { DbConfig, MigrationMode, PrestartedStore, Store, StoreServer } from '@certsmith/cert-store';
import type { LogLevel } from '@certsmith/http-api';
import type { TrustSnapshot } from '@certsmith/bundler';
import type { TrustFileGuess } from '../serve-prestart.js';
import { MetricsCollector } from './metrics-collection.js';
import { createPrimaryLog } from './primary-log.js';
import { readTrustInThread } from './primary-trust.js';
import { BACKGROUND_WORK_ENV, SERVE_CHANNEL, isServeMessage } from './serve-messages.js';
import type { PrimaryMessage, WorkerMessage } from './serve-messages.js';

/** Options of {@link runServePrimary}. */
export interface ServePrimaryOptions {
  /** How many worker processes (2 or more). */
  processes: number;
  /** The command line after the executable (`serve …`): each worker process parses it as one process would. */
  args: readonly string[];
  /** The log level the command line asks for (`--loglevel`), for this process's own lines. */
  logLevel: LogLevel;
  /** Start opening the store the command line names by default (`prestartServeStore`); `undefined` when there is no guess. */
  prestartStore: () => Promise<PrestartedStore | undefined>;
  /** The trust files the command line names (`guessTrustFiles`), read here once for every worker; `undefined`: none. */
  trustFiles: TrustFileGuess | undefined;
  /** The workers' code bundle (`dist/worker.bundle.js`) when built: the thread that reads the trust files starts on it. */
  workerEntry: URL | undefined;
  /** Called once every worker listens: this process's start-up is over (`holdBackOptimisation`'s restore). */
  onStarted?: () => void;
}

/** Restarts of workers that died, at most, over the server's life: a worker that keeps dying is a fault, not bad luck. */
export const MAX_RESTARTS = 10;

/** Longest the workers get to stop on a signal: serve's shutdown timeout (10 s) and their own closing; then they are killed. */
const STOP_TIMEOUT_MS = 15_000;

interface WorkerState {
  readonly background: boolean;
  listened: boolean;
  served: StoreServer | null;
}

function send(worker: Worker, message: PrimaryMessage): void {
  // A worker that is exiting may close its channel between the check and the write (EPIPE): its
  // 'exit' tells the rest, so the write error is dropped here rather than thrown.
  if (worker.isConnected()) worker.send(message, () => {});
}

/**
 * Fork the worker processes, serve them the store and resolve once every one listens (having printed
 * `certsmith listening on <url>`). A start-up failure ends the process with the exit code one
 * process would have used; SIGTERM/SIGINT stop the server and end the process.
 */
export function runServePrimary(options: ServePrimaryOptions): Promise<void> {
  cluster.setupPrimary({
    exec: fileURLToPath(new URL('./serve-worker-process.js', import.meta.url)),
    args: [...options.args],
    // Structured clone: the store's values keep their dates, bigints and bytes.
    serialization: 'advanced',
    silent: false,
  });
  const log = createPrimaryLog(options.logLevel);
  // As one process: a server outlives its log reader (a closed pipe, `| head`); the line is lost.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') process.stderr.write(`certsmith: stdout: ${error.message}\n`);
  });
  const live = new Map<Worker, WorkerState>();
  const collector = new MetricsCollector(send);
  let started = false;
  let closing = false;
  let restarts = 0;
  let url = '';
  let store: { key: string; opening: Promise<Store> } | null = null;
  /** The store's servers of workers that exited, closing: the store is closed after them. */
  const storeServersClosing: Promise<void>[] = [];
  let onStarted: () => void = () => undefined;

  const fork = (background: boolean): void => {
    const worker = cluster.fork({ [BACKGROUND_WORK_ENV]: background ? '1' : '0' });
    const state: WorkerState = { background, listened: false, served: null };
    live.set(worker, state);
    // IPC errors of a worker that is going away; its 'exit' below is what counts.
    worker.on('error', () => undefined);
    worker.on('message', (message: unknown) => {
      if (isServeMessage(message)) onMessage(worker, state, message as WorkerMessage);
    });
    worker.once('exit', (code, signal) => onExit(worker, state, signal ?? `code ${code}`));
  };

  // First: one worker loads the whole server while this process reads the trust files on the other
  // core; the other workers start when it listens. On a machine with few cores, N processes loading
  // at once would each take N times as long, and the first answer would wait for all of them; this
  // way the first one answers about as soon as one process would (docs/deploy.md).
  fork(true);
  let othersForked = false;
  // Imported when a worker asks for the store (or earlier by the default store's prestart): not
  // while the first worker loads, with `--no-store`.
  let certStoreModule: Promise<typeof import('@certsmith/cert-store')> | null = null;
  const certStore = (): Promise<typeof import('@certsmith/cert-store')> => (certStoreModule ??= import('@certsmith/cert-store'));
  // Kept until every first worker listens (a replacement reads the files itself).
  let trust: Promise<TrustSnapshot | null> | null =
    options.trustFiles === undefined ? null : readTrustInThread(options.trustFiles, options.workerEntry).catch(() => null);
  // The default store's opening (when its file exists), taken by the first worker's request when that
  // is the store its options name.
  const prestartedStore = options.prestartStore().catch(() => undefined);

  const onMessage = (worker: Worker, state: WorkerState, message: WorkerMessage): void => {
    switch (message.type) {
      case 'open-store':
        serveStoreTo(worker, state, message.config, message.migrations);
        break;
      case 'trust-request': {
        const answer = (snapshot: TrustSnapshot | null): void => send(worker, { channel: SERVE_CHANNEL, type: 'trust-snapshot', snapshot });
        if (trust === null) answer(null);
        else void trust.then(answer);
        break;
      }
      case 'listening':
        state.listened = true;
        url = message.url;
        if (!othersForked) {
          othersForked = true;
          for (let index = 1; index < options.processes; index++) fork(false);
        }
        if (!started && [...live.values()].filter((each) => each.listened).length === options.processes) {
          started = true;
          process.stdout.write(`certsmith listening on ${url}\n`);
          // A guessed store no worker took (another store, or none) is not kept open.
          void prestartedStore.then((prestarted) => prestarted?.close());
          log.load();
          trust = null;
          options.onStarted?.();
          onStarted();
        }
        break;
      case 'failed':
        if (!started) void fail(message.stderr, message.exitCode);
        else log.error({ worker: worker.process.pid, reason: message.stderr.trim() }, 'a replacement worker process could not start');
        break;
      case 'collect-metrics':
        collector.collect(
          worker,
          message.id,
          [...live].filter(([, each]) => each.listened).map(([each]) => each),
        );
        break;
      case 'metrics-snapshot':
        collector.received(worker, message.id, message.snapshot);
        break;
    }
  };

  /** Open the store once (the first worker's request) and serve it to `worker`. */
  const serveStoreTo = (worker: Worker, state: WorkerState, config: DbConfig, migrations: MigrationMode): void => {
    const key = JSON.stringify([config.driver, config.dataSource, migrations]);
    store ??= { key, opening: openStoreOnce(config, migrations) };
    if (store.key !== key) {
      // Every worker parses the same command line in the same environment: this is a fault.
      send(worker, { channel: SERVE_CHANNEL, type: 'store-failed', code: null, message: 'the worker processes resolved different certificate stores' });
      return;
    }
    store.opening.then(
      async (opened) => {
        if (!live.has(worker)) return;
        const { serveStore, ipcChannel } = await certStore();
        state.served = serveStore(opened, ipcChannel(worker));
        send(worker, { channel: SERVE_CHANNEL, type: 'store-opened' });
      },
      (error: unknown) => {
        const code = (error as { code?: unknown } | null)?.code;
        send(worker, { channel: SERVE_CHANNEL, type: 'store-failed', code: typeof code === 'number' ? code : null, message: error instanceof Error ? error.message : String(error) });
      },
    );
  };

  const openStoreOnce = async (config: DbConfig, migrations: MigrationMode): Promise<Store> => {
    const prestarted = await prestartedStore;
    const taken = await prestarted?.take(config, migrations);
    if (taken !== undefined && taken !== null) return taken;
    const { openStore } = await certStore();
    return await openStore(config, { migrations });
  };

  const onExit = (worker: Worker, state: WorkerState, how: string): void => {
    live.delete(worker);
    collector.gone(worker);
    // Its client is gone: the subscriptions it held end (the store stays open for the others).
    if (state.served !== null) storeServersClosing.push(state.served.close());
    if (closing) return;
    const pid = worker.process.pid ?? '?';
    if (!started) {
      void fail(`certsmith: worker process ${pid} exited (${how}) before it listened\n`, 1);
      return;
    }
    if (restarts >= MAX_RESTARTS) {
      log.error({ worker: pid, exit: how, restarts, left: live.size }, `worker process exited; no more restarts after ${MAX_RESTARTS}`);
    } else {
      restarts++;
      log.warn({ worker: pid, exit: how, restarts }, 'worker process exited; starting another');
      fork(state.background);
    }
    if (live.size === 0) {
      log.error({}, 'no worker process left; stopping');
      void stop(1);
    }
  };

  /** Close the store after the last worker: every request has finished, so every record it waited for is committed. */
  const closeStore = async (): Promise<void> => {
    await Promise.all(storeServersClosing);
    if (store === null) return;
    try {
      await (await store.opening).close();
    } catch (error) {
      if (store !== null) log.warn({ err: error }, 'closing the certificate store failed');
    }
  };

  const exited = (worker: Worker): Promise<void> => new Promise((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve())));

  /** Stop every worker — listening ones after their in-flight requests, starting ones at once — then the store, then exit. */
  const stop = async (exitCode: number): Promise<never> => {
    closing = true;
    const workers = [...live];
    for (const [worker, state] of workers) {
      if (state.listened) send(worker, { channel: SERVE_CHANNEL, type: 'stop' });
      else worker.process.kill('SIGKILL');
    }
    const timer = setTimeout(() => {
      for (const [worker] of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    timer.unref();
    await Promise.all(workers.map(([worker]) => exited(worker)));
    clearTimeout(timer);
    await closeStore();
    await (await prestartedStore)?.close();
    log.info({}, 'stopped');
    await log.flushed();
    process.exit(exitCode);
  };

  /** Start-up failed: say it once, as one process would, and end with its exit code. */
  let failing = false;
  const fail = async (stderr: string, exitCode: number): Promise<void> => {
    if (failing) return;
    failing = true;
    closing = true;
    process.stderr.write(stderr);
    for (const worker of live.keys()) worker.process.kill('SIGKILL');
    await Promise.all([...live.keys()].map(exited));
    await closeStore();
    await (await prestartedStore)?.close();
    process.exit(exitCode);
  };

  let signalled = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      log.warn({ signal }, 'second signal, exiting now');
      for (const worker of live.keys()) worker.process.kill('SIGKILL');
      void log.flushed().then(() => process.exit(1));
      return;
    }
    signalled = true;
    log.info({ signal }, 'signal received');
    if (!failing) void stop(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  return new Promise<void>((resolve) => {
    onStarted = resolve;
  });
}
