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
import { BadRequestError } from '@certsmith/x509-core';
import { errorEnvelope, serializeEnvelope, successEnvelope } from './envelope.js';
import type { Envelope, ResponseMessage } from './envelope.js';
import { mapErrorToResponse } from './error-mapping.js';
import { MethodNotAllowedError, NotFoundError, PayloadTooLargeError, RequestTimeoutError } from './errors.js';
import { UnknownTaskError, createInlineTaskRunner } from '@certsmith/worker-pool';
import type { RunTaskOptions, TaskRunner, TaskDefinition } from '@certsmith/worker-pool';
import { createHealthOperation } from './health-operation.js';
import type { HealthOperationOptions } from './health-operation.js';
import { compilePathTemplate } from './operation.js';
import type { AnyOperation, OperationContext, PathTemplate, RequestLabels } from './operation.js';
import { closeAfterResponse } from './lingering-close.js';
import { DEFAULT_BODY_TIMEOUT_MS, DEFAULT_MAX_BODY_BYTES, parseJsonObject, readRequestBody } from './request-body.js';
import { validateRequest } from './validation.js';
import { clientCommonName } from './client-auth.js';
import { isUnderMount } from './mounted-handler.js';
import type { MountedHandler } from './mounted-handler.js';
import { RawResponse } from './raw-response.js';
import { createRequestLog } from './request-log.js';

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
  /**
   * How long a request body may take to arrive once the handler starts reading it, in ms; over it
   * the request is answered 408 and the connection closed. Default 20 000; 0 = no limit.
   */
  bodyTimeoutMs?: number;
  /** Options of the default health operation (contributors). */
  health?: HealthOperationOptions;
  /** While this returns true, responses carry `Connection: close` so keep-alive clients let go. */
  isShuttingDown?: () => boolean;
  /**
   * Routes answered outside the envelope (the OpenAPI document, Prometheus `/metrics`), matched by
   * exact path before the operations. Their failures still get the envelope.
   */
  routes?: readonly RawRoute[];
  /** Told about every finished request (metrics); must not throw. */
  metrics?: RequestObserver;
  /**
   * Handlers mounted at a path prefix, answered outside the envelope (the OCSP responder), matched
   * before routes and operations.
   */
  mounts?: readonly MountedHandler[];
}

/** A route whose success body is sent as is (not in the CFSSL envelope). */
export interface RawRoute {
  /** For logs and metrics (`operation` / `endpoint`), e.g. `openapi`, `metrics`. */
  readonly name: string;
  /** Exact path, e.g. `/metrics`. */
  readonly path: string;
  /** The method served (and HEAD, answered without the body); any other gets 405 in the envelope. */
  readonly method: 'GET';
  /** One-line description (OpenAPI `summary`). */
  readonly summary?: string;
  /** `Content-Type` of a successful response. */
  readonly contentType: string;
  /** Produce the body. Throw coded errors as operations do. */
  handle(): string | Promise<string>;
}

/** One finished request, as reported to {@link RequestObserver}. */
export interface RequestObservation {
  /** Operation or route name; `unknown` for paths nothing serves. */
  endpoint: string;
  method: string;
  status: number;
  /** `errors[0].code` of an error response. */
  code?: number | undefined;
  durationSeconds: number;
}

/** Receives request observations (e.g. Prometheus counters); see `createServerMetrics`. */
export interface RequestObserver {
  observeRequest(observation: RequestObservation): void;
}

/** Per-request state the middlewares share through `ctx.state`. */
interface RequestState {
  requestId: string;
  operation?: string;
  code?: number;
  label?: string;
  profile?: string;
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
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  if (!Number.isInteger(bodyTimeoutMs) || bodyTimeoutMs < 0) {
    throw new RangeError(`bodyTimeoutMs must be a non-negative integer, got ${bodyTimeoutMs}`);
  }
  const isShuttingDown = options.isShuttingDown ?? (() => false);
  const mounts = [...(options.mounts ?? [])];
  const routes = new Map<string, RawRoute>();
  for (const route of options.routes ?? []) {
    if (routes.has(route.path)) throw new TypeError(`two routes are served at "${route.path}"`);
    routes.set(route.path, route);
  }
  const metrics = options.metrics;

  const operations = new Map<string, AnyOperation>();
  for (const operation of options.operations) {
    if (operations.has(operation.name)) throw new TypeError(`two operations are named "${operation.name}"`);
    operations.set(operation.name, operation);
  }
  if (!operations.has('health')) operations.set('health', createHealthOperation(options.health));
  // Operations with their own path (`/api/v1/certsmith/…`) are matched by template, never under
  // CFSSL's prefixes.
  const ownPaths: Array<{ template: PathTemplate; operation: AnyOperation }> = [];
  for (const operation of operations.values()) {
    if (operation.path === undefined) continue;
    if (ownPaths.some((entry) => entry.template.template === operation.path)) throw new TypeError(`two operations are served at "${operation.path}"`);
    ownPaths.push({ template: compilePathTemplate(operation.path), operation });
  }
  // Each operation's declared task names, looked up per request by `runTask`.
  const declaredTasks = new Map<AnyOperation, ReadonlySet<string>>(
    [...operations.values()].map((operation) => [operation, new Set((operation.tasks ?? []).map((task) => task.name))]),
  );

  const requestLog = createRequestLog(logger);

  const app = new Koa();
  // Every error is answered by the middleware below; Koa's own handler would print to stderr.
  app.silent = true;
  app.on('error', (error: unknown) => logger.error({ err: error }, 'koa error'));

  app.use(async (ctx, next) => {
    const started = performance.now();
    const state = ctx.state as RequestState;
    state.requestId = pickRequestId(ctx.req.headers['x-request-id']);
    // Straight to Node: no header is sent yet, and Koa's `ctx.set` builds arrays and normalises
    // each call (see docs/performance.md#the-request-path-outside-the-operation).
    ctx.res.setHeader('X-Request-Id', state.requestId);
    ctx.res.setHeader('X-Content-Type-Options', 'nosniff');
    // Checked first: the fields (Koa getters, an object) would be made for nothing at `info`.
    if (logger.isLevelEnabled('debug')) logger.debug({ reqId: state.requestId, method: ctx.method, path: ctx.path }, 'request started');
    try {
      await next();
    } catch (error) {
      const response = mapErrorToResponse(error);
      if (response.unexpected) {
        logger.error({ err: error, reqId: state.requestId, operation: state.operation }, 'unexpected error');
      } else if (response.replacedMessage !== undefined) {
        // A coded error carried an internal (Node, undici, OpenSSL) text: the client got CFSSL's
        // wording for the code; the original is for the operator only.
        logger.warn({ err: error, reqId: state.requestId, operation: state.operation, code: response.code }, 'internal error text replaced in the answer');
      }
      state.code = response.code;
      for (const [name, value] of Object.entries(response.headers)) ctx.set(name, value);
      // The rest of an oversized or stalled body is not read: answer, then close the connection
      // (lingering, so that the client still reads this answer while it is sending).
      if (error instanceof PayloadTooLargeError || error instanceof RequestTimeoutError) {
        ctx.set('Connection', 'close');
        closeAfterResponse(ctx.req, ctx.res);
      }
      send(ctx, response.status, errorEnvelope(response.code, response.message));
    } finally {
      if (isShuttingDown()) ctx.set('Connection', 'close');
      const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
      // Each read once: Koa's getters go through its delegates (and `path` through parseurl).
      const method = ctx.method;
      const status = ctx.status;
      requestLog({
        reqId: state.requestId,
        method,
        path: ctx.path,
        operation: state.operation,
        status,
        code: state.code,
        label: state.label,
        profile: state.profile,
        durationMs,
      });
      if (metrics !== undefined) {
        try {
          metrics.observeRequest({
            endpoint: state.operation ?? 'unknown',
            method,
            status,
            code: state.code,
            durationSeconds: durationMs / 1000,
          });
        } catch (error) {
          logger.warn({ err: error, reqId: state.requestId }, 'recording request metrics failed');
        }
      }
    }
  });

  app.use(async (ctx) => {
    const state = ctx.state as RequestState;
    // Each read once: Koa's getters go through its delegates (and `path` through parseurl).
    const path = ctx.path;
    const method = ctx.method;
    const mount = mounts.length === 0 ? undefined : mounts.find((candidate) => isUnderMount(path, candidate.path));
    if (mount !== undefined) {
      state.operation = mount.name;
      const body = method === 'POST' ? await readRequestBody(ctx.req, mount.maxBodyBytes ?? maxBodyBytes, bodyTimeoutMs) : new Uint8Array(0);
      const answer = await mount.handle({ method, path, headers: ctx.headers, body });
      ctx.status = answer.status;
      for (const [name, value] of Object.entries(answer.headers)) ctx.set(name, value);
      ctx.body = Buffer.from(answer.body.buffer, answer.body.byteOffset, answer.body.byteLength);
      return;
    }
    const route = routes.get(path);
    if (route !== undefined) {
      state.operation = route.name;
      if (!methodMatches(method, route.method)) throw new MethodNotAllowedError(method);
      const body = await route.handle();
      ctx.status = 200;
      ctx.set('Content-Type', route.contentType);
      ctx.body = body;
      return;
    }
    const name = operationName(path);
    let operation = name === null ? undefined : operations.get(name);
    if (operation?.path !== undefined) operation = undefined;
    let pathParameters: Record<string, string> = {};
    for (let index = 0; operation === undefined && index < ownPaths.length; index += 1) {
      const matched = ownPaths[index]!.template.match(path);
      if (matched !== null) {
        operation = ownPaths[index]!.operation;
        pathParameters = matched;
      }
    }
    if (operation === undefined) throw new NotFoundError();
    state.operation = operation.name;
    // CFSSL compares the method exactly against the endpoint's allow list (api/api.go:ServeHTTP).
    if (!methodMatches(method, operation.method)) throw new MethodNotAllowedError(method);

    let request: unknown;
    if (operation.body !== undefined) {
      const body = parseBody(operation, await readRequestBody(ctx.req, maxBodyBytes, bodyTimeoutMs));
      noteRequestLabels(state, operation, body);
      request = validateRequest(operation.body, body);
    } else if (operation.query !== undefined) {
      const parameters = urlParameters(ctx.querystring, pathParameters);
      noteRequestLabels(state, operation, parameters);
      request = validateRequest(operation.query, parameters);
    }

    const context = new RequestContext(state.requestId, operation, ctx, logger, taskRunner, declaredTasks.get(operation) as ReadonlySet<string>);
    const result = await operation.handle(request, context);
    if (result instanceof RawResponse) {
      ctx.status = 200;
      for (const [name, value] of Object.entries(result.headers)) ctx.set(name, value);
      ctx.set('Content-Type', result.contentType);
      ctx.body = Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength);
      return;
    }
    send(ctx, 200, successEnvelope(result === undefined ? null : result, context.messages));
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

/**
 * The URL parameters of a request as one object: the query string's (each name at most once: a
 * repeated one is ambiguous, so 400) and the path template's (a query parameter may not repeat one).
 */
function urlParameters(querystring: string, pathParameters: Record<string, string>): Record<string, string> {
  // No prototype: a parameter named `__proto__` is a parameter like any other.
  const parameters: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, pathParameters);
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(querystring)) {
    if (seen.has(key) || Object.hasOwn(pathParameters, key)) throw new BadRequestError(`query parameter ${JSON.stringify(key)} is given more than once`);
    seen.add(key);
    parameters[key] = value;
  }
  return parameters;
}

/**
 * Whether a request `method` is served by a route or operation of `served` method: exactly, or HEAD
 * for GET. CFSSL answers HEAD with 405, but load balancers probe `/health` with HEAD; Koa sends the
 * GET answer's status and headers (Content-Length included) without the body (RFC 9110 §9.3.2).
 */
function methodMatches(method: string, served: string): boolean {
  return method === served || (method === 'HEAD' && served === 'GET');
}

function send(ctx: Context, status: number, envelope: Envelope): void {
  ctx.status = status;
  // Set before the body so Koa keeps it; plain `application/json` as CFSSL's success responses.
  // CFSSL sends errors as text/plain (Go http.Error); certsmith deliberately sends JSON for both.
  ctx.set('Content-Type', 'application/json');
  // A string, not a Buffer made here: Koa measures the string and Node encodes it when writing it,
  // but a bundle-sized Buffer is a native allocation of its own per request, which cost more (see
  // docs/performance.md#the-request-path-outside-the-operation).
  ctx.body = serializeEnvelope(envelope);
}

/** The body as a JSON object, failing with the operation's own text when it has one. */
function parseBody(operation: AnyOperation, bytes: Uint8Array): Record<string, unknown> {
  try {
    return parseJsonObject(bytes);
  } catch (error) {
    if (operation.invalidBodyMessage === undefined || !(error instanceof BadRequestError)) throw error;
    throw new BadRequestError(operation.invalidBodyMessage, { cause: error });
  }
}

/** Longest label or profile written to the log (they are caller-supplied). */
const MAX_LOGGED_LABEL = 128;

/**
 * Remember the `label` and `profile` a body names, for the request log line: the operation's own
 * `requestLabels`, else top-level string fields matched case-insensitively, last one winning (Go's
 * decoder). Nothing else of the body is kept.
 */
function noteRequestLabels(state: RequestState, operation: AnyOperation, body: Record<string, unknown>): void {
  let labels: RequestLabels;
  try {
    labels = operation.requestLabels ? operation.requestLabels(body) : goLabelFields(body);
  } catch {
    return;
  }
  if (typeof labels.label === 'string' && labels.label !== '') state.label = labels.label.slice(0, MAX_LOGGED_LABEL);
  if (typeof labels.profile === 'string' && labels.profile !== '') state.profile = labels.profile.slice(0, MAX_LOGGED_LABEL);
}

/** The body's `label` and `profile` string fields, in one pass over its keys (no entry arrays: this runs per request). */
function goLabelFields(body: Record<string, unknown>): RequestLabels {
  let label: unknown;
  let profile: unknown;
  for (const key of Object.keys(body)) {
    const lowered = key.toLowerCase();
    if (lowered === 'label') label = body[key];
    else if (lowered === 'profile') profile = body[key];
  }
  return { label: typeof label === 'string' ? label : undefined, profile: typeof profile === 'string' ? profile : undefined };
}

/** Echo a caller's request ID when it is short and harmless; otherwise make one. */
function pickRequestId(header: string | string[] | undefined): string {
  return typeof header === 'string' && /^[\w.:@-]{1,128}$/.test(header) ? header : randomUUID();
}

/**
 * The {@link OperationContext} of one request. A class, not an object literal, on purpose: a literal
 * with getters and closures gets a hidden class of its own per request, which V8's scavenger keeps
 * alive through the (old) transition tree of the literal's map — and with it every closure, the Koa
 * context and the whole request graph (see docs/performance.md#the-request-context-is-a-class).
 */
class RequestContext implements OperationContext {
  readonly messages: ResponseMessage[] = [];
  private requestLog: Logger | undefined = undefined;
  private aborter: AbortController | undefined = undefined;

  constructor(
    readonly requestId: string,
    private readonly operation: AnyOperation,
    private readonly koa: Context,
    private readonly logger: Logger,
    private readonly taskRunner: TaskRunner,
    private readonly allowedTasks: ReadonlySet<string>,
  ) {}

  /** The verified client certificate's subject CN (mutual TLS), read when asked. */
  get clientCommonName(): string | null {
    return clientCommonName(this.koa.req.socket);
  }

  /** Made on first use: most requests never log through it. */
  get log(): Logger {
    this.requestLog ??= this.logger.child({ reqId: this.requestId, operation: this.operation.name });
    return this.requestLog;
  }

  /**
   * Made only when a handler asks for it: an AbortController per request costs more than most of
   * what the main thread does for one.
   */
  get signal(): AbortSignal {
    if (this.aborter === undefined) {
      const controller = new AbortController();
      this.aborter = controller;
      const response = this.koa.res;
      if ((response.destroyed || response.closed) && !response.writableFinished) controller.abort(new Error('client disconnected'));
      else {
        response.once('close', () => {
          if (!response.writableFinished) controller.abort(new Error('client disconnected'));
        });
      }
    }
    return this.aborter.signal;
  }

  runTask<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput, options?: RunTaskOptions): Promise<TOutput> {
    // Undeclared tasks would be missing from the server's pool; fail the same way everywhere.
    if (!this.allowedTasks.has(task.name)) return Promise.reject(new UnknownTaskError(task.name, [...this.allowedTasks]));
    return this.taskRunner.run(task, input, options);
  }

  addMessage(message: ResponseMessage): void {
    this.messages.push({ code: message.code, message: message.message });
  }
}
