/**
 * An OpenAPI 3.1 document generated from the operation list: request bodies come from the same zod
 * schemas that validate requests (`z.toJSONSchema`, input side), so the document cannot drift from
 * what the server accepts. Results are described only as the envelope (operations do not declare
 * result schemas yet).
 */
import * as z from 'zod';
import { API_PREFIXES } from './app.js';
import type { AnyOperation } from './operation.js';

/** Options of {@link createOpenApiDocument}. */
export interface OpenApiOptions {
  title?: string;
  version?: string;
  /** Also list the `/api/v1/svc/` alias paths; default false. */
  includeAliases?: boolean;
}

const messageSchema = {
  type: 'object',
  required: ['code', 'message'],
  properties: { code: { type: 'integer' }, message: { type: 'string' } },
} as const;

const envelopeSchema = {
  type: 'object',
  required: ['success', 'result', 'errors', 'messages'],
  properties: {
    success: { type: 'boolean' },
    result: {},
    errors: { type: 'array', items: { $ref: '#/components/schemas/ResponseMessage' } },
    messages: { type: 'array', items: { $ref: '#/components/schemas/ResponseMessage' } },
  },
} as const;

/** Build the OpenAPI document (plain JSON-compatible object) for `operations`. */
export function createOpenApiDocument(operations: readonly AnyOperation[], options: OpenApiOptions = {}): Record<string, unknown> {
  const prefixes = options.includeAliases ? API_PREFIXES : API_PREFIXES.slice(0, 1);
  const envelopeResponse = (description: string): Record<string, unknown> => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Envelope' } } },
  });
  const paths: Record<string, unknown> = {};
  for (const operation of [...operations].sort((a, b) => a.name.localeCompare(b.name))) {
    const item: Record<string, unknown> = {
      operationId: operation.name,
      ...(operation.summary ? { summary: operation.summary } : {}),
      responses: {
        '200': envelopeResponse('success envelope'),
        '400': envelopeResponse('invalid request or CFSSL-coded error'),
        '405': envelopeResponse('method not allowed'),
        ...(operation.body ? { '413': envelopeResponse('request body too large') } : {}),
        '500': envelopeResponse('internal server error'),
        '503': envelopeResponse('worker queue full (see Retry-After)'),
      },
    };
    if (operation.body) {
      item['requestBody'] = {
        required: true,
        content: { 'application/json': { schema: z.toJSONSchema(operation.body, { io: 'input', unrepresentable: 'any' }) } },
      };
    }
    for (const prefix of prefixes) paths[`${prefix}${operation.name}`] = { [operation.method.toLowerCase()]: item };
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title ?? 'certsmith CFSSL-compatible API', version: options.version ?? '0.1.0' },
    paths,
    components: { schemas: { ResponseMessage: messageSchema, Envelope: envelopeSchema } },
  };
}
