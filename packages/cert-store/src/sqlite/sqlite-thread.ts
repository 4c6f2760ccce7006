/**
 * Entry of the store's SQLite thread: it owns the connection, prepares the schema, then runs the
 * operations the main thread sends, one at a time, and answers each with its value or its error
 * as `{ code, name, message }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { toErrorPayload } from '@certsmith/x509-core';
import { prepareSchema } from '../migrations/migrator.js';
import type { MigrationMode } from '../migrations/migrator.js';
import { openSqliteDatabase, sqliteSchemaConnection } from './sqlite-database.js';
import type { SqliteSource } from './sqlite-database.js';
import { SqliteOperations } from './sqlite-operations.js';

/** What the thread is started with. */
export interface SqliteThreadData {
  source: SqliteSource;
  busyTimeoutMs?: number;
  migrations: MigrationMode;
}

/** A call from the main thread; `close` closes the connection and ends the thread. */
export interface SqliteThreadRequest {
  id: number;
  method: keyof SqliteOperations | 'close';
  args: unknown[];
}

async function main(): Promise<void> {
  const port = parentPort!;
  const data = workerData as SqliteThreadData;
  let operations: SqliteOperations;
  let close: () => void;
  try {
    const db = openSqliteDatabase(data.source, data.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: data.busyTimeoutMs });
    close = () => db.close();
    try {
      const applied = await prepareSchema(sqliteSchemaConnection(db), data.migrations);
      operations = new SqliteOperations(db);
      port.postMessage({ type: 'ready', applied });
    } catch (error) {
      db.close();
      throw error;
    }
  } catch (error) {
    port.postMessage({ type: 'failed', error: toErrorPayload(error) });
    port.close();
    return;
  }
  port.on('message', (request: SqliteThreadRequest) => {
    if (request.method === 'close') {
      close();
      port.postMessage({ id: request.id, ok: true, value: undefined });
      port.close();
      return;
    }
    try {
      const method = operations[request.method] as (...args: unknown[]) => unknown;
      const value = method.apply(operations, request.args);
      port.postMessage({ id: request.id, ok: true, value });
    } catch (error) {
      port.postMessage({ id: request.id, ok: false, error: toErrorPayload(error) });
    }
  });
}

void main();
