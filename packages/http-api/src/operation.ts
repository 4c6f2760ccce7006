/**
 * Operations: one CFSSL endpoint each (`bundle`, `newcert`, `certinfo`, `health`…). An operation is
 * defined once, with its method, its zod body schema and its handler; the app is built from a list of
 * operations, so packages add endpoints without touching the app. Dependencies (signers, trust stores,
 * config) reach an operation through a factory closure:
 *
 * ```ts
 * export function createBundleOperation(deps: BundleDeps) {
 *   return defineOperation({
 *     name: 'bundle', method: 'POST', body: bundleRequestSchema, tasks: [bundleTask],
 *     handle: (request, context) => context.runTask(bundleTask, { ...request, trust: deps.trustPaths }),
 *   });
 * }
 * ```
 */
import type * as z from 'zod';
import type { Logger } from 'pino';
import type { ResponseMessage } from './envelope.js';
import type { RunTaskOptions, TaskDefinition } from '@certsmith/worker-pool';

/**
 * Methods an operation can be served with. CFSSL compares the method exactly (case-sensitive) with its
 * allow list and answers everything else, HEAD and OPTIONS included, with 405. certsmith answers HEAD
 * on a GET operation as the GET without its body (load balancers probe `/health` with HEAD).
 */
export type HttpMethod = 'GET' | 'POST';

/** What a handler gets besides the validated request. */
export interface OperationContext {
  /** The request ID (echoed as `X-Request-Id`). */
  readonly requestId: string;
  /** Logger bound to this request (`reqId`, `operation`). Never log request bodies or secrets. */
  readonly log: Logger;
  /** Aborted when the client disconnects before the response is sent. */
  readonly signal: AbortSignal;
  /**
   * The subject CN of the client certificate the server's mutual TLS verified (`''` when it has
   * none), `null` without one (plain HTTP, or TLS without client certificates).
   */
  readonly clientCommonName: string | null;
  /** Run a worker task (on the pool in servers). Must be one of the operation's `tasks`. */
  runTask<TInput, TOutput>(task: TaskDefinition<TInput, TOutput>, input: TInput, options?: RunTaskOptions): Promise<TOutput>;
  /**
   * Add an item to the success envelope's `messages`, as CFSSL's `SendResponseWithMessage` does
   * (e.g. newcert's 5300 "lacks a hosts field" warning).
   */
  addMessage(message: ResponseMessage): void;
}

/** What {@link OperationDefinition.requestLabels} reports; absent fields are not logged. */
export interface RequestLabels {
  label?: string | undefined;
  profile?: string | undefined;
}

/** The parsed request a handler receives: the schema's output (body or query), or `undefined` without one. */
export type OperationRequest<TBody> = TBody extends z.ZodType ? z.output<TBody> : undefined;

/** An operation, as given to {@link defineOperation} and to `createApp`. */
export interface OperationDefinition<TBody extends z.ZodType | undefined = z.ZodType | undefined, TResult = unknown> {
  /**
   * Path segment after `/api/v1/cfssl/` (and `/api/v1/svc/`), e.g. `bundle`, `init_ca`; for an
   * operation with its own {@link path}, the name it has in logs, metrics, `--disable` and the
   * OpenAPI `operationId`.
   */
  readonly name: string;
  /**
   * The operation's own path, for endpoints outside CFSSL's namespace, e.g.
   * `/api/v1/certsmith/certificates/{aki}/{serial}`: matched exactly, each `{param}` standing for one
   * non-empty path segment (percent-decoded), handed to the handler with the query parameters (see
   * {@link query}). Absent: served at `/api/v1/cfssl/<name>` and `/api/v1/svc/<name>`.
   */
  readonly path?: string;
  /** The method served (and HEAD for GET); any other gets 405 `Method is not allowed:"<METHOD>"`. */
  readonly method: HttpMethod;
  /**
   * zod schema of the JSON body. When present the body must be a JSON object (`null` counts as `{}`)
   * that passes the schema, else 400 code 400 naming the field. Also the source of the OpenAPI
   * request schema. Omit it for operations without a body (GET).
   */
  readonly body?: TBody;
  /**
   * zod schema of the URL parameters of a GET operation: an object with one string per query
   * parameter and per `{param}` of {@link path}. A parameter given twice, or one the schema does not
   * accept, is a 400 naming it. The handler receives the schema's output as its request. Give either
   * `body` or `query`, not both; also the source of the OpenAPI `parameters`.
   */
  readonly query?: TBody;
  /**
   * Message of the 400 for a body that is not a JSON object (empty, syntax error, array…), when the
   * CFSSL handler has its own text for it (`/sign`: `Unable to parse sign request`). Default: the
   * parser's own description (position of the syntax error, type found).
   */
  readonly invalidBodyMessage?: string;
  /**
   * True when the operation answers 404 for something the request names that does not exist (a
   * certificate looked up by serial); the OpenAPI document then lists the 404.
   */
  readonly mayAnswerNotFound?: boolean;
  /**
   * The `Content-Type` of the document the operation answers with instead of the envelope (its
   * handler returns a `RawResponse`), e.g. `application/pkix-crl`; also what the OpenAPI document
   * describes. Errors still get the envelope.
   */
  readonly rawContentType?: string;
  /** Worker tasks the handler runs; the server registers them with its pool. */
  readonly tasks?: readonly TaskDefinition[];
  /** One-line description (OpenAPI `summary`). */
  readonly summary?: string;
  /**
   * zod schema of the envelope's `result` on success (output side). Used only to describe the
   * response in the OpenAPI document; keep it next to the result type and tie the two together at
   * compile time (see `SameShape` in `schema-types.ts`) so it cannot drift.
   */
  readonly result?: z.ZodType;
  /**
   * The signer `label` and signing `profile` a request names, for the request log line (never the
   * body). Default: top-level `label`/`profile` string fields, matched case-insensitively as Go
   * decodes them. Operations whose label sits elsewhere (authsign's base64 inner request) say so here.
   */
  requestLabels?(body: Record<string, unknown>): RequestLabels;
  /**
   * Produce the envelope's `result`. Throw coded errors (x509-core `CertsmithError` subclasses) for
   * failures: the app answers them with 400 and their code; anything uncoded becomes a 500. A
   * `JsonText` (JSON already serialised, e.g. by a worker task) is sent as it is.
   */
  handle(request: OperationRequest<TBody>, context: OperationContext): TResult | Promise<TResult>;
}

/**
 * Any operation, for lists of operations with different bodies and results. `any` (not `unknown`) so
 * a definition whose handler takes a specific request type is still assignable.
 */
export type AnyOperation = OperationDefinition<any, unknown>;

/**
 * Define an operation. Checks the name and method at definition time so wiring mistakes fail at
 * startup, not on the first request.
 */
export function defineOperation<TBody extends z.ZodType | undefined = undefined, TResult = unknown>(
  definition: OperationDefinition<TBody, TResult>,
): OperationDefinition<TBody, TResult> {
  if (!/^[a-z][a-z0-9_]*$/.test(definition.name)) {
    throw new TypeError(`operation name must match /^[a-z][a-z0-9_]*$/, got ${JSON.stringify(definition.name)}`);
  }
  if (definition.method !== 'GET' && definition.method !== 'POST') {
    throw new TypeError(`operation ${definition.name}: method must be GET or POST, got ${JSON.stringify(definition.method)}`);
  }
  if (definition.body !== undefined && definition.query !== undefined) {
    throw new TypeError(`operation ${definition.name}: give a body schema or a query schema, not both`);
  }
  if (definition.path !== undefined) compilePathTemplate(definition.path);
  return Object.freeze({ ...definition });
}

/** Every task used by `operations`, deduplicated: what a server registers with its worker pool. */
export function collectTasks(operations: readonly AnyOperation[]): TaskDefinition[] {
  const tasks = new Map<string, TaskDefinition>();
  for (const operation of operations) {
    for (const task of operation.tasks ?? []) {
      const existing = tasks.get(task.name);
      if (existing !== undefined && existing !== task) {
        throw new TypeError(`operation ${operation.name}: another task is already named "${task.name}"`);
      }
      tasks.set(task.name, task);
    }
  }
  return [...tasks.values()];
}

/** A compiled {@link OperationDefinition.path}: its matcher and its parameter names in order. */
export interface PathTemplate {
  readonly template: string;
  readonly parameters: readonly string[];
  /** The decoded parameters when `path` matches, else `null`; a segment that is not valid percent-encoding is a match failure. */
  match(path: string): Record<string, string> | null;
}

/**
 * Compile a path template (`/api/v1/certsmith/certificates/{aki}/{serial}`). Literal segments are
 * letters, digits, `.`, `_` and `-`; a parameter is a whole segment `{name}`.
 * @throws TypeError for a template of any other shape (a wiring mistake, found at start-up).
 */
export function compilePathTemplate(template: string): PathTemplate {
  const segments = template.split('/');
  if (segments[0] !== '' || segments.length < 2) throw new TypeError(`operation path must start with "/", got ${JSON.stringify(template)}`);
  const parameters: string[] = [];
  const pattern = segments
    .slice(1)
    .map((segment) => {
      const parameter = /^\{([a-z][a-z0-9_]*)\}$/.exec(segment);
      if (parameter !== null) {
        if (parameters.includes(parameter[1]!)) throw new TypeError(`operation path ${template} names {${parameter[1]}} twice`);
        parameters.push(parameter[1]!);
        return '([^/]+)';
      }
      if (!/^[A-Za-z0-9._-]+$/.test(segment)) throw new TypeError(`operation path ${template} has an invalid segment ${JSON.stringify(segment)}`);
      return segment.replace(/\./g, '\\.');
    })
    .join('/');
  const expression = new RegExp(`^/${pattern}$`);
  return {
    template,
    parameters,
    match(path) {
      const found = expression.exec(path);
      if (found === null) return null;
      const values: Record<string, string> = {};
      for (let index = 0; index < parameters.length; index += 1) {
        try {
          values[parameters[index]!] = decodeURIComponent(found[index + 1]!);
        } catch {
          return null;
        }
      }
      return values;
    },
  };
}
