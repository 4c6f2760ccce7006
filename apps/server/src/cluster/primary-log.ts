/**
 * The log of the primary process of `serve --processes N`: the same JSON lines as the worker
 * processes' (pino, ISO time, `pid`), with `process: "primary"`, at the `--loglevel` of the command
 * line. It writes little — a signal, a worker replaced, the shutdown — so pino is loaded at the first
 * line or once the server listens, not during start-up, and writes synchronously: the primary's last lines come right
 * before it exits.
 */
import type { Logger } from 'pino';
import type { LogLevel } from '@certsmith/http-api';

/** What the primary logs with. */
export interface PrimaryLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /** Resolves once every line logged so far is written. */
  flushed(): Promise<void>;
  /** Load the logger now (once the server listens), so that later lines are written at once. */
  load(): void;
}

/** The primary's log at `level`. */
export function createPrimaryLog(level: LogLevel): PrimaryLog {
  let loading: Promise<Logger> | null = null;
  let written: Promise<void> = Promise.resolve();
  const logger = (): Promise<Logger> => {
    loading ??= import('pino').then(({ pino }) =>
      pino({ level, base: { pid: process.pid, process: 'primary' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: true })),
    );
    return loading;
  };
  const line = (method: 'info' | 'warn' | 'error') => (fields: Record<string, unknown>, message: string) => {
    if (level === 'silent') return;
    // In order: each line after the one before.
    written = written.then(() => logger()).then((log) => log[method](fields, message), () => undefined);
  };
  return { info: line('info'), warn: line('warn'), error: line('error'), flushed: () => written, load: () => void logger().catch(() => undefined) };
}
