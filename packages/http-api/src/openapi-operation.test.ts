import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { createIssuer, createSignerDirectory, parseSigningPolicy } from '@certsmith/issuer';
import type { SigningPolicy } from '@certsmith/issuer';
import type { Signer } from '@certsmith/signer-api';
import { algorithmsForKeyObject, computeAuthToken, signWithKeyObject } from '@certsmith/signer-api';
import { TestPki } from '@certsmith/test-pki';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBundleOperation } from './bundle/index.js';
import { createApp } from './app.js';
import { certinfoOperation } from './certinfo-operation.js';
import { createHealthOperation } from './health-operation.js';
import { createInfoOperation, createNewcertOperation, createAuthsignOperation, createSignOperation, newkeyOperation } from './issue/index.js';
import { createLogger } from './logger.js';
import { createMetricsRoute, createServerMetrics } from './metrics.js';
import { createOpenApiDocument } from './openapi.js';
import { createOpenApiRoute, OPENAPI_PATH } from './openapi-operation.js';
import type { AnyOperation } from './operation.js';
import { createInlineTaskRunner } from '@certsmith/worker-pool';

const pki = new TestPki();
const ca = pki.root({ CN: 'OpenAPI Unit CA' }, { key: 'ecdsa-p256' });
const AUTH_KEY = '00112233445566778899aabbccddeeff';

function localSigner(): Signer {
  return {
    algorithms: algorithmsForKeyObject(ca.key.privateKey),
    getCertificate: async () => ({ der: ca.der, pem: ca.pem }),
    sign: (tbs, algorithm) => signWithKeyObject(ca.key.privateKey, tbs, algorithm),
    close: async () => {},
  };
}

/** base64 HMAC-SHA256 of the inner request bytes with the auth key, as CFSSL clients send it. */
function tokenFor(inner: Uint8Array): string {
  return Buffer.from(computeAuthToken(inner, Buffer.from(AUTH_KEY, 'hex'))).toString('base64');
}

function policy(): SigningPolicy {
  return parseSigningPolicy({
    signing: {
      default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth'] },
      profiles: { secure: { expiry: '1h', usages: ['client auth'], auth_key: 'main' } },
    },
    auth_keys: { main: { type: 'standard', key: AUTH_KEY } },
  });
}

const metrics = createServerMetrics({ defaultMetrics: false });
const signers = metrics.instrumentSignerDirectory(createSignerDirectory([{ label: 'default', signer: localSigner(), policy: policy(), pluginName: 'unit-local' }]));
const issue = { issuer: createIssuer({ signers }), bundler: null };
const operations: AnyOperation[] = [
  createHealthOperation(),
  certinfoOperation,
  newkeyOperation,
  createBundleOperation({}),
  createNewcertOperation(issue),
  createSignOperation(issue),
  createAuthsignOperation(issue),
  createInfoOperation(issue),
];
const metricsRoute = createMetricsRoute(metrics);
const openapiRoute = createOpenApiRoute(operations, { routes: [metricsRoute] });
const logs: Record<string, unknown>[] = [];

let server: Server;
let base = '';

beforeAll(async () => {
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) } });
  const app = createApp({ operations, taskRunner: createInlineTaskRunner(), logger, routes: [metricsRoute, openapiRoute], metrics });
  server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

type Document = { paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>; components: Record<string, Record<string, unknown>> };

async function servedDocument(): Promise<Document> {
  const response = await fetch(`${base}${OPENAPI_PATH}`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  return (await response.json()) as Document;
}

/** JSON pointer escaping for one path segment. */
const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** A validator for the response schema of `method path` with `status`, resolved inside the document. */
function responseValidator(document: Document, path: string, method: string, status: number) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
  let response = document.paths[path]?.[method]?.responses[String(status)] as { $ref?: string } | undefined;
  expect(response, `${method} ${path} documents ${status}`).toBeDefined();
  let pointer = `#/paths/${escape(path)}/${method}/responses/${status}`;
  if (response?.$ref !== undefined) {
    pointer = response.$ref;
    const name = pointer.split('/').pop()!;
    response = document.components['responses']![name] as { $ref?: string };
    expect(response).toBeDefined();
  }
  const validate = ajv.getSchema(`openapi.json${pointer}/content/application~1json/schema`);
  if (validate === undefined) throw new Error(`no schema at ${pointer}`);
  return (body: unknown): void => {
    const ok = validate(body);
    expect(ok, JSON.stringify(validate.errors)).toBe(true);
  };
}

async function call(path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST'): Promise<{ status: number; json: unknown; requestId: string | null }> {
  const response = await fetch(`${base}${path}`, { method, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
  return { status: response.status, json: await response.json(), requestId: response.headers.get('x-request-id') };
}

describe('GET /api/v1/cfssl/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document (checked by @seriousme/openapi-schema-validator) listing every served operation', async () => {
    const document = await servedDocument();
    const validator = new Validator();
    // The validator dereferences the object it is given in place: give it a copy.
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // Every $ref resolves.
    expect(() => validator.resolveRefs()).not.toThrow();

    expect(Object.keys(document.paths).sort()).toEqual(
      [
        ...['authsign', 'bundle', 'certinfo', 'health', 'info', 'newcert', 'newkey', 'sign'].map((name) => `/api/v1/cfssl/${name}`),
        OPENAPI_PATH,
        '/metrics',
      ].sort(),
    );
    for (const operation of operations) {
      const item = document.paths[`/api/v1/cfssl/${operation.name}`]![operation.method.toLowerCase()]!;
      // The result schema of the 200 envelope, the error envelope for every failure status.
      expect(JSON.stringify(item.responses['200'])).toContain('#/components/schemas/SuccessEnvelope');
      expect(JSON.stringify(item.responses['200'])).toContain(`Result"`);
      for (const status of ['400', '405', '500', '503']) expect(item.responses[status]).toHaveProperty('$ref');
      expect(item.requestBody !== undefined).toBe(operation.body !== undefined);
    }
    expect(document.components['schemas']!['ErrorEnvelope']).toMatchObject({ properties: { success: { const: false } } });
  });

  it('is the same document createOpenApiDocument generates from the operations (nothing hand-kept)', async () => {
    const document = await servedDocument();
    expect(document).toEqual(JSON.parse(JSON.stringify(createOpenApiDocument(operations, { routes: [metricsRoute, openapiRoute] }))));
    // The bundle request schema is the zod schema the server validates with (string or null).
    const bundle = document.paths['/api/v1/cfssl/bundle']!['post']!.requestBody as { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    expect(bundle.content['application/json']!.schema.properties['certificate']).toMatchObject({ type: ['string', 'null'] });
  });

  it('answers other methods with 405 in the envelope', async () => {
    const { status, json } = await call(OPENAPI_PATH, {});
    expect(status).toBe(405);
    expect(json).toEqual({ success: false, result: null, errors: [{ code: 405, message: 'Method is not allowed:"POST"' }], messages: [] });
  });

  it('describes live responses: health, newkey, newcert, sign, authsign, info, certinfo and errors validate against it', async () => {
    const document = await servedDocument();
    const check = async (name: string, body: unknown, status: number): Promise<unknown> => {
      const method = body === undefined ? 'get' : 'post';
      const response = await call(`/api/v1/cfssl/${name}`, body);
      expect(response.status, JSON.stringify(response.json)).toBe(status);
      responseValidator(document, `/api/v1/cfssl/${name}`, method, status)(response.json);
      return response.json;
    };
    await check('health', undefined, 200);
    await check('newkey', { CN: 'unit.example', hosts: ['unit.example'] }, 200);
    const newcert = (await check('newcert', { request: { CN: 'unit.example', hosts: ['unit.example'] } }, 200)) as { result: { certificate_request: string; certificate: string } };
    await check('newcert', { request: { CN: 'nohosts' } }, 200); // with a 5300 message
    const csr = newcert.result.certificate_request;
    await check('sign', { certificate_request: csr, hosts: ['unit.example'] }, 200);
    const inner = Buffer.from(JSON.stringify({ certificate_request: csr, profile: 'secure' }));
    await check('authsign', { token: tokenFor(inner), request: inner.toString('base64') }, 200);
    await check('info', {}, 200);
    await check('certinfo', { certificate: newcert.result.certificate }, 200);
    // Errors: a coded CFSSL error, a bad body, a wrong method.
    await check('newcert', { request: { CN: 'x', key: { algo: 'rsa', size: 1024 } } }, 400);
    await check('certinfo', { certificate: 7 }, 400);
    const wrong = await call('/api/v1/cfssl/newcert');
    expect(wrong.status).toBe(405);
    responseValidator(document, '/api/v1/cfssl/newcert', 'post', 405)(wrong.json);
  });

  it('rejects a response that does not match (the schemas are strict)', async () => {
    const document = await servedDocument();
    const validate = responseValidator(document, '/api/v1/cfssl/newkey', 'post', 200);
    expect(() => validate({ success: true, result: { private_key: 'k', certificate_request: 'c' }, errors: [], messages: [] })).toThrow();
    expect(() => validate({ success: true, result: { private_key: 'k', certificate_request: 'c', sums: { certificate_request: { md5: '', 'sha-1': '', 'sha-256': '' } }, extra: 1 }, errors: [], messages: [] })).toThrow();
  });
});

describe('request log line', () => {
  it('carries label and profile from the body (also authsign’s inner request), never the body or the token', async () => {
    logs.length = 0;
    const { json } = await call('/api/v1/cfssl/newcert', { request: { CN: 'log.example', hosts: ['log.example'] }, Label: 'default', profile: 'nosuch' });
    expect(json).toMatchObject({ success: false, errors: [{ code: 5400 }] });
    const csr = ((await call('/api/v1/cfssl/newkey', { CN: 'csr.example' })).json as { result: { certificate_request: string } }).result.certificate_request;
    const inner = Buffer.from(JSON.stringify({ certificate_request: csr, profile: 'secure', label: 'default' }));
    const token = tokenFor(inner);
    await call('/api/v1/cfssl/authsign', { token, request: inner.toString('base64') }, 'POST');
    const lines = logs.filter((line) => line['msg'] === 'request');
    expect(lines[0]).toMatchObject({ operation: 'newcert', status: 400, code: 5400, label: 'default', profile: 'nosuch' });
    expect(lines[0]).toHaveProperty('reqId');
    expect(lines[0]).toHaveProperty('durationMs');
    expect(lines[1]).toMatchObject({ operation: 'newkey', status: 200 });
    expect(lines[1]).not.toHaveProperty('label');
    expect(lines[2]).toMatchObject({ operation: 'authsign', status: 200, label: 'default', profile: 'secure' });
    const text = JSON.stringify(logs);
    expect(text).not.toContain(token);
    expect(text).not.toContain('BEGIN');
    expect(text).not.toContain('log.example');
  });
});
