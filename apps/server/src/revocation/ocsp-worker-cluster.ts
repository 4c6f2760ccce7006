/**
 * `certsmith ocspserve --workers N` (N > 1): N node:cluster worker processes, each running the same
 * responder plan (`ocsp-worker-process.ts`) on one listening socket. node:cluster's round-robin
 * scheduling hands each new connection to the next worker, so keep-alive clients spread evenly.
 * Why processes and not worker threads on a shared descriptor: docs/adr/0005-ocspserve-worker-processes.md.
 *
 * The command's process only forks, relays warnings, restarts a worker that dies (a few times), and
 * stops them in order: each finishes its in-flight answers, closes its store and exits.
 */
import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import { CertsmithError } from '@certsmith/x509-core';
import type { OcspResponderPlan } from './ocsp-responder-runtime.js';
import type { OcspPrimaryMessage, OcspWorkerMessage } from './ocsp-worker-messages.js';

/** The running workers. */
export interface OcspWorkerCluster {
  /** `http://127.0.0.1:8888` (the port actually bound, the same for every worker). */
  readonly url: string;
  /** Stop every worker after its in-flight answers (up to `timeoutMs`, then killed), then resolve. */
  close(timeoutMs?: number): Promise<void>;
}

/** Restarts of workers that died, at most, over the cluster's life: a worker that keeps dying is a fault, not bad luck. */
const MAX_RESTARTS = 10;

function send(worker: Worker, message: OcspPrimaryMessage): void {
  // A worker that is exiting may close its channel between the check and the write (EPIPE): its
  // 'exit' tells the rest, so the write error is dropped here rather than thrown.
  if (worker.isConnected()) worker.send(message, () => {});
}

function failure(message: Extract<OcspWorkerMessage, { type: 'failed' }>): Error {
  if (message.code !== null) return new CertsmithError(message.code, message.message);
  return Object.assign(new Error(message.message), message.errno === null ? {} : { code: message.errno });
}

/**
 * Fork `count` workers on `plan` and resolve once every one listens; reject (and stop the others)
 * with the first one's start-up failure.
 */
export async function startOcspWorkers(plan: OcspResponderPlan, count: number, warn: (message: string) => void): Promise<OcspWorkerCluster> {
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./ocsp-worker-process.js', import.meta.url)), args: [], silent: false });
  const live = new Set<Worker>();
  let closing = false;
  let restarts = 0;
  let url = '';

  const exited = (worker: Worker): Promise<void> => new Promise((resolve) => (worker.isDead() ? resolve() : worker.once('exit', () => resolve())));

  /** A worker that listened and then died is replaced; its connections are lost, the others' are not. */
  const replace = (): void => {
    if (restarts >= MAX_RESTARTS) {
      warn(`no more restarts after ${MAX_RESTARTS}; ${live.size} worker processes left`);
      return;
    }
    restarts++;
    fork(
      () => {},
      (error) => warn(`a replacement worker process failed: ${error.message}`),
    );
  };

  function fork(onListening: (url: string) => void, onFailed: (error: Error) => void): Worker {
    const worker = cluster.fork();
    let listened = false;
    live.add(worker);
    // IPC errors of a worker that is going away; its 'exit' below is what counts.
    worker.on('error', () => {});
    worker.on('message', (message: OcspWorkerMessage) => {
      if (message.type === 'ready') send(worker, { type: 'start', plan });
      else if (message.type === 'warn') warn(message.message);
      else if (message.type === 'listening') {
        listened = true;
        onListening(message.url);
      } else if (message.type === 'failed') onFailed(failure(message));
    });
    worker.once('exit', (code, signal) => {
      live.delete(worker);
      if (closing) return;
      const how = signal ?? `code ${code}`;
      if (!listened) onFailed(new Error(`worker process ${worker.process.pid ?? '?'} exited (${how}) before it listened`));
      else {
        warn(`worker process ${worker.process.pid ?? '?'} exited (${how}); starting another`);
        replace();
      }
    });
    return worker;
  }

  const stopAll = async (timeoutMs: number): Promise<void> => {
    closing = true;
    const workers = [...live];
    for (const worker of workers) send(worker, { type: 'stop', timeoutMs });
    const timer = setTimeout(() => {
      for (const worker of workers) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, timeoutMs + 2_000);
    timer.unref();
    await Promise.all(workers.map(exited));
    clearTimeout(timer);
  };

  try {
    await new Promise<void>((resolve, reject) => {
      let listening = 0;
      for (let i = 0; i < count; i++) {
        fork(
          (workerUrl) => {
            url = workerUrl;
            if (++listening === count) resolve();
          },
          reject,
        );
      }
    });
  } catch (error) {
    await stopAll(1_000);
    throw error;
  }

  return {
    url,
    close: (timeoutMs = 5_000) => stopAll(timeoutMs),
  };
}
