/**
 * `GET /api/v1/cfssl/openapi.json` end to end: the built `certsmith serve` with a CA chain made by
 * openssl (root in `--ca-bundle`, issuing CA in `--int-bundle` and as `--ca`/`--ca-key`) and a
 * config with an authenticated profile, so every issuing endpoint is served. The document must be
 * valid OpenAPI 3.1 (checked by @seriousme/openapi-schema-validator, independent of the generator),
 * and live responses — successes of every endpoint, CFSSL-coded errors, bad bodies, wrong methods —
 * must validate against the document's response schemas (ajv, JSON Schema 2020-12).
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticatedRequest, createScratch, makeIntermediateCa, makeRootCa } from './fixtures-issue.js';
import type { OpensslCa, Scratch } from './fixtures-issue.js';
import { killAllCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';

const AUTH_KEY = '00112233445566778899aabbccddeeff';

type Document = {
  openapi: string;
  paths: Record<string, Record<string, { responses: Record<string, { $ref?: string }>; requestBody?: unknown }>>;
  components: { responses: Record<string, unknown>; schemas: Record<string, unknown> };
};

let scratch: Scratch;
let root: OpensslCa;
let issuing: OpensslCa;
let server: StartedCertsmith;
let document: Document;
let ajv: InstanceType<typeof Ajv2020>;

beforeAll(async () => {
  scratch = await createScratch('openapi');
  root = await makeRootCa(scratch, 'root', 'OpenAPI Root');
  issuing = await makeIntermediateCa(scratch, 'issuing', root);
  const config = await scratch.write('config.json', {
    signing: {
      default: { expiry: '720h', usages: ['signing', 'key encipherment', 'server auth'] },
      profiles: { client: { expiry: '24h', usages: ['signing', 'client auth'], auth_key: 'main' } },
    },
    auth_keys: { main: { type: 'standard', key: AUTH_KEY } },
  });
  server = await startCertsmith([
    '--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', scratch.path('data'), '--config', config,
    '--ca', issuing.certFile, '--ca-key', issuing.keyFile, '--ca-bundle', root.certFile, '--int-bundle', issuing.certFile,
  ], 60_000);
  const response = await fetch(`${server.url}/api/v1/cfssl/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toBe('application/json');
  document = (await response.json()) as Document;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(document, 'openapi.json');
});

afterAll(async () => {
  await killAllCertsmith();
  await scratch?.cleanup();
});

/** JSON-pointer escaping of one segment. */
const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Assert `body` matches the documented response of `method path` with `status`. */
function expectDocumented(path: string, method: 'get' | 'post', status: number, body: unknown): void {
  const response = document.paths[path]?.[method]?.responses[String(status)];
  expect(response, `${method.toUpperCase()} ${path} documents ${status}`).toBeDefined();
  const pointer = response!.$ref ?? `#/paths/${escape(path)}/${method}/responses/${status}`;
  const validate = ajv.getSchema(`openapi.json${pointer}/content/application~1json/schema`);
  expect(validate, `schema at ${pointer}`).toBeDefined();
  const valid = validate!(body);
  expect(valid, `${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(validate!.errors)}\n${JSON.stringify(body).slice(0, 500)}`).toBe(true);
}

/** Call an operation and check the answer against the document; returns the parsed body. */
async function checked(operation: string, body?: unknown, options: { method?: 'GET' | 'POST' | 'PUT'; status?: number } = {}): Promise<any> {
  const method = options.method ?? (body === undefined ? 'GET' : 'POST');
  const path = `/api/v1/cfssl/${operation}`;
  const response = await fetch(`${server.url}${path}`, {
    method,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(60_000),
  });
  const json: unknown = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(options.status ?? 200);
  expect(response.headers.get('x-request-id')).toBeTruthy();
  // A wrong method is documented under the operation's own method.
  const documented = document.paths[path] ? (Object.keys(document.paths[path]!)[0] as 'get' | 'post') : method.toLowerCase();
  expectDocumented(path, documented as 'get' | 'post', response.status, json);
  return json;
}

describe('the served OpenAPI document', () => {
  it('is valid OpenAPI 3.1 and lists every served endpoint with its request, result and error envelopes', async () => {
    const validator = new Validator();
    // The validator dereferences the object it gets in place: give it a copy.
    const result = await validator.validate(structuredClone(document) as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(() => validator.resolveRefs()).not.toThrow();

    const served = ['authsign', 'bundle', 'certinfo', 'health', 'info', 'newcert', 'newkey', 'sign'];
    // The certificate store's endpoints (certadd, the inventory) are described by their own tests.
    const store = ['/api/v1/cfssl/certadd', '/api/v1/certsmith/certificates', '/api/v1/certsmith/certificates/{aki}/{serial}'];
    // Revocation on the store (revoke, the CRL in both forms) is described by its own tests.
    store.push('/api/v1/cfssl/revoke', '/api/v1/cfssl/crl', '/api/v1/certsmith/crl/{label}');
    expect(Object.keys(document.paths).sort()).toEqual([...served.map((name) => `/api/v1/cfssl/${name}`), ...store, '/api/v1/cfssl/openapi.json', '/metrics'].sort());
    for (const name of served) {
      const [method, item] = Object.entries(document.paths[`/api/v1/cfssl/${name}`]!)[0]!;
      expect(method).toBe(name === 'health' ? 'get' : 'post');
      expect(document.components.schemas).toHaveProperty(`${name[0]!.toUpperCase()}${name.slice(1)}Result`);
      expect(JSON.stringify(item.responses['200'])).toContain('SuccessEnvelope');
      for (const status of ['400', '405', '500', '503']) expect(item.responses[status]?.$ref).toMatch(/^#\/components\/responses\//);
      if (method === 'post') expect(item.requestBody).toBeDefined();
    }
  });
});

describe('live responses match the document', () => {
  it('health, newkey, newcert (with and without bundle), bundle, certinfo, info', async () => {
    await checked('health');
    const newkey = await checked('newkey', { CN: 'openapi.example', hosts: ['openapi.example'] });
    const plain = await checked('newcert', { request: { CN: 'openapi.example', hosts: ['openapi.example'] } });
    expect(plain.result).not.toHaveProperty('bundle');
    const bundled = await checked('newcert', { request: { CN: 'bundled.example', hosts: ['bundled.example'] }, bundle: true });
    expect(bundled.result.bundle.root).toContain('BEGIN CERTIFICATE');
    const withMessage = await checked('newcert', { request: { CN: 'nohosts' } });
    expect(withMessage.messages[0].code).toBe(5300);
    const bundle = await checked('bundle', { certificate: plain.result.certificate });
    expect(bundle.result.status.code).toBeTypeOf('number');
    await checked('bundle', { certificate: plain.result.certificate, flavor: 'force' });
    await checked('certinfo', { certificate: plain.result.certificate });
    await checked('info', {});
    await checked('info', { profile: 'client' });
    const csr = newkey.result.certificate_request as string;
    await checked('sign', { certificate_request: csr, hosts: ['openapi.example'] });
    await checked('authsign', authenticatedRequest({ certificate_request: csr, profile: 'client' }, AUTH_KEY));
  });

  it('CFSSL-coded errors, bad bodies and wrong methods are the documented error envelope', async () => {
    const garbage = await checked('bundle', { certificate: 'this is not a certificate' }, { status: 400 });
    expect(garbage.errors).toEqual([{ code: 1002, message: 'Failed to decode certificate' }]);
    await checked('newcert', { request: { CN: 'weak', key: { algo: 'rsa', size: 1024 } } }, { status: 400 });
    await checked('newcert', { request: { CN: 'x' }, label: 'nosuch' }, { status: 400 });
    await checked('sign', { certificate_request: 'garbage' }, { status: 400 });
    await checked('authsign', { token: 'AAAA', request: Buffer.from('{}').toString('base64') }, { status: 400 });
    await checked('bundle', '{"certificate":', { status: 400 });
    await checked('bundle', { certificate: true }, { status: 400 });
    await checked('bundle', 'x'.repeat(1_100_000), { status: 413 });
    await checked('newcert', undefined, { method: 'GET', status: 405 });
    await checked('health', undefined, { method: 'PUT', status: 405 });
  });
});
