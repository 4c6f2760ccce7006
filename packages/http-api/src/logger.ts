/**
 * Structured JSON logging (pino). Request bodies are never logged; redaction by path is a second line
 * of defence for anything that logs an object holding a private key, PIN, token or auth key.
 */
import { pino } from 'pino';
import type { DestinationStream, Logger, LoggerOptions } from 'pino';

/** pino's logger type, re-exported so operation authors need no direct pino dependency. */
export type { Logger } from 'pino';

/** Log levels certsmith accepts, pino's names. */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';

/** Field names whose values are secrets wherever they appear (CFSSL request and config names included). */
const SECRET_FIELDS = [
  'private_key',
  'privateKey',
  'key',
  'key_pem',
  'pin',
  'pinValue',
  'password',
  'passphrase',
  'token',
  'auth_key',
  'authKey',
  'authorization',
  'cookie',
  'secret',
];

/**
 * pino redaction paths: each secret field at the top level and up to two levels down, plus request
 * headers that carry credentials. Exported so other loggers (workers, plugins) can reuse them.
 */
export const REDACT_PATHS: readonly string[] = [
  ...SECRET_FIELDS,
  ...SECRET_FIELDS.map((field) => `*.${field}`),
  ...SECRET_FIELDS.map((field) => `*.*.${field}`),
  'req.headers["x-auth-token"]',
  'headers["x-auth-token"]',
];

/** Options of {@link createLogger}. */
export interface CreateLoggerOptions {
  /** Minimum level; default `info`. */
  level?: LogLevel;
  /**
   * Where lines go; default stdout, written asynchronously (see {@link createLogger}). Tests pass a
   * stream to capture lines.
   */
  destination?: DestinationStream;
  /** Fields added to every line (e.g. `{ service: 'certsmith' }`). */
  base?: Record<string, unknown>;
}

/**
 * Most log output held while stdout does not drain (a stalled pipe): beyond it lines are dropped
 * rather than letting memory grow without bound. The synchronous default blocked the event loop
 * instead.
 */
const MAX_PENDING_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Create the server logger: JSON lines, ISO timestamps, secrets redacted.
 *
 * Without a `destination`, lines go to stdout asynchronously, gathered for up to
 * {@link LOG_WRITE_INTERVAL_MS} (see `createStdoutDestination`): pino's default, one synchronous
 * `write(2)` per line, is costly for the event loop (see docs/performance.md#log-lines-written-in-batches).
 * Pending lines are flushed synchronously when the process exits, and `logger.flush(callback)` waits
 * until they are written.
 */
export function createLogger(options: CreateLoggerOptions = {}): Logger {
  const loggerOptions: LoggerOptions = {
    level: options.level ?? 'info',
    base: options.base ?? null,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACT_PATHS], censor: '[redacted]' },
    serializers: { err: pino.stdSerializers.err },
  };
  const logger = pino(loggerOptions, options.destination ?? createStdoutDestination());
  plainJsonLoggers.add(logger);
  return logger;
}

/**
 * Loggers made by {@link createLogger}: their lines are pino's defaults plus the ISO time, with no
 * formatters, mixins or hooks, so the request log may write its line itself (`request-log.ts`).
 */
const plainJsonLoggers = new WeakSet<Logger>();

/** Whether `logger` was made by {@link createLogger} (not a child of it: a child may change the format). */
export function isPlainJsonLogger(logger: Logger): boolean {
  return plainJsonLoggers.has(logger);
}

/** A log destination whose pending lines can be flushed (pino calls `flush` for `logger.flush`). */
interface FlushableDestination extends DestinationStream {
  flush(callback?: (error?: Error) => void): void;
}

/**
 * Longest a log line waits before it is handed to the write: lines logged meanwhile go out in the
 * same write. An operator tailing the log sees each request within this; a server under load makes
 * one write per interval (or per {@link LOG_WRITE_EAGER_LENGTH}) instead of one per event-loop turn.
 *
 * Short on purpose: pending lines are strings on the event loop's heap, and those alive at two
 * young-generation collections are promoted (see docs/performance.md#log-lines-written-in-batches).
 */
export const LOG_WRITE_INTERVAL_MS = 4;

/**
 * Pending log text (UTF-16 code units) that is handed over at once instead of at the interval: a
 * faster server collects its young generation more often, so the amount, not only the time, is
 * bounded.
 */
const LOG_WRITE_EAGER_LENGTH = 16 * 1024;

/**
 * stdout, written asynchronously by pino's destination (sonic-boom), with the lines of up to
 * {@link LOG_WRITE_INTERVAL_MS} handed over as one chunk: each write is a trip through libuv's thread
 * pool (see docs/performance.md#log-lines-written-in-batches). Chunks that arrive while a write is
 * in flight go out together with the next one.
 */
function createStdoutDestination(): FlushableDestination {
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 1, maxLength: MAX_PENDING_LOG_BYTES });
  let pending: string[] = [];
  let pendingLength = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const handOver = (): void => {
    clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0) return;
    const lines = pending.length === 1 ? pending[0]! : pending.join('');
    pending = [];
    pendingLength = 0;
    stdout.write(lines);
  };
  // At exit, the pending lines are written synchronously (pino's own exit flush of the destination
  // may already have run).
  process.once('exit', () => {
    handOver();
    try {
      stdout.flushSync();
    } catch {
      // Not open yet, or already destroyed: nothing can be written any more.
    }
  });
  return {
    write(line: string): void {
      pending.push(line);
      pendingLength += line.length;
      if (pendingLength >= LOG_WRITE_EAGER_LENGTH) handOver();
      else if (timer === undefined) {
        timer = setTimeout(handOver, LOG_WRITE_INTERVAL_MS);
        // Pending lines never keep a finished process alive: its exit writes them.
        timer.unref();
      }
    },
    flush(callback?: (error?: Error) => void): void {
      handOver();
      stdout.flush(callback);
    },
  };
}
