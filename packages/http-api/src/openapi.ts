/**
 * An OpenAPI 3.1 document generated from the operation list: request bodies come from the same zod
 * schemas that validate requests (`z.toJSONSchema`, input side), success results from the
 * operations' `result` schemas (output side, tied to the handlers' result types at compile time),
 * and every response is described as CFSSL's envelope — the success envelope around the result, the
 * error envelope for every failure status. Nothing in the document is written by hand per endpoint,
 * so it cannot drift from what the server accepts and answers.
 */
import * as z from 'zod';
import { API_PREFIXES } from './app.js';
import type { RawRoute } from './app.js';
import type { AnyOperation } from './operation.js';

/** Options of {@link createOpenApiDocument}. */
export interface OpenApiOptions {
  title?: string;
  version?: string;
  /** Also list the `/api/v1/svc/` alias paths; default false. */
  includeAliases?: boolean;
  /** Routes served outside the envelope (the document itself, `/metrics`), described by content type. */
  routes?: readonly Pick<RawRoute, 'name' | 'path' | 'method' | 'summary' | 'contentType'>[];
}

const messageSchema = {
  type: 'object',
  description: 'One item of `errors` or `messages` (CFSSL `ResponseMessage`).',
  required: ['code', 'message'],
  properties: { code: { type: 'integer' }, message: { type: 'string' } },
  additionalProperties: false,
} as const;

/** Any envelope; kept for clients that only want the common shape. */
const envelopeSchema = {
  type: 'object',
  description: 'CFSSL response envelope (`api.Response`), sent for every response, errors included.',
  required: ['success', 'result', 'errors', 'messages'],
  properties: {
    success: { type: 'boolean' },
    result: {},
    errors: { type: 'array', items: { $ref: '#/components/schemas/ResponseMessage' } },
    messages: { type: 'array', items: { $ref: '#/components/schemas/ResponseMessage' } },
  },
  additionalProperties: false,
} as const;

const successEnvelopeSchema = {
  type: 'object',
  description: 'Success: `errors` is always empty; `messages` holds warnings such as code 5300.',
  required: ['success', 'result', 'errors', 'messages'],
  properties: {
    success: { const: true },
    result: {},
    errors: { type: 'array', maxItems: 0 },
    messages: { type: 'array', items: { $ref: '#/components/schemas/ResponseMessage' } },
  },
  additionalProperties: false,
} as const;

const errorEnvelopeSchema = {
  type: 'object',
  description: 'Failure: `result` is null and `errors` holds exactly one item; codes are listed in docs/errors.md.',
  required: ['success', 'result', 'errors', 'messages'],
  properties: {
    success: { const: false },
    result: { type: 'null' },
    errors: { type: 'array', items: { $ref: '#/components/schemas/ResponseMessage' }, minItems: 1, maxItems: 1 },
    messages: { type: 'array', maxItems: 0 },
  },
  additionalProperties: false,
} as const;

const headers = {
  RequestId: {
    description: 'The request ID: the caller’s `X-Request-Id` when it is 1–128 characters of `[A-Za-z0-9_.:@-]`, else a generated UUID. Log lines carry it as `reqId`.',
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
} as const;

const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } } as const;

/** Failure responses shared by every operation (`#/components/responses/<name>`). */
const errorResponses: Record<string, { status: string; description: string; retryAfter?: boolean }> = {
  BadRequest: {
    status: '400',
    description: 'Invalid body (code 400, the message names the field) or a CFSSL-coded error (code 1000–9300, HTTP 400)',
  },
  NotFound: { status: '404', description: 'What the request names does not exist (code 404)' },
  MethodNotAllowed: { status: '405', description: 'Wrong method: `Method is not allowed:"GET"` (code 405)' },
  PayloadTooLarge: { status: '413', description: 'Body larger than `--max-body` (code 413)' },
  InternalError: { status: '500', description: 'Unexpected error (code 500, generic message; details in the server log under the request ID)' },
  ServiceUnavailable: {
    status: '503',
    description: 'Worker queue full, task timeout, shutting down, or the certificate store unavailable (code 503)',
    retryAfter: true,
  },
};

/** `init_ca` → `InitCa`: the component name prefix of an operation. */
function componentName(operationName: string): string {
  return operationName
    .split(/[^a-z0-9]+/)
    .filter((part) => part !== '')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** JSON Schema of a zod schema, without `$schema` (the OpenAPI 3.1 dialect applies). */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

/**
 * OpenAPI `parameters` of a query schema: `in: path` for the `{name}` segments of `path` (always
 * required), `in: query` for the others (required as the schema says).
 */
function urlParameters(schema: z.ZodType, path: string | undefined): Record<string, unknown>[] {
  const json = jsonSchemaOf(schema, 'input');
  const properties = (json['properties'] ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((json['required'] ?? []) as string[]);
  const inPath = new Set([...(path ?? '').matchAll(/\{([a-z][a-z0-9_]*)\}/g)].map((match) => match[1]!));
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...propertySchema } = property;
    return {
      name,
      in: inPath.has(name) ? 'path' : 'query',
      required: inPath.has(name) || required.has(name),
      ...(typeof description === 'string' ? { description } : {}),
      schema: propertySchema,
    };
  });
}

/** Build the OpenAPI document (plain JSON-compatible object) for `operations`. */
export function createOpenApiDocument(operations: readonly AnyOperation[], options: OpenApiOptions = {}): Record<string, unknown> {
  const prefixes = options.includeAliases ? API_PREFIXES : API_PREFIXES.slice(0, 1);
  const schemas: Record<string, unknown> = {
    ResponseMessage: messageSchema,
    Envelope: envelopeSchema,
    SuccessEnvelope: successEnvelopeSchema,
    ErrorEnvelope: errorEnvelopeSchema,
  };
  const responses: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(errorResponses)) {
    responses[name] = {
      description: spec.description,
      headers: spec.retryAfter ? { ...requestIdHeader, 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : requestIdHeader,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  const errorRef = (name: string): Record<string, string> => ({ $ref: `#/components/responses/${name}` });

  const paths: Record<string, Record<string, unknown>> = {};
  const addPath = (path: string, method: string, item: unknown): void => {
    paths[path] = { ...(paths[path] ?? {}), [method]: item };
  };

  for (const operation of [...operations].sort((a, b) => a.name.localeCompare(b.name))) {
    const component = componentName(operation.name);
    let successSchema: Record<string, unknown> = { $ref: '#/components/schemas/SuccessEnvelope' };
    if (operation.result) {
      schemas[`${component}Result`] = jsonSchemaOf(operation.result, 'output');
      successSchema = {
        allOf: [successSchema, { type: 'object', properties: { result: { $ref: `#/components/schemas/${component}Result` } } }],
      };
    }
    const item: Record<string, unknown> = {
      operationId: operation.name,
      ...(operation.summary ? { summary: operation.summary } : {}),
      responses: {
        '200':
          operation.rawContentType === undefined
            ? { description: 'Success envelope; `result` as below', headers: requestIdHeader, content: { 'application/json': { schema: successSchema } } }
            : { description: 'Sent as is, without the CFSSL envelope', headers: requestIdHeader, content: { [operation.rawContentType]: { schema: { type: 'string', format: 'binary' } } } },
        '400': errorRef('BadRequest'),
        ...(operation.mayAnswerNotFound ? { '404': errorRef('NotFound') } : {}),
        '405': errorRef('MethodNotAllowed'),
        ...(operation.body ? { '413': errorRef('PayloadTooLarge') } : {}),
        '500': errorRef('InternalError'),
        '503': errorRef('ServiceUnavailable'),
      },
    };
    if (operation.body) {
      item['requestBody'] = { required: true, content: { 'application/json': { schema: jsonSchemaOf(operation.body, 'input') } } };
    }
    if (operation.query) item['parameters'] = urlParameters(operation.query, operation.path);
    if (operation.path !== undefined) addPath(operation.path, operation.method.toLowerCase(), item);
    else for (const prefix of prefixes) addPath(`${prefix}${operation.name}`, operation.method.toLowerCase(), item);
  }

  for (const route of [...(options.routes ?? [])].sort((a, b) => a.path.localeCompare(b.path))) {
    const json = route.contentType.startsWith('application/json') || route.contentType.includes('+json');
    addPath(route.path, route.method.toLowerCase(), {
      operationId: route.name,
      ...(route.summary ? { summary: route.summary } : {}),
      responses: {
        '200': {
          description: 'Sent as is, without the CFSSL envelope',
          headers: requestIdHeader,
          content: { [route.contentType.split(';')[0]!.trim()]: { schema: json ? { type: 'object' } : { type: 'string' } } },
        },
        '405': errorRef('MethodNotAllowed'),
        '500': errorRef('InternalError'),
      },
    });
  }

  return {
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'certsmith CFSSL-compatible API',
      version: options.version ?? '0.1.0',
      description:
        'CFSSL `serve` API (`/api/v1/cfssl/<operation>`, alias `/api/v1/svc/<operation>`) and certsmith\'s own endpoints (`/api/v1/certsmith/…`). Every response is the CFSSL envelope `{success, result, errors, messages}` with `Content-Type: application/json`. Generated from the schemas the server validates with.',
    },
    paths,
    components: { schemas, responses, headers },
  };
}
