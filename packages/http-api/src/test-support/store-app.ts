/**
 * Test helpers of the store operations: an in-memory SQLite store and an app serving operations
 * over it on 127.0.0.1.
 */
import type { Server } from 'node:http';
import { openStore } from '@certsmith/cert-store';
import type { Store } from '@certsmith/cert-store';
import { createApp } from '../app.js';
import type { AppOptions } from '../app.js';
import { closeHttpServer, createHttpServer, listen } from '../http-server.js';

/** A fresh in-memory store (SQLite on the calling thread). */
export async function memoryStore(now?: () => Date): Promise<Store> {
  return await openStore({ driver: 'sqlite3', dataSource: ':memory:' }, { sqlite: { thread: false }, ...(now === undefined ? {} : { now }) });
}

/** A served app and how to call it. */
export interface ServedApp {
  url: string;
  /** `fetch` on the app; the body is the parsed envelope. */
  call(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: { success: boolean; result: unknown; errors: Array<{ code: number; message: string }> } }>;
  close(): Promise<void>;
}

/** Serve `options` on a free loopback port. */
export async function serveApp(options: AppOptions): Promise<ServedApp> {
  const server: Server = createHttpServer(createApp(options));
  const { url } = await listen(server, 0, '127.0.0.1');
  return {
    url,
    async call(path, init) {
      const response = await fetch(`${url}${path}`, init);
      return { status: response.status, headers: response.headers, body: (await response.json()) as never };
    },
    close: () => closeHttpServer(server, { timeoutMs: 1000 }).then(() => undefined),
  };
}
