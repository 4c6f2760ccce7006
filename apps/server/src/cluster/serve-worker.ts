/**
 * A worker process of `certsmith serve --processes N` (the leader, `serve-leader.ts`, forks it once
 * its own server listens): it parses the command line as one process would and starts a whole
 * server, except that
 * - it does not listen: the leader owns the socket and hands it connections (`'connection'`
 *   messages with the socket), which it serves as its own (`handed-connections.ts`);
 * - the certificate store: with PostgreSQL, a pool of its own (`worker-postgres-store.ts`), without
 *   migrations; with SQLite, the leader's, reached over IPC (`connectStore`), no migrations;
 * - it has no worker threads unless `--workers` asks for them: every task runs on its event loop,
 *   and the other processes use the other cores (docs/adr/0004-http-threads.md);
 * - the store-wide background work (tidy, OCSP refresh, trust check, the store's gauges) is the leader's;
 * - `/metrics` answers every serving process's metrics, merged; `/health` answers for this process;
 * - `--metrics-address` is the leader's listener;
 * - its log lines carry its `pid`.
 *
 * It reports to the leader instead of printing: ready, or what one process would have printed on
 * stderr and its exit code. SIGINT and SIGTERM are the leader's (a terminal's Ctrl-C reaches the
 * whole process group): it stops when the leader says so, after its in-flight requests. If the
 * leader dies, this process ends too (its IPC channel closes).
 */
import { CommanderError } from 'commander';
import { connectStore, ipcChannel } from '@certsmith/cert-store';
import type { DbConfig, MigrationMode, Store } from '@certsmith/cert-store';
import { renderAggregatedMetrics } from '@certsmith/http-api';
import type { MetricsSnapshot } from '@certsmith/http-api';
import { CertsmithError, isCodedError } from '@certsmith/x509-core';
import { createProgram } from '../cli-program.js';
import { startupExitCode } from '../errors.js';
import { startServer } from '../start-server.js';
import type { RunningServer } from '../start-server.js';
import type { ConnectionSource } from '../connection-source.js';
import type { ListeningAddress } from '@certsmith/http-api';
import type { Socket } from 'node:net';
import { HandedConnections } from './handed-connections.js';
import { openWorkerPostgresStore } from './worker-postgres-store.js';
import { LISTENING_ADDRESS_ENV, SERVE_CHANNEL, isServeMessage } from './serve-messages.js';
import type { LeaderMessage, WorkerMessageBody } from './serve-messages.js';

/**
 * Worker threads of a worker process when `--workers` is not given: none, every task on its event
 * loop — the other processes use the other cores, and each thread would hold its own copy of the
 * trust pools (docs/adr/0004-http-threads.md).
 */
export const WORKER_PROCESS_THREADS = 0;

/** Longest a `/metrics` request waits for the leader's collection (which itself waits at most 5 s per worker). */
const COLLECT_TIMEOUT_MS = 10_000;

type Distribute<T> = T extends { type: infer K } ? [K, T] : never;
type MessageOf<K extends LeaderMessage['type']> = Extract<Distribute<LeaderMessage>, [K, unknown]>[1];

function send(message: WorkerMessageBody): void {
  // The leader is gone: this process is ending too (on the disconnect).
  if (process.connected) process.send!({ ...message, channel: SERVE_CHANNEL }, undefined, {}, () => undefined);
}

/** This process's messages from the leader, by type (a `'connection'` message comes with its socket). */
function listen(): <K extends LeaderMessage['type']>(type: K, handler: (message: MessageOf<K>, socket: Socket | undefined) => void) => void {
  const handlers = new Map<string, (message: LeaderMessage, socket: Socket | undefined) => void>();
  process.on('message', (message: unknown, socket: unknown) => {
    if (isServeMessage(message)) handlers.get((message as LeaderMessage).type)?.(message as LeaderMessage, socket as Socket | undefined);
  });
  return (type, handler) => handlers.set(type, handler as (message: LeaderMessage, socket: Socket | undefined) => void);
}

/**
 * The connections the leader hands this process, served by its server: each reported to the leader
 * when it closes (the leader counts the server's open connections against `--max-connections`).
 */
function handedConnections(on: ReturnType<typeof listen>): ConnectionSource {
  const address = JSON.parse(process.env[LISTENING_ADDRESS_ENV] ?? 'null') as ListeningAddress | null;
  if (address === null) throw new Error(`a worker process of serve --processes needs ${LISTENING_ADDRESS_ENV} (set by the first process)`);
  let handed: HandedConnections | null = null;
  const closed = (): void => send({ type: 'connection-closed' });
  on('connection', (_message, socket) => {
    if (socket === undefined) return;
    if (handed === null) {
      // Not serving yet (the leader hands none before 'listening'): refused, and counted back.
      socket.destroy();
      closed();
    } else handed.accept(socket, closed);
  });
  return {
    servesMetricsAddress: false,
    async attach(server) {
      handed = new HandedConnections(server);
      return address;
    },
    async detach(_server, timeoutMs) {
      return (await handed?.close(timeoutMs)) ?? true;
    },
  };
}

/**
 * Run this worker process: start its server, or report why it could not start. `restoreOptimisation`
 * ends the start-up's held-back optimisation (`holdBackOptimisation`, called by the process's entry
 * before it loaded the server) once the server listens.
 */
export async function runServeWorker(restoreOptimisation: () => void): Promise<void> {
  const on = listen();
  let running: RunningServer | null = null;
  // The leader is gone (or this process gave up its channel): nothing hands connections here any more.
  process.once('disconnect', () => process.exit(0));

  on('stop', () => {
    if (running === null) process.exit(0);
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        running?.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
  on('snapshot-metrics', ({ id }) => {
    const reading = running === null ? Promise.resolve(null) : running.metrics.snapshot();
    reading.then(
      (snapshot) => send({ type: 'metrics-snapshot', id, snapshot }),
      () => send({ type: 'metrics-snapshot', id, snapshot: null }),
    );
  });

  // `/metrics` here: every serving process's registry, collected by the leader, merged here.
  let nextCollection = 0;
  const collections = new Map<number, (snapshots: MetricsSnapshot[]) => void>();
  on('metrics-collected', ({ id, snapshots }) => collections.get(id)?.(snapshots));
  const collectMetrics = (): Promise<MetricsSnapshot[]> =>
    new Promise((resolve, reject) => {
      const id = nextCollection++;
      const timer = setTimeout(() => {
        collections.delete(id);
        reject(new Error(`the first process did not collect the metrics within ${COLLECT_TIMEOUT_MS} ms`));
      }, COLLECT_TIMEOUT_MS);
      collections.set(id, (snapshots) => {
        clearTimeout(timer);
        collections.delete(id);
        resolve(snapshots);
      });
      send({ type: 'collect-metrics', id });
    });

  // The store: the leader opened it before it listened and serves it on this channel — except
  // PostgreSQL, which this process opens itself (the leader checked it before it listened).
  let storeAnswer: ((message: MessageOf<'store-opened'> | MessageOf<'store-failed'>) => void) | null = null;
  on('store-opened', (message) => storeAnswer?.(message));
  on('store-failed', (message) => storeAnswer?.(message));
  const openLeaderStore = async (config: DbConfig, { migrations }: { migrations: MigrationMode }): Promise<Store> => {
    if (config.driver === 'postgres') return await openWorkerPostgresStore(config);
    const answer = await new Promise<MessageOf<'store-opened'> | MessageOf<'store-failed'>>((resolve) => {
      storeAnswer = resolve;
      send({ type: 'open-store', config, migrations });
    });
    // The leader's error, as openStore would have thrown it here (the server names the store around it).
    if (answer.type === 'store-failed') throw answer.code === null ? new Error(answer.message) : new CertsmithError(answer.code, answer.message);
    // A SQLite WAL file: this process commits its issued rows there itself, the rest goes to the leader.
    return connectStore(ipcChannel(process), { driver: config.driver, commitIssuedRowsTo: config });
  };

  const connections = handedConnections(on);
  const args = process.argv.slice(2);
  let stderr = '';
  const program = createProgram({
    serve: async (input) => {
      running = await startServer({
        ...input,
        workers: input.workers ?? WORKER_PROCESS_THREADS,
        openStore: openLeaderStore,
        metricsView: (metrics) => ({ contentType: metrics.contentType, render: async () => await renderAggregatedMetrics(await collectMetrics()) }),
        backgroundWork: false,
        logFields: { pid: process.pid },
        connections,
      });
    },
  });
  // Usage errors were printed by the leader already (it parsed the same command line first).
  for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ writeErr: (text) => (stderr += text) });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (thrown) {
    const error = thrown;
    if (error instanceof CommanderError) send({ type: 'failed', stderr, exitCode: error.exitCode });
    else {
      const code = isCodedError(error) ? ` (code ${error.code})` : '';
      send({ type: 'failed', stderr: `certsmith: ${error instanceof Error ? error.message : String(error)}${code}\n`, exitCode: startupExitCode(error) });
    }
    process.disconnect();
    return;
  }
  const server = running as RunningServer | null;
  if (server === null) {
    // The leader forks workers for `serve` only; anything else parsed here is a fault.
    send({ type: 'failed', stderr: 'certsmith: a worker process was started without the serve command\n', exitCode: 1 });
    process.disconnect();
    return;
  }
  // Its start-up lines first: the leader prints `certsmith listening on` once every process is ready.
  await new Promise<void>((resolve) => server.logger.flush(() => resolve()));
  send({ type: 'listening' });
  restoreOptimisation();
}
