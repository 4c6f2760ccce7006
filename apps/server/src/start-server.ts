/**
 * Start a certsmith server: resolve options, build operations, start the worker pool and the Koa app,
 * listen, and give back a handle that shuts everything down gracefully.
 */
import { mkdir } from 'node:fs/promises';
import {
  closeHttpServer,
  collectTasks,
  createApp,
  createHttpServer,
  createLogger,
  createWorkerPool,
  listen,
} from '@certsmith/http-api';
import type { AnyOperation, Logger } from '@certsmith/http-api';
import { buildOperations } from './operations.js';
import { resolveServerOptions } from './server-options.js';
import type { ServerOptions, ServerOptionsInput } from './server-options.js';

/** Options of {@link startServer}: server options plus embedding hooks. */
export interface StartServerOptions extends ServerOptionsInput {
  /** Logger to use; default a JSON logger on stdout at `logLevel`. */
  logger?: Logger;
  /** Operations served in addition to the built-in ones (same name replaces a built-in). */
  operations?: readonly AnyOperation[];
}

/** A running server. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:43567`. */
  readonly url: string;
  /** Bound address and port (the real port when 0 was asked for). */
  readonly address: string;
  readonly port: number;
  /** The resolved options. */
  readonly options: ServerOptions;
  readonly logger: Logger;
  /**
   * Stop accepting connections, let in-flight requests finish (up to `shutdownTimeoutMs`), then stop
   * the worker pool. Safe to call more than once.
   */
  close(): Promise<void>;
}

/** Start a server; rejects with a coded `ServerOptionError` for bad options, or the listen error. */
export async function startServer(input: StartServerOptions = {}): Promise<RunningServer> {
  const { logger: givenLogger, operations: extraOperations, ...serverInput } = input;
  const options = await resolveServerOptions(serverInput);
  const logger = givenLogger ?? createLogger({ level: options.logLevel });
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });

  const builtIn = await buildOperations(options);
  const extraNames = new Set((extraOperations ?? []).map((operation) => operation.name));
  const operations = [...builtIn.filter((operation) => !extraNames.has(operation.name)), ...(extraOperations ?? [])];

  const pool = createWorkerPool({
    tasks: collectTasks(operations),
    size: options.workers,
    maxQueue: options.maxQueue,
    onError: (error) => logger.error({ err: error }, 'worker pool error'),
  });
  let shuttingDown = false;
  const app = createApp({
    operations,
    taskRunner: pool,
    logger,
    maxBodyBytes: options.maxBodyBytes,
    isShuttingDown: () => shuttingDown,
  });
  const server = createHttpServer(app);
  let bound;
  try {
    bound = await listen(server, options.port, options.address);
  } catch (error) {
    await pool.close();
    throw error;
  }
  logger.info(
    { url: bound.url, address: bound.address, port: bound.port, workers: options.workers, operations: operations.map((o) => o.name) },
    'listening',
  );

  let closing: Promise<void> | null = null;
  return {
    url: bound.url,
    address: bound.address,
    port: bound.port,
    options,
    logger,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        logger.info({ timeoutMs: options.shutdownTimeoutMs }, 'shutting down');
        const finished = await closeHttpServer(server, { timeoutMs: options.shutdownTimeoutMs });
        if (!finished) logger.warn('in-flight requests did not finish in time; connections were closed');
        await pool.close();
        logger.info('stopped');
      })();
      return closing;
    },
  };
}
