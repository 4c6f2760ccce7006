/**
 * The first process of `certsmith serve --processes N` (docs/adr/0004-http-threads.md): the leader.
 * It starts exactly as one process does — the same prestart, the store opened here with its
 * migrations, the trust files read here, the background work (tidy, OCSP refresh, trust check) here
 * — and answers its first request as soon as one process would. It owns the listening socket
 * (`shared-listener.ts`) and serves its share of the connections itself. Only once it listens does
 * it fork the N−1 worker processes (`serve-worker.ts`), which are off the critical path; then it
 * - hands each new connection, in turn, to one of the processes that are ready, itself included;
 * - serves them a SQLite certificate store over their IPC channel (`serveStore`); with PostgreSQL
 *   each opens a pool of its own (`worker-postgres-store.ts`) and nothing crosses the channel;
 * - collects every process's metrics for a `/metrics` scrape in any of them (`metrics-collection.ts`);
 * - replaces a worker that dies (at most {@link MAX_RESTARTS} times; its connections are lost with
 *   it, new ones go to the others);
 * - when its server closes (SIGTERM/SIGINT), stops accepting and stops the workers with its own
 *   server (each after its in-flight requests); its store is closed after every worker exited.
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ipcChannel, serveStore } from '@certsmith/cert-store';
import type { StoreServer } from '@certsmith/cert-store';
import { renderAggregatedMetrics } from '@certsmith/http-api';
import type { ApiServer, ListeningAddress, ServerMetrics } from '@certsmith/http-api';
import { Server as TlsServer } from 'node:tls';
import type { ConnectionSource } from '../connection-source.js';
import type { RunningServer, StartServerOptions } from '../start-server.js';
import { HandedConnections } from './handed-connections.js';
import { MetricsCollector } from './metrics-collection.js';
import { LISTENING_ADDRESS_ENV, SERVE_CHANNEL, isServeMessage } from './serve-messages.js';
import type { LeaderMessage, WorkerMessage } from './serve-messages.js';
import { SharedListener } from './shared-listener.js';
import type { ConnectionTarget } from './shared-listener.js';
import { workerProcessEnv, workerProcessExecArgv } from './worker-process-settings.js';

/** Restarts of workers that died, at most, over the server's life: a worker that keeps dying is a fault, not bad luck. */
export const MAX_RESTARTS = 10;

/** Longest the workers get to stop on a signal: serve's shutdown timeout (10 s) and their own closing; then they are killed. */
const STOP_TIMEOUT_MS = 15_000;

/** Options of {@link createServeLeader}. */
export interface ServeLeaderOptions {
  /** How many serving processes in all, this one included (2 or more). */
  processes: number;
  /** The command line after the executable (`serve …`): each worker process parses it as one process would. */
  args: readonly string[];
}

/** The leader's part of `serve --processes N`, around this process's own server. */
export interface ServeLeader {
  /** What this process's `startServer` gets: the shared listening socket, `/metrics` of every process, the pid in its log lines. */
  readonly serverOptions: Pick<StartServerOptions, 'connections' | 'metricsView' | 'logFields'>;
  /**
   * This process's server listens (and answers): fork the other processes. `onStarted` is called
   * once every process listens — or once one of the first ones has failed to start, so that what
   * waits for it is not held by a process that is being replaced.
   */
  started(server: RunningServer, onStarted: () => void): void;
  /** End every worker process at once (a second signal). */
  kill(): void;
}

interface WorkerState {
  readonly child: ChildProcess;
  readonly target: ConnectionTarget;
  ready: boolean;
  served: StoreServer | null;
}

function send(child: ChildProcess, message: LeaderMessage, socket?: Socket): boolean {
  // A worker that is exiting may close its channel between the check and the write (EPIPE): its
  // 'exit' tells the rest, so the write error is dropped here rather than thrown.
  if (!child.connected) return false;
  if (socket === undefined) child.send(message, () => undefined);
  else child.send(message, socket, { keepOpen: false }, () => undefined);
  return true;
}

/** The leader of `serve --processes N` (see the module's comment). */
export function createServeLeader(options: ServeLeaderOptions): ServeLeader {
  const entry = fileURLToPath(new URL('./serve-worker-process.js', import.meta.url));
  const workers = new Map<ChildProcess, WorkerState>();
  const collector = new MetricsCollector<ChildProcess>((child, message) => void send(child, message));
  let listener: SharedListener | null = null;
  let local: HandedConnections | null = null;
  let address: ListeningAddress | null = null;
  let running: RunningServer | null = null;
  let ownMetrics: ServerMetrics | null = null;
  let stopping = false;
  let restarts = 0;
  let allListening = false;
  let onStarted: (() => void) | null = null;
  const announceStarted = (): void => {
    const announce = onStarted;
    onStarted = null;
    announce?.();
  };
  /** The store's servers of workers that exited: the store is closed after them. */
  const storeServersClosing: Promise<void>[] = [];

  const ready = (): ChildProcess[] => [...workers.values()].filter((state) => state.ready).map((state) => state.child);
  const collect = () => collector.collect(ready(), async () => await ownMetrics!.snapshot());

  const connections: ConnectionSource = {
    servesMetricsAddress: true,
    async attach(server: ApiServer, port: number, host: string) {
      const handed = new HandedConnections(server);
      local = handed;
      // The server's connection limit is the whole server's, counted where the connections arrive.
      const limit = Number.isFinite(server.maxConnections) ? server.maxConnections : 0;
      // The server logs refused connections on 'drop' (createHttpServer), as when it listens itself.
      const shared = new SharedListener({ maxConnections: limit, onDrop: () => void server.emit('drop') });
      listener = shared;
      const own: ConnectionTarget = {
        take: (socket) => {
          handed.accept(socket, () => shared.released(own));
          return true;
        },
      };
      shared.add(own);
      const bound = await shared.listen(port, host);
      const hostPart = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
      address = { address: bound.address, port: bound.port, url: `${server instanceof TlsServer ? 'https' : 'http'}://${hostPart}:${bound.port}` };
      return address;
    },
    async detach(_server, timeoutMs) {
      // Every process stops at once — no new connection anywhere, each finishes its in-flight
      // requests — and this process's server closes the store (reached by the others through it)
      // only after this resolves: after every other process exited.
      listener?.close();
      const [finished] = await Promise.all([local?.close(timeoutMs) ?? true, stopWorkers()]);
      return finished;
    },
  };

  const forkWorker = (): void => {
    const child = fork(entry, [...options.args], {
      serialization: 'advanced',
      execArgv: workerProcessExecArgv(process.execArgv, process.env),
      env: { ...workerProcessEnv(process.env), [LISTENING_ADDRESS_ENV]: JSON.stringify(address) },
    });
    const target: ConnectionTarget = {
      take: (socket) => send(child, { channel: SERVE_CHANNEL, type: 'connection' }, socket),
    };
    const state: WorkerState = { child, target, ready: false, served: null };
    workers.set(child, state);
    // IPC errors of a worker that is going away; its 'exit' below is what counts.
    child.on('error', () => undefined);
    child.on('message', (message: unknown) => {
      if (isServeMessage(message)) onMessage(state, message as WorkerMessage);
    });
    child.once('exit', (code, signal) => onExit(state, signal ?? `code ${code}`));
  };

  const onMessage = (state: WorkerState, message: WorkerMessage): void => {
    const { child } = state;
    switch (message.type) {
      case 'open-store': {
        const store = running?.store ?? null;
        // Every process parses the same command line in the same environment: they name the same store.
        if (store === null) send(child, { channel: SERVE_CHANNEL, type: 'store-failed', code: null, message: 'the first process has no certificate store to serve' });
        else {
          state.served = serveStore(store, ipcChannel(child));
          send(child, { channel: SERVE_CHANNEL, type: 'store-opened' });
        }
        break;
      }
      case 'listening':
        if (stopping) break;
        state.ready = true;
        listener?.add(state.target);
        // Once: scripts and benchmarks that need every process (not only the first answer) wait for it.
        if (!allListening && ready().length === options.processes - 1) {
          allListening = true;
          running?.logger.info({ processes: options.processes, pids: [process.pid, ...ready().map((each) => each.pid)] }, 'every serving process listens');
          announceStarted();
        }
        break;
      case 'failed':
        running?.logger.error({ worker: child.pid, reason: message.stderr.trim(), exitCode: message.exitCode }, 'a worker process could not start');
        break;
      case 'connection-closed':
        listener?.released(state.target);
        break;
      case 'collect-metrics':
        collect().then(
          (snapshots) => send(child, { channel: SERVE_CHANNEL, type: 'metrics-collected', id: message.id, snapshots }),
          () => send(child, { channel: SERVE_CHANNEL, type: 'metrics-collected', id: message.id, snapshots: [] }),
        );
        break;
      case 'metrics-snapshot':
        collector.received(child, message.id, message.snapshot);
        break;
    }
  };

  const onExit = (state: WorkerState, how: string): void => {
    const { child } = state;
    workers.delete(child);
    // Its connections closed with it.
    listener?.remove(state.target, { gone: true });
    collector.gone(child);
    // Its client is gone: the subscriptions it held end (the store stays open for the others).
    if (state.served !== null) storeServersClosing.push(state.served.close());
    if (!state.ready) announceStarted();
    if (stopping) return;
    const logger = running?.logger;
    if (restarts >= MAX_RESTARTS) {
      logger?.error({ worker: child.pid, exit: how, restarts }, `worker process exited; no more restarts after ${MAX_RESTARTS}`);
      return;
    }
    restarts++;
    logger?.warn({ worker: child.pid, exit: how, restarts }, 'worker process exited; starting another');
    forkWorker();
  };

  /** Stop every worker process — ready ones after their in-flight requests, starting ones at once — and their store servers. */
  const stopWorkers = async (): Promise<void> => {
    stopping = true;
    const children = [...workers.values()];
    for (const state of children) {
      listener?.remove(state.target);
      if (state.ready) send(state.child, { channel: SERVE_CHANNEL, type: 'stop' });
      else state.child.kill('SIGKILL');
    }
    const timer = setTimeout(() => {
      for (const { child } of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    timer.unref();
    await Promise.all(children.map(({ child }) => exited(child)));
    clearTimeout(timer);
    await Promise.all(storeServersClosing);
  };

  const exited = (child: ChildProcess): Promise<void> =>
    new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));

  return {
    serverOptions: {
      connections,
      metricsView: (metrics) => {
        ownMetrics = metrics;
        return { contentType: metrics.contentType, render: async () => await renderAggregatedMetrics(await collect()) };
      },
      logFields: { pid: process.pid },
    },
    started(server, whenStarted) {
      running = server;
      onStarted = whenStarted;
      for (let index = 1; index < options.processes; index++) forkWorker();
    },
    kill() {
      stopping = true;
      for (const child of workers.keys()) child.kill('SIGKILL');
    },
  };
}
