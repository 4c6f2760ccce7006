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
import type { AnyOperation, Logger, SignerDirectory } from '@certsmith/http-api';
import { loadServerConfig } from './config-file.js';
import { buildOperations } from './operations.js';
import { resolveServerOptions } from './server-options.js';
import type { ServerOptions, ServerOptionsInput } from './server-options.js';
import { loadSignerRegistry } from './signer-registry.js';

/** Options of {@link startServer}: server options plus embedding hooks. */
export interface StartServerOptions extends ServerOptionsInput {
  /** Logger to use; default a JSON logger on stdout at `logLevel`. */
  logger?: Logger;
  /** Operations served in addition to the built-in ones (same name replaces a built-in). */
  operations?: readonly AnyOperation[];
  /** Environment for `env:` secrets of the config file and signer plugins (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
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
  /** The signers by label (`--ca`/`--ca-key`, the config's `signers`, or the development CA). */
  readonly signers: SignerDirectory;
  /**
   * Stop accepting connections, let in-flight requests finish (up to `shutdownTimeoutMs`), then stop
   * the worker pool. Safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Start a server. Rejects before listening with a coded error: `ServerOptionError` for bad options
 * (CLI exit 1), `ConfigFileError` / `SignerLoadError` when the config file or a signer cannot be
 * loaded (CLI exit 2), or the listen error. Signers are created here, on the main thread.
 */
export async function startServer(input: StartServerOptions = {}): Promise<RunningServer> {
  const { logger: givenLogger, operations: extraOperations, env, ...serverInput } = input;
  const options = await resolveServerOptions(serverInput);
  const logger = givenLogger ?? createLogger({ level: options.logLevel });
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });

  const config = await loadServerConfig(options.configFile, env ? { env } : {});
  const registry = await loadSignerRegistry({ options, config, logger, ...(env ? { env } : {}) });

  let pool;
  let server;
  let bound;
  let shuttingDown = false;
  let operations: AnyOperation[];
  try {
    const builtIn = await buildOperations(options, {
      signers: registry.directory,
      healthContributors: [registry.healthContributor],
      logger,
    });
    const extraNames = new Set((extraOperations ?? []).map((operation) => operation.name));
    operations = [...builtIn.filter((operation) => !extraNames.has(operation.name)), ...(extraOperations ?? [])];
    pool = createWorkerPool({
      tasks: collectTasks(operations),
      size: options.workers,
      maxQueue: options.maxQueue,
      onError: (error) => logger.error({ err: error }, 'worker pool error'),
    });
  } catch (error) {
    await registry.close();
    throw error;
  }
  try {
    const app = createApp({
      operations,
      taskRunner: pool,
      logger,
      maxBodyBytes: options.maxBodyBytes,
      isShuttingDown: () => shuttingDown,
    });
    server = createHttpServer(app);
    bound = await listen(server, options.port, options.address);
  } catch (error) {
    await pool.close();
    await registry.close();
    throw error;
  }
  const httpServer = server;
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
    signers: registry.directory,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        logger.info({ timeoutMs: options.shutdownTimeoutMs }, 'shutting down');
        const finished = await closeHttpServer(httpServer, { timeoutMs: options.shutdownTimeoutMs });
        if (!finished) logger.warn('in-flight requests did not finish in time; connections were closed');
        await pool.close();
        // After the pool: no request can reach a signer any more (HSM sessions, remote pools).
        await registry.close();
        logger.info('stopped');
      })();
      return closing;
    },
  };
}
