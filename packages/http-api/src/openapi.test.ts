import { describe, expect, it } from 'vitest';
import { certinfoOperation } from './certinfo-operation.js';
import { createHealthOperation } from './health-operation.js';
import { createOpenApiDocument } from './openapi.js';

describe('createOpenApiDocument', () => {
  it('describes each operation under /api/v1/cfssl/ with its request schema from zod', () => {
    const document = createOpenApiDocument([certinfoOperation, createHealthOperation()]) as {
      paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: unknown }> } }>>;
    };
    expect(Object.keys(document.paths)).toEqual(['/api/v1/cfssl/certinfo', '/api/v1/cfssl/health']);
    expect(document.paths['/api/v1/cfssl/health']!['get']!.requestBody).toBeUndefined();
    const schema = document.paths['/api/v1/cfssl/certinfo']!['post']!.requestBody!.content['application/json']!.schema;
    expect(schema).toMatchObject({
      type: 'object',
      properties: { certificate: { type: ['string', 'null'] } },
    });
  });

  it('lists the svc alias paths on request', () => {
    const document = createOpenApiDocument([createHealthOperation()], { includeAliases: true }) as { paths: object };
    expect(Object.keys(document.paths)).toEqual(['/api/v1/cfssl/health', '/api/v1/svc/health']);
  });
});
