/**
 * Start a certsmith server: resolve options, build operations, start the worker pool and the Koa app,
 * listen, and give back a handle that shuts everything down gracefully.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  TlsConfigError,
  checkTlsConfig,
  compileClientCnPattern,
  closeHttpServer,
  collectTasks,
  createApp,
  createHttpServer,
  createLogger,
  listen,
  createMetricsRoute,
  createMetricsServer,
  createOpenApiRoute,
  createServerMetrics,
  watchCertificateStore,
  METRICS_PATH,
} from '@certsmith/http-api';
import type { AnyOperation, ApiTlsConfig, Logger, RawRoute, ServerMetrics, TlsConfigField } from '@certsmith/http-api';
import type { PrestartedStore, Store } from '@certsmith/cert-store';
import type { Server } from 'node:http';
import { bundleContextConfig, bundleContextFailedFile, bundlePrepareTask, bundleWarmUpTask, checkTrustSnapshot, prepareBundleWorkers, readTrustSnapshot, warmUpBundleWorkers } from '@certsmith/bundler';
import type { TrustSnapshot } from '@certsmith/bundler';
import { describeProblem, ecdsaKeyBackend, issuingWorkerInits } from '@certsmith/issuer';
import type { SignerDirectory } from '@certsmith/issuer';
import { createInlineTaskRunner, createWorkerPool } from '@certsmith/worker-pool';
import type { PrestartedWorkers, TaskDefinition, WorkerPool } from '@certsmith/worker-pool';
import { isCodedError } from '@certsmith/x509-core';
import { VERSION } from './cli-program.js';
import { ServerOptionError } from './errors.js';
import { loadServerConfig } from './config-file.js';
import { turnOffPretenuring } from './pretenuring.js';
import { buildOperations } from './operations.js';
import { issuedRecordingWorkerHook } from './issued-recording.js';
import { TrustFileError, checkTrustFiles } from './trust-check.js';
import type { TrustSummary } from './trust-check.js';
import { parseHostPort, resolveServerOptions } from './server-options.js';
import type { ServerOptions, ServerOptionsInput } from './server-options.js';
import { loadSignerRegistry } from './signer-registry.js';
import { openServerStore, scheduleTidy, storeHealthContributor } from './server-store.js';
import type { OpenedStore, StoreOpener, TidySchedule } from './server-store.js';
import { storeSettings } from './store-settings.js';
import { startRevocation } from './revocation/server-revocation.js';
import type { ConnectionSource } from './connection-source.js';
import type { ServerRevocation } from './revocation/server-revocation.js';

/** Options of {@link startServer}: server options plus embedding hooks. */
export interface StartServerOptions extends ServerOptionsInput {
  /** Logger to use; default a JSON logger on stdout at `logLevel`. */
  logger?: Logger;
  /** Operations served in addition to the built-in ones (same name replaces a built-in). */
  operations?: readonly AnyOperation[];
  /** Environment for `env:` secrets of the config file and signer plugins (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Worker threads started earlier (`prestartWorkers`, as the `certsmith` executable does): the pool
   * takes them instead of starting its own. Threads it does not need are stopped.
   */
  prestartedWorkers?: PrestartedWorkers;
  /**
   * The module the pool's worker threads start on (the pool's `workerEntry`): the `certsmith`
   * executable gives its bundle of the workers' code (`dist/worker.bundle.js`) when it was built, and
   * starts its prestarted threads on the same file. Default: the pool's own entry.
   */
  workerEntry?: string | URL;
  /**
   * The certificate store opened earlier from a guess (`prestartStore`, as the `certsmith`
   * executable does for the default store): used when it is the store these options resolve to,
   * closed otherwise.
   */
  prestartedStore?: PrestartedStore;
  /**
   * The trust files read and indexed earlier (as the `certsmith` executable has its first worker do
   * while this thread loads the server): used when `files` are the files these options name (as
   * absolute paths); otherwise, or when that reading failed, this thread reads them itself (and
   * reports a broken file as it always does).
   */
  prestartedTrust?: { files: TrustFilePaths; snapshot: Promise<TrustSnapshot> };
  /**
   * Opens the certificate store these options resolve to (their db-config and migrations mode),
   * instead of `openStore` here: a worker process of `serve --processes` opens its own PostgreSQL
   * pool without migrations, or asks its leader, which owns a SQLite store, to serve it over IPC.
   * What it returns is this server's to close at shutdown (for such a worker: its own pool, or its
   * end of the channel, not the leader's store). Default `openStore` of `@certsmith/cert-store`.
   */
  openStore?: StoreOpener;
  /**
   * What `/metrics` answers (on the API port or `--metrics-address`), given this server's metrics:
   * default those metrics. A worker process of `serve --processes` answers every process's, merged.
   */
  metricsView?: (metrics: ServerMetrics) => Pick<ServerMetrics, 'contentType' | 'render'>;
  /**
   * Default true. False: the server-wide background work — the scheduled tidy, the OCSP refresh
   * schedule, the store's gauges on `/metrics`, the full parse of the trust files after listening — is left to another process of the
   * same server that does it (one worker process of `serve --processes`, with the same store and
   * files); this one still follows the store's change feed (its caches, CRLs, re-signing).
   */
  backgroundWork?: boolean;
  /** Fields added to every log line of the default logger (a worker process of `serve --processes`: its `pid`). */
  logFields?: Record<string, unknown>;
  /**
   * Where the API's connections come from, instead of listening on `address:port` itself: the
   * processes of `serve --processes` share one listening socket (the first process's) and are
   * handed their connections. Closing the server detaches it from the source.
   */
  connections?: ConnectionSource;
}

/** The trust files of a server, by option name. */
type TrustFilePaths = Partial<Record<keyof typeof TRUST_FILE_FLAGS, string>>;

/** A running server. */
export interface RunningServer {
  /** Base URL, e.g. `http://127.0.0.1:43567` (`https://…` with `tlsCertFile`/`tlsKeyFile`). */
  readonly url: string;
  /** Bound address and port (the real port when 0 was asked for). */
  readonly address: string;
  readonly port: number;
  /** The resolved options. */
  readonly options: ServerOptions;
  readonly logger: Logger;
  /** The signers by label (`--ca`/`--ca-key`, the config's `signers`, or the development CA). */
  readonly signers: SignerDirectory;
  /** This server's Prometheus metrics (its own registry). */
  readonly metrics: ServerMetrics;
  /** Where `/metrics` is served: `<url>/metrics`, or on `--metrics-address`. */
  readonly metricsUrl: string;
  /**
   * The certificate store (`null` with `--no-store`): every issued certificate is recorded in it
   * before it is returned. Open until {@link RunningServer.close} has finished; requests that need
   * it answer 503 + `Retry-After` while the database is unreachable.
   */
  readonly store: Store | null;
  /**
   * Stop accepting connections, let in-flight requests finish (up to `shutdownTimeoutMs`), then stop
   * the worker pool, close the signers and the certificate store. Safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * Start a server. Rejects before listening with a coded error: `ServerOptionError` for bad options
 * (CLI exit 1), `ConfigFileError` / `SignerLoadError` / `StoreStartError` when the config file, a
 * signer or the certificate store cannot be loaded (CLI exit 2), or the listen error. Signers are
 * created here, on the main thread.
 */
export async function startServer(input: StartServerOptions = {}): Promise<RunningServer> {
  try {
    return await start(input);
  } finally {
    // Taken by the store's opening when it was the store asked for (then this does nothing);
    // otherwise, and when start-up stopped before the store, it must not stay open.
    await input.prestartedStore?.close();
  }
}

async function start(input: StartServerOptions): Promise<RunningServer> {
  turnOffPretenuring();
  const {
    logger: givenLogger,
    operations: extraOperations,
    env,
    prestartedWorkers,
    workerEntry,
    prestartedStore,
    prestartedTrust,
    openStore,
    metricsView,
    backgroundWork = true,
    logFields,
    connections,
    ...serverInput
  } = input;
  // Used (and its failure handled) only once the options are known to name the same files.
  prestartedTrust?.snapshot.catch(() => undefined);
  const options = await resolveServerOptions(serverInput);
  // TLS files are checked before anything else starts: a bad key is a usage error (exit 1).
  const tls = await loadApiTls(options);
  const logger = givenLogger ?? createLogger({ level: options.logLevel, ...(logFields === undefined ? {} : { base: logFields }) });
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 });

  // A broken trust file stops start-up (as CFSSL does for metadata) instead of failing every bundle
  // request. When bundling runs on the pool, the workers load the files before the server listens
  // (below: parsed once per worker, the first bundle is fast); otherwise they are checked here.
  const hasTrustFiles = options.caBundleFile !== undefined || options.intBundleFile !== undefined || options.metadataFile !== undefined;
  const config = await loadServerConfig(options.configFile, { purpose: 'serve', ...(env ? { env } : {}) });
  // Keys accepted that change nothing (CFSSL keys certsmith does not implement, unknown usages…).
  for (const warning of config.warnings) logger.warn({ configFile: config.file, path: warning.path }, `config: ${describeProblem(warning)}`);
  // The flag and the config file can both open the SSRF guard; either is enough.
  options.allowPrivateNetworks ||= config.allowPrivateNetworks;
  options.allowCidrs = [...options.allowCidrs, ...config.allowCidrs];
  if (options.allowPrivateNetworks) {
    logger.warn('request-driven fetches (AIA, domain bundling) may reach private and loopback addresses (--allow-private-networks)');
  }
  // The trust files are read and indexed now, while the store's thread starts (this thread would
  // wait for it idle); a file that fails is reported with the bundle warm-up below, in its turn.
  const trustReading = hasTrustFiles && !options.disable.includes('bundle') ? readTrust(bundleContextConfig(options), prestartedTrust) : null;
  trustReading?.catch(() => undefined);
  // The certificate store before the signers: a database that cannot be reached stops start-up
  // before an HSM session is opened.
  const plan = storeSettings(options.store, config.store, options.dataDir);
  let opened: OpenedStore | null = null;
  if (plan.enabled) {
    opened = await openServerStore(plan, prestartedStore, openStore);
    logger.info({ store: { driver: opened.config.driver, location: opened.location, from: plan.source, migrations: plan.migrations } }, 'certificate store opened');
  } else {
    logger.warn({ store: false, why: plan.why }, 'no certificate store: issued certificates are not recorded');
  }
  const closeStore = async (): Promise<void> => {
    try {
      await opened?.store.close();
    } catch (error) {
      logger.warn({ err: error }, 'closing the certificate store failed');
    }
  };
  // One registry per server instance, made before the signers so their lifecycle events (HSM
  // session recoveries) are counted from the start. Operations get signers whose calls are counted;
  // health probes go to the signers themselves.
  // Node's default metrics are loaded after listening (`defaultMetricsTimer` below, or the first scrape):
  // prom-client's default metrics bring ≈50 modules of OpenTelemetry with them.
  const metrics = createServerMetrics({ version: VERSION, defaultMetrics: 'on-demand' });
  let registry;
  try {
    registry = await loadSignerRegistry({ options, config, logger, onSignerEvent: (event, signer) => metrics.observeSignerEvent(event, signer), ...(env ? { env } : {}) });
  } catch (error) {
    metrics.close();
    await closeStore();
    throw error;
  }
  const signers = metrics.instrumentSignerDirectory(registry.directory);
  // The store's gauges count the one database: one process of a server reads them (backgroundWork),
  // the merged /metrics of serve --processes takes its counts (their aggregator is `first`).
  const storeMetrics = opened === null || !backgroundWork ? undefined : watchCertificateStore(metrics.registry, { store: opened.store, signers: registry.directory.entries });
  let revocation: ServerRevocation;
  try {
    revocation = await startRevocation({ options, config, signers: signers.entries, logger, backgroundWork, ...(opened === null ? {} : { store: opened.store }), ...(env ? { env } : {}) });
  } catch (error) {
    await registry.close();
    metrics.close();
    await closeStore();
    throw error;
  }

  let pool;
  let warmUp = false;
  let eventLoopTasks: TaskDefinition[] = [];
  let trustSnapshot: TrustSnapshot | null = null;
  let server;
  let bound;
  let shuttingDown = false;
  let operations: AnyOperation[];
  try {
    const builtIn = await buildOperations(options, {
      signers,
      // The pool below gets the issuer's per-worker setup, so local-key signers sign in the workers.
      signatureSite: 'worker',
      healthContributors: opened === null ? [registry.healthContributor] : [registry.healthContributor, storeHealthContributor(opened.store)],
      logger,
      metricsChannel: metrics.workerMetricsChannel,
      ...(opened === null ? {} : { store: opened.store }),
      revocation,
    });
    // `--disable` applies to embedded operations too (built-ins were filtered by buildOperations).
    const extras = (extraOperations ?? []).filter((operation) => !options.disable.includes(operation.name));
    const extraNames = new Set(extras.map((operation) => operation.name));
    operations = [...builtIn.filter((operation) => !extraNames.has(operation.name)), ...extras];
    const tasks = collectTasks(operations);
    warmUp = hasTrustFiles && tasks.some((task) => task.name === 'bundle' || task.name === 'bundle.json');
    if (hasTrustFiles && !warmUp) logger.info({ trust: await checkTrustFiles(options) }, 'trust files loaded');
    if (warmUp) tasks.push(bundlePrepareTask, bundleWarmUpTask);
    // The built-in bundle tasks (not an embedder's, which may not be safe to run on the event loop).
    eventLoopTasks = collectTasks(builtIn.filter((operation) => !extraNames.has(operation.name))).filter((task) => EVENT_LOOP_TASK_NAMES.has(task.name));
    pool = createWorkerPool({
      tasks,
      size: options.workers,
      maxQueue: options.maxQueue,
      init: issuingWorkerInits({
        signers: registry.directory.entries,
        keyPool: options.keyPool,
        threads: options.workers,
        // With a store, the workers read each certificate's row and sign its first OCSP response.
        issuedHook:
          opened === null
            ? undefined
            : issuedRecordingWorkerHook({
                signers: registry.directory.entries,
                authorities: revocation.service === null ? null : revocation.authorities,
                ocspIntervalMs: revocation.settings.ocspIntervalMs,
              }),
      }),
      // With --workers 0 the pool runs every task on the event loop by itself (size 0).
      ...(options.workers > 0 && eventLoopTasks.length > 0 ? { callerThread: { maxTasks: EVENT_LOOP_TASKS, tasks: eventLoopTasks } } : {}),
      ...(prestartedWorkers === undefined ? {} : { prestarted: prestartedWorkers }),
      ...(workerEntry === undefined ? {} : { workerEntry }),
      onError: (error) => logger.error({ err: error }, 'worker pool error'),
    });
  } catch (error) {
    await revocation.close();
    await registry.close();
    metrics.close();
    await closeStore();
    throw error;
  }
  let metricsServer: Server | null = null;
  let metricsUrl = '';
  try {
    if (pool.size === 0) {
      // No worker threads: the init hooks (the signers, the issued hook) run on this thread now; one
      // that fails stops start-up here, as a worker's would in the warm-up, instead of every request.
      await pool.ready();
    }
    if (warmUp) {
      const trust = await warmUpTrust(pool, options, metrics.workerMetricsChannel, pool.size === 0 || eventLoopTasks.length > 0, trustReading);
      trustSnapshot = trust.snapshot;
      logger.info({ trust: trust.summary }, 'trust files loaded');
    }
    metrics.watchWorkerPool(pool);
    // `/metrics` on the API port unless --metrics-address moves it to its own listener.
    const servedMetrics = metricsView?.(metrics) ?? metrics;
    const routes: RawRoute[] = options.metricsAddress === undefined ? [createMetricsRoute(servedMetrics)] : [];
    routes.push(createOpenApiRoute(operations, { routes, version: VERSION }));
    const app = createApp({
      operations,
      taskRunner: metrics.instrumentTaskRunner(pool),
      logger,
      maxBodyBytes: options.maxBodyBytes,
      bodyTimeoutMs: options.bodyTimeoutMs,
      isShuttingDown: () => shuttingDown,
      routes,
      metrics,
      mounts: revocation.mounts,
    });
    const limits = { headersTimeoutMs: options.headersTimeoutMs, bodyTimeoutMs: options.bodyTimeoutMs, maxConnections: options.maxConnections };
    server = createHttpServer(app, tls === undefined ? { logger, ...limits } : { tls, logger, ...limits });
    bound = await (connections === undefined ? listen(server, options.port, options.address) : connections.attach(server, options.port, options.address));
    metricsUrl = `${bound.url}${METRICS_PATH}`;
    if (options.metricsAddress !== undefined && connections?.servesMetricsAddress === false) {
      // Another process of this server listens there (and answers for every process).
      metricsUrl = `http://${options.metricsAddress}${METRICS_PATH}`;
    } else if (options.metricsAddress !== undefined) {
      const { host, port } = parseHostPort('--metrics-address', options.metricsAddress);
      metricsServer = createMetricsServer(servedMetrics, { onError: (error) => logger.error({ err: error }, 'rendering metrics failed') });
      try {
        metricsUrl = `${(await listen(metricsServer, port, host)).url}${METRICS_PATH}`;
      } catch (error) {
        await (connections === undefined ? closeHttpServer(server, { timeoutMs: 0 }) : connections.detach(server, 0));
        throw error;
      }
    }
  } catch (error) {
    await pool.close();
    await revocation.close();
    await registry.close();
    metrics.close();
    await closeStore();
    throw error;
  }
  const httpServer = server;
  // Where ECDSA keys come from (the native addon, or node:crypto when it is not built): the
  // difference shows in every ECDSA newcert (docs/performance.md#the-native-ecdsa-addon), so an
  // operator should see it.
  const ecdsaKeys = ecdsaKeyBackend();
  if (ecdsaKeys.backend !== 'native') {
    logger.warn({ ecdsaKeys }, 'ECDSA keys are made with node:crypto, not the native addon (slower); see @certsmith/native-ec');
  }
  logger.info(
    {
      url: bound.url,
      address: bound.address,
      port: bound.port,
      workers: options.workers,
      operations: operations.map((o) => o.name),
      metrics: metricsUrl,
      ecdsaKeys: ecdsaKeys.backend,
      store: opened === null ? false : opened.config.driver,
      tls: tls === undefined ? false : { minVersion: options.minTlsVersion, mutualTls: tls.clientCa !== undefined, clientCn: options.mutualTlsCn ?? null },
    },
    'listening',
  );
  // Start-up only checked the trust files' structure (readTrustSnapshot); parse every certificate in
  // full now, between requests, so a certificate that would answer 1003 on first use is reported.
  // Delayed a little: the first requests after start-up (a deploy's probes, a first bundle) should
  // not share the event loop with it.
  let trustCheck: NodeJS.Timeout | null = null;
  if (trustSnapshot !== null && backgroundWork) {
    const snapshot = trustSnapshot;
    trustCheck = setTimeout(() => void reportTrustProblems(snapshot, logger), TRUST_CHECK_DELAY_MS);
    trustCheck.unref();
  }

  const defaultMetricsTimer = setTimeout(() => {
    metrics.registerDefaultMetrics().catch((error: unknown) => logger.warn({ err: error }, 'loading the process metrics failed'));
  }, DEFAULT_METRICS_DELAY_MS);
  defaultMetricsTimer.unref();

  // Scheduled tidy: each instance runs its own (safe on a shared database, see scheduleTidy), but
  // only one process of a server (backgroundWork).
  const tidy: TidySchedule | null =
    opened !== null && plan.enabled && plan.tidyIntervalMs > 0 && backgroundWork
      ? scheduleTidy(opened.store, { intervalMs: plan.tidyIntervalMs, bufferMs: plan.tidyBufferMs, logger, ...(storeMetrics === undefined ? {} : { metrics: storeMetrics }) })
      : null;

  let closing: Promise<void> | null = null;
  return {
    url: bound.url,
    address: bound.address,
    port: bound.port,
    options,
    logger,
    signers: registry.directory,
    metrics,
    metricsUrl,
    store: opened?.store ?? null,
    close() {
      closing ??= (async () => {
        shuttingDown = true;
        if (trustCheck !== null) clearTimeout(trustCheck);
        clearTimeout(defaultMetricsTimer);
        logger.info({ timeoutMs: options.shutdownTimeoutMs }, 'shutting down');
        const finished = await (connections === undefined
          ? closeHttpServer(httpServer, { timeoutMs: options.shutdownTimeoutMs })
          : connections.detach(httpServer, options.shutdownTimeoutMs));
        if (!finished) logger.warn('in-flight requests did not finish in time; connections were closed');
        if (metricsServer !== null) await closeHttpServer(metricsServer, { timeoutMs: 1_000 });
        await pool.close();
        // After the pool: no request can reach a signer any more (HSM sessions, remote pools).
        await revocation.close();
        await registry.close();
        // Last: every request has finished, so every record it waited for is committed.
        await tidy?.stop();
        await closeStore();
        metrics.close();
        logger.info('stopped');
      })();
      return closing;
    },
  };
}

/**
 * Most tasks the event loop runs at a time while every worker is busy (the pool's `callerThread`),
 * and which: bundle tasks, two at a time, use the core the hand-offs leave idle; newcert's share
 * of the event loop is too large to gain (see
 * docs/performance.md#the-event-loop-runs-two-bundle-tasks-when-the-workers-are-busy).
 */
const EVENT_LOOP_TASKS = 2;
const EVENT_LOOP_TASK_NAMES: ReadonlySet<string> = new Set(['bundle', 'bundle.json']);

/**
 * How long after listening the process metrics are loaded, unless a scrape asks for them first:
 * like the trust check below, not among the first requests after start-up.
 */
const DEFAULT_METRICS_DELAY_MS = 1_000;

/** How long after listening the full parse of the trust certificates starts (`reportTrustProblems`). */
const TRUST_CHECK_DELAY_MS = 2_000;

const TRUST_FILE_FLAGS = { caBundleFile: '--ca-bundle', intBundleFile: '--int-bundle', metadataFile: '--metadata' } as const;

/**
 * Load the trust files in every thread that runs bundle tasks before listening: every worker of
 * `pool` (one `bundle.warm-up` task each; none in a pool of size 0) and this thread too when the
 * event loop runs bundle tasks (`eventLoop`); none of them may load the files on a request's time.
 * This thread reads and indexes the files once (`readTrustSnapshot`; `reading` when it was started
 * earlier, with the same files) while the store and the workers start, then each thread builds its
 * pools from that snapshot (no file read, no parse). A file that fails is a {@link TrustFileError}
 * naming its flag, with the loader's code. The config is the bundle endpoint's (same
 * `metricsChannel`), so the requests reuse what loaded.
 */
async function warmUpTrust(
  pool: WorkerPool,
  options: ServerOptions,
  metricsChannel: string,
  eventLoop: boolean,
  reading: Promise<TrustSnapshot> | null,
): Promise<{ summary: TrustSummary; snapshot: TrustSnapshot }> {
  const context = bundleContextConfig({ ...options, metricsChannel });
  // The workers import the bundle code while this thread reads the files (their failure, if any,
  // shows again in the warm-up below).
  const preparing = pool.size === 0 ? null : prepareBundleWorkers(pool, pool.size).catch(() => undefined);
  let snapshot: TrustSnapshot;
  try {
    snapshot = await (reading ?? readTrustSnapshot(context));
  } catch (error) {
    const file = bundleContextFailedFile(error);
    const flag = file === null ? '--ca-bundle' : TRUST_FILE_FLAGS[file];
    throw new TrustFileError(isCodedError(error) ? error.code : 0, flag, error instanceof Error ? error.message : String(error), { cause: error });
  }
  await preparing;
  const input = { context, snapshot };
  const inWorkers = pool.size === 0 ? null : warmUpBundleWorkers(pool, input, pool.size);
  // Awaited below; until then a rejection (a pool that cannot start) must not count as unhandled.
  inWorkers?.catch(() => undefined);
  const here = eventLoop ? await warmUpBundleWorkers(createInlineTaskRunner(), input, 1) : null;
  const there = (await inWorkers) ?? here!;
  const outcome = there.ok && here !== null ? here : there;
  if (!outcome.ok) {
    const flag = outcome.file === null ? '--ca-bundle' : TRUST_FILE_FLAGS[outcome.file];
    throw new TrustFileError(outcome.error.code, flag, outcome.error.message);
  }
  const summary = {
    roots: options.caBundleFile !== undefined ? outcome.roots : null,
    intermediates: options.intBundleFile !== undefined ? outcome.intermediates : null,
    platforms: options.metadataFile !== undefined ? outcome.platforms : null,
  };
  return { summary, snapshot };
}

/**
 * Read and index the trust files `files` names, or take `prestarted`'s snapshot when it was read
 * from the same files (paths compared resolved). A prestarted reading that failed is done again
 * here, so a broken file is reported exactly as without it.
 */
async function readTrust(files: TrustFilePaths, prestarted: StartServerOptions['prestartedTrust']): Promise<TrustSnapshot> {
  const same =
    prestarted !== undefined &&
    (Object.keys(TRUST_FILE_FLAGS) as (keyof TrustFilePaths)[]).every((key) => optionalPath(prestarted.files[key]) === optionalPath(files[key]));
  if (same) {
    try {
      return await prestarted.snapshot;
    } catch {
      // Read again below: its error names the file and carries the loader's code.
    }
  }
  return await readTrustSnapshot(files);
}

function optionalPath(path: string | undefined): string | undefined {
  return path === undefined ? undefined : resolve(path);
}

/** Parse every pool certificate of `snapshot` in full (`checkTrustSnapshot`) and log what does not parse. */
async function reportTrustProblems(snapshot: TrustSnapshot, logger: Logger): Promise<void> {
  try {
    const problems = await checkTrustSnapshot(snapshot);
    for (const problem of problems) {
      logger.error(
        { flag: TRUST_FILE_FLAGS[problem.file], certificate: problem.position, code: 1003, reason: problem.message },
        `${TRUST_FILE_FLAGS[problem.file]}: certificate #${problem.position + 1} does not parse; bundles that reach it answer 1003 (certsmith config check names it)`,
      );
    }
  } catch (error) {
    logger.error({ err: error }, 'checking the trust files failed');
  }
}

/** The flag of each part of the TLS configuration, for startup errors. */
const TLS_FIELD_FLAGS: Readonly<Record<TlsConfigField, string>> = {
  cert: '--tls-cert',
  key: '--tls-key',
  clientCa: '--mutual-tls-ca',
  clientCn: '--mutual-tls-cn',
  minVersion: '--min-tls-version',
};

/**
 * Read and check the TLS files of `options` (`undefined` without `--tls-cert`/`--tls-key`). Content
 * problems are {@link ServerOptionError}s naming the flag, with CFSSL's code for the kind of file
 * (e.g. `--tls-key: the private key does not match the certificate (…) (code 2300)`).
 */
async function loadApiTls(options: ServerOptions): Promise<ApiTlsConfig | undefined> {
  if (options.tlsCertFile === undefined || options.tlsKeyFile === undefined) return undefined;
  const tls: ApiTlsConfig = {
    cert: await readFile(options.tlsCertFile, 'utf8'),
    key: await readFile(options.tlsKeyFile, 'utf8'),
    minVersion: options.minTlsVersion,
  };
  if (options.mutualTlsCaFile !== undefined) tls.clientCa = await readFile(options.mutualTlsCaFile, 'utf8');
  try {
    if (options.mutualTlsCn !== undefined) tls.clientCn = compileClientCnPattern(options.mutualTlsCn);
    checkTlsConfig(tls);
  } catch (error) {
    if (error instanceof TlsConfigError) throw new ServerOptionError(error.code, TLS_FIELD_FLAGS[error.field], error.message, { cause: error });
    throw error;
  }
  return tls;
}
