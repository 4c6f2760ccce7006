/**
 * A worker process of `certsmith serve --processes N` (`serve-primary.ts` forks it): it parses the
 * command line as one process would and starts a whole server on the shared port, except that
 * - the certificate store is the primary's, asked for once the options name it and reached over
 *   IPC (`connectStore`): no store of its own, no migrations;
 * - it has no worker threads unless `--workers` asks for them: every task runs on its event loop,
 *   and the other processes use the other cores (docs/adr/0004-http-threads.md);
 * - `/metrics` answers every serving process's metrics, merged; `/health` answers for this process;
 * - only the worker the primary names runs the store-wide background work (tidy, OCSP refresh);
 * - its log lines carry its `pid`.
 *
 * It reports to the primary instead of printing: listening, or what one process would have printed
 * on stderr and its exit code. SIGINT and SIGTERM are the primary's (a terminal's Ctrl-C reaches the
 * whole process group): it stops when the primary says so, after its in-flight requests. If the
 * primary dies, node:cluster ends this process (IPC disconnect).
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
import { guessTrustFiles, readServeFlags } from '../serve-prestart.js';
import type { TrustSnapshot } from '@certsmith/bundler';
import { asListenError } from './listen-error.js';
import { BACKGROUND_WORK_ENV, SERVE_CHANNEL, isServeMessage } from './serve-messages.js';
import type { PrimaryMessage, WorkerMessageBody } from './serve-messages.js';

/**
 * Worker threads of a worker process when `--workers` is not given: none, every task on its event
 * loop — the other processes use the other cores, and each thread would hold its own copy of the
 * trust pools (docs/adr/0004-http-threads.md).
 */
export const WORKER_PROCESS_THREADS = 0;

/** Longest a `/metrics` request waits for the primary's collection (which itself waits at most 5 s per worker). */
const COLLECT_TIMEOUT_MS = 10_000;

type Distribute<T> = T extends { type: infer K } ? [K, T] : never;
type MessageOf<K extends PrimaryMessage['type']> = Extract<Distribute<PrimaryMessage>, [K, unknown]>[1];

function send(message: WorkerMessageBody): void {
  // The primary is gone: this process is ending too (node:cluster exits it on the disconnect).
  if (process.connected) process.send!({ ...message, channel: SERVE_CHANNEL }, undefined, {}, () => undefined);
}

/** This process's messages from the primary, by type. */
function listen(): <K extends PrimaryMessage['type']>(type: K, handler: (message: MessageOf<K>) => void) => void {
  const handlers = new Map<string, (message: PrimaryMessage) => void>();
  process.on('message', (message: unknown) => {
    if (isServeMessage(message)) handlers.get((message as PrimaryMessage).type)?.(message as PrimaryMessage);
  });
  return (type, handler) => handlers.set(type, handler as (message: PrimaryMessage) => void);
}

/**
 * Run this worker process: start its server, or report why it could not start. `restoreOptimisation`
 * ends the start-up's held-back optimisation (`holdBackOptimisation`, called by the process's entry
 * before it loaded the server) once the server listens.
 */
export async function runServeWorker(restoreOptimisation: () => void): Promise<void> {
  const on = listen();
  let running: RunningServer | null = null;

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

  // `/metrics` here: every serving process's registry, collected by the primary, merged here.
  let nextCollection = 0;
  const collections = new Map<number, (snapshots: MetricsSnapshot[]) => void>();
  on('metrics-collected', ({ id, snapshots }) => collections.get(id)?.(snapshots));
  const collectMetrics = (): Promise<MetricsSnapshot[]> =>
    new Promise((resolve, reject) => {
      const id = nextCollection++;
      const timer = setTimeout(() => {
        collections.delete(id);
        reject(new Error(`the primary process did not collect the metrics within ${COLLECT_TIMEOUT_MS} ms`));
      }, COLLECT_TIMEOUT_MS);
      collections.set(id, (snapshots) => {
        clearTimeout(timer);
        collections.delete(id);
        resolve(snapshots);
      });
      send({ type: 'collect-metrics', id });
    });

  // The store: the primary opens it (once, for every worker) and serves it on this channel.
  let storeAnswer: ((message: MessageOf<'store-opened'> | MessageOf<'store-failed'>) => void) | null = null;
  on('store-opened', (message) => storeAnswer?.(message));
  on('store-failed', (message) => storeAnswer?.(message));
  const openPrimaryStore = async (config: DbConfig, { migrations }: { migrations: MigrationMode }): Promise<Store> => {
    const answer = await new Promise<MessageOf<'store-opened'> | MessageOf<'store-failed'>>((resolve) => {
      storeAnswer = resolve;
      send({ type: 'open-store', config, migrations });
    });
    // The primary's error, as openStore would have thrown it here (the server names the store around it).
    if (answer.type === 'store-failed') throw answer.code === null ? new Error(answer.message) : new CertsmithError(answer.code, answer.message);
    return connectStore(ipcChannel(process), { driver: config.driver });
  };

  // The trust files the command line names, read once by the primary (`primary-trust.ts`); without
  // its snapshot the server reads them itself.
  const args = process.argv.slice(2);
  const trustFiles = args[0] === 'serve' ? guessTrustFiles(readServeFlags(args.slice(1))) : undefined;
  let prestartedTrust: { files: typeof trustFiles & object; snapshot: Promise<TrustSnapshot> } | undefined;
  if (trustFiles !== undefined) {
    const snapshot = new Promise<TrustSnapshot>((resolve, reject) => {
      on('trust-snapshot', (message) => (message.snapshot === null ? reject(new Error('the primary process has no trust snapshot')) : resolve(message.snapshot)));
    });
    snapshot.catch(() => undefined);
    prestartedTrust = { files: trustFiles, snapshot };
    send({ type: 'trust-request' });
  }

  let stderr = '';
  const program = createProgram({
    serve: async (input) => {
      running = await startServer({
        ...input,
        workers: input.workers ?? WORKER_PROCESS_THREADS,
        openStore: openPrimaryStore,
        metricsView: (metrics) => ({ contentType: metrics.contentType, render: async () => await renderAggregatedMetrics(await collectMetrics()) }),
        backgroundWork: process.env[BACKGROUND_WORK_ENV] === '1',
        logFields: { pid: process.pid },
        ...(prestartedTrust === undefined ? {} : { prestartedTrust }),
      });
    },
  });
  // Usage errors are printed by the primary, once for all the workers.
  for (const command of [program, ...program.commands]) command.exitOverride().configureOutput({ writeErr: (text) => (stderr += text) });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (thrown) {
    const error = asListenError(thrown);
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
    // The primary forks workers for `serve` only; anything else parsed here is a fault.
    send({ type: 'failed', stderr: 'certsmith: a worker process was started without the serve command\n', exitCode: 1 });
    process.disconnect();
    return;
  }
  // The start-up lines first: the primary prints `certsmith listening on` once every worker listens.
  await new Promise<void>((resolve) => server.logger.flush(() => resolve()));
  send({ type: 'listening', url: server.url });
  restoreOptimisation();
}
