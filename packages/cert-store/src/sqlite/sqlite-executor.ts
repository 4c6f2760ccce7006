/**
 * Where the SQLite operations run: in the store's own thread (the default; the event loop only
 * posts a message and gets the answer) or inline in the calling thread (CLI commands, tests, and
 * the benchmark that compares the two).
 */
import { Worker } from 'node:worker_threads';
import { workerExecArgv } from '@certsmith/worker-pool';
import { fromErrorPayload } from '@certsmith/x509-core';
import type { ErrorPayload } from '@certsmith/x509-core';
import { StoreClosedError, StoreUnavailableError, rebuildStoreError } from '../errors.js';
import { prepareSchema } from '../migrations/migrator.js';
import type { MigrationMode } from '../migrations/migrator.js';
import { openSqliteDatabase, sqliteSchemaConnection } from './sqlite-database.js';
import type { SqliteSource } from './sqlite-database.js';
import { SqliteOperations } from './sqlite-operations.js';
import type { SqliteThreadData, SqliteThreadRequest } from './sqlite-thread.js';

type Operation = Exclude<keyof SqliteOperations, 'constructor'>;
type OperationFn<M extends Operation> = SqliteOperations[M] extends (...args: infer A) => infer R ? (...args: A) => R : never;

/** Runs {@link SqliteOperations} somewhere and answers asynchronously. */
export interface SqliteExecutor {
  call<M extends Operation>(method: M, ...args: Parameters<OperationFn<M>>): Promise<ReturnType<OperationFn<M>>>;
  close(): Promise<void>;
}

/** Options shared by both executors. */
export interface SqliteExecutorOptions {
  source: SqliteSource;
  busyTimeoutMs?: number;
  migrations: MigrationMode;
}

/** Run the operations in the calling thread. */
export async function openInlineExecutor(options: SqliteExecutorOptions): Promise<SqliteExecutor> {
  const db = openSqliteDatabase(options.source, options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs });
  try {
    await prepareSchema(sqliteSchemaConnection(db), options.migrations);
  } catch (error) {
    db.close();
    throw error;
  }
  const operations = new SqliteOperations(db);
  let closed = false;
  return {
    async call(method, ...args) {
      if (closed) throw new StoreClosedError();
      const fn = operations[method] as (...a: unknown[]) => unknown;
      return fn.apply(operations, args) as never;
    },
    async close() {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

/**
 * The thread's entry. Under vitest this module is `src/sqlite/sqlite-executor.ts`; the thread
 * always runs the built `dist/sqlite/sqlite-thread.js` (Node 20 cannot load TypeScript).
 */
function threadEntryUrl(): URL {
  const own = import.meta.url;
  if (own.endsWith('.ts')) return new URL(own.replace('/src/sqlite/sqlite-executor.ts', '/dist/sqlite/sqlite-thread.js'));
  return new URL('./sqlite-thread.js', own);
}

/**
 * Node flags for the thread: the parent's minus `--conditions` (which would point workspace packages
 * at TypeScript sources) and minus the per-process V8 flags a Worker refuses — the `certsmith`
 * executable itself runs with `--max-semi-space-size=4 --single-threaded-gc`, and passed again they
 * stopped the thread from starting (`ERR_WORKER_INVALID_EXEC_ARGV`), and with it `certsmith serve`.
 */
function threadExecArgv(): string[] {
  return workerExecArgv(process.execArgv);
}

type Reply = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: ErrorPayload };
type Startup = { type: 'ready'; applied: string[] } | { type: 'failed'; error: ErrorPayload };

/** Start the SQLite thread; resolves once it has opened the file and prepared the schema. */
export async function openThreadExecutor(options: SqliteExecutorOptions): Promise<SqliteExecutor> {
  const data: SqliteThreadData = { source: options.source, migrations: options.migrations };
  if (options.busyTimeoutMs !== undefined) data.busyTimeoutMs = options.busyTimeoutMs;
  const worker = new Worker(threadEntryUrl(), { workerData: data, execArgv: threadExecArgv() });
  const pending = new Map<number, { resolve: (value: never) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let failure: Error | null = null;
  let closing = false;

  const failAll = (error: Error) => {
    failure ??= error;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };

  await new Promise<void>((resolve, reject) => {
    const onStartup = (message: Startup) => {
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (message.type === 'ready') resolve();
      else reject(rebuildStoreError(message.error));
    };
    const onError = (error: Error) => reject(new StoreUnavailableError(`the SQLite thread did not start: ${error.message}`, { cause: error }));
    const onExit = (code: number) => reject(new StoreUnavailableError(`the SQLite thread exited with code ${code} while starting`));
    worker.once('message', onStartup);
    worker.once('error', onError);
    worker.once('exit', onExit);
  }).catch(async (error: unknown) => {
    await worker.terminate();
    throw error;
  });

  worker.on('message', (reply: Reply) => {
    const waiter = pending.get(reply.id);
    if (waiter === undefined) return;
    pending.delete(reply.id);
    if (reply.ok) waiter.resolve(reply.value as never);
    else waiter.reject(reply.error.code > 0 ? rebuildStoreError(reply.error) : fromErrorPayload(reply.error));
  });
  worker.on('error', (error) => failAll(new StoreUnavailableError(`the SQLite thread failed: ${error.message}`, { cause: error })));
  worker.on('exit', () => failAll(closing ? new StoreClosedError() : new StoreUnavailableError('the SQLite thread stopped')));

  const send = <T>(method: SqliteThreadRequest['method'], args: unknown[]): Promise<T> => {
    if (failure !== null) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (value: never) => void, reject });
      worker.postMessage({ id, method, args } satisfies SqliteThreadRequest);
    });
  };

  return {
    call: (method, ...args) => send(method, args),
    async close() {
      if (closing) return;
      closing = true;
      if (failure === null) await send('close', []).catch(() => undefined);
      await worker.terminate();
    },
  };
}
