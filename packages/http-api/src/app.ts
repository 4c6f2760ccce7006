/**
 * The Koa application: CFSSL's `/api/v1/cfssl/<op>` routes (plus the `/api/v1/svc/<op>` alias) built
 * from a list of operations, one error middleware at the top that turns every failure into the JSON
 * envelope, and one log line per request.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Koa from 'koa';
import type { Context } from 'koa';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { errorEnvelope, serializeEnvelope, successEnvelope } from './envelope.js';
import type { Envelope, ResponseMessage } from './envelope.js';
import { mapErrorToResponse } from './error-mapping.js';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError, UnknownTaskError } from './errors.js';
import { createHealthOperation } from './health-operation.js';
import type { HealthOperationOptions } from './health-operation.js';
import type { AnyOperation, OperationContext } from './operation.js';
import { DEFAULT_MAX_BODY_BYTES, parseJsonObject, readRequestBody } from './request-body.js';
import { createInlineTaskRunner } from './task-runner.js';
import type { TaskRunner } from './task-runner.js';
import { validateRequest } from './validation.js';

/** Path prefixes operations are served under: CFSSL's literal, and the `svc` alias. */
export const API_PREFIXES: readonly string[] = ['/api/v1/cfssl/', '/api/v1/svc/'];

/** Options of {@link createApp}. */
export interface AppOptions {
  /**
   * The operations to serve. A `health` operation ({@link createHealthOperation}) is added unless one
   * named `health` is in the list.
   */
  operations: readonly AnyOperation[];
  /** Runs worker tasks; default {@link createInlineTaskRunner} (main thread). Servers pass a pool. */
  taskRunner?: TaskRunner;
  /** Request logger; default: silent. */
  logger?: Logger;
  /** Largest accepted request body in bytes; default 1 MiB. */
  maxBodyBytes?: number;
  /** Options of the default health operation (contributors). */
  health?: HealthOperationOptions;
  /** While this returns true, responses carry `Connection: close` so keep-alive clients let go. */
  isShuttingDown?: () => boolean;
}

/** Per-request state the middlewares share through `ctx.state`. */
interface RequestState {
  requestId: string;
  operation?: string;
  code?: number;
}

/**
 * Build the Koa app. Throws at build time for duplicate operation names. The returned app is plain
 * Koa: `app.callback()` is the request listener (see `createHttpServer`).
 */
export function createApp(options: AppOptions): Koa {
  const logger = options.logger ?? pino({ level: 'silent' });
  const taskRunner = options.taskRunner ?? createInlineTaskRunner();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new RangeError(`maxBodyBytes must be a non-negative integer, got ${maxBodyBytes}`);
  }
  const isShuttingDown = options.isShuttingDown ?? (() => false);

  const operations = new Map<string, AnyOperation>();
  for (const operation of options.operations) {
    if (operations.has(operation.name)) throw new TypeError(`two operations are named "${operation.name}"`);
    operations.set(operation.name, operation);
  }
  if (!operations.has('health')) operations.set('health', createHealthOperation(options.health));

  const app = new Koa();
  // Every error is answered by the middleware below; Koa's own handler would print to stderr.
  app.silent = true;
  app.on('error', (error: unknown) => logger.error({ err: error }, 'koa error'));

  app.use(async (ctx, next) => {
    const started = performance.now();
    const state = ctx.state as RequestState;
    state.requestId = pickRequestId(ctx.get('X-Request-Id'));
    ctx.set('X-Request-Id', state.requestId);
    ctx.set('X-Content-Type-Options', 'nosniff');
    logger.debug({ reqId: state.requestId, method: ctx.method, path: ctx.path }, 'request started');
    try {
      await next();
    } catch (error) {
      const response = mapErrorToResponse(error);
      if (response.unexpected) {
        logger.error({ err: error, reqId: state.requestId, operation: state.operation }, 'unexpected error');
      }
      state.code = response.code;
      for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
      // The rest of an oversized body is not read; closing the connection discards it.
      if (error instanceof PayloadTooLargeError) ctx.set('Connection', 'close');
      send(ctx, response.status, errorEnvelope(response.code, response.message));
    } finally {
      if (isShuttingDown()) ctx.set('Connection', 'close');
      logger.info(
        {
          reqId: state.requestId,
          method: ctx.method,
          path: ctx.path,
          operation: state.operation,
          status: ctx.status,
          code: state.code,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        },
        'request',
      );
    }
  });

  app.use(async (ctx) => {
    const state = ctx.state as RequestState;
    const name = operationName(ctx.path);
    const operation = name === null ? undefined : operations.get(name);
    if (operation === undefined) throw new NotFoundError();
    state.operation = operation.name;
    // CFSSL compares the method exactly against the endpoint's allow list (api/api.go:ServeHTTP).
    if (ctx.method !== operation.method) throw new MethodNotAllowedError(ctx.method);

    const request =
      operation.body === undefined
        ? undefined
        : validateRequest(operation.body, parseJsonObject(await readRequestBody(ctx.req, maxBodyBytes)));

    const messages: ResponseMessage[] = [];
    const allowedTasks = new Set((operation.tasks ?? []).map((task) => task.name));
    const aborter = new AbortController();
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) aborter.abort(new Error('client disconnected'));
    });
    const context: OperationContext = {
      requestId: state.requestId,
      log: logger.child({ reqId: state.requestId, operation: operation.name }),
      signal: aborter.signal,
      runTask(task, input, runOptions) {
        // Undeclared tasks would be missing from the server's pool; fail the same way everywhere.
        if (!allowedTasks.has(task.name)) return Promise.reject(new UnknownTaskError(task.name, [...allowedTasks]));
        return taskRunner.run(task, input, runOptions);
      },
      addMessage(message) {
        messages.push({ code: message.code, message: message.message });
      },
    };
    const result = await operation.handle(request, context);
    send(ctx, 200, successEnvelope(result === undefined ? null : result, messages));
  });

  return app;
}

/** The operation name for a path under one of {@link API_PREFIXES}, or `null`. Exact match, as Go's mux. */
export function operationName(path: string): string | null {
  for (const prefix of API_PREFIXES) {
    if (path.startsWith(prefix)) {
      const name = path.slice(prefix.length);
      return /^[a-z][a-z0-9_]*$/.test(name) ? name : null;
    }
  }
  return null;
}

function send(ctx: Context, status: number, envelope: Envelope): void {
  ctx.status = status;
  // Set before the body so Koa keeps it; plain `application/json` as CFSSL's success responses.
  // CFSSL sends errors as text/plain (Go http.Error); certsmith deliberately sends JSON for both.
  ctx.set('Content-Type', 'application/json');
  ctx.body = serializeEnvelope(envelope);
}

/** Echo a caller's request ID when it is short and harmless; otherwise make one. */
function pickRequestId(header: string): string {
  return /^[\w.:@-]{1,128}$/.test(header) ? header : randomUUID();
}
