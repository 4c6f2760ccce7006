import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '@certsmith/http-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseHostPort, resolveServerOptions } from './server-options.js';
import { startServer } from './start-server.js';
import type { RunningServer } from './start-server.js';
import { parseServe } from './test-support/parse-serve.js';


describe('--metrics-address', () => {
  it('parses host:port, [v6]:port and port 0', () => {
    expect(parseHostPort('--metrics-address', '127.0.0.1:9100')).toEqual({ host: '127.0.0.1', port: 9100 });
    expect(parseHostPort('--metrics-address', '[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseHostPort('--metrics-address', 'metrics.internal:9100')).toEqual({ host: 'metrics.internal', port: 9100 });
    for (const bad of ['9100', ':9100', '127.0.0.1', '::1:9100', '127.0.0.1:65536', 'a b:1', '127.0.0.1:x']) {
      expect(() => parseHostPort('--metrics-address', bad), bad).toThrow(/--metrics-address: must be host:port/);
    }
  });

  it('is a serve flag (also written -metrics-address) checked by resolveServerOptions', async () => {
    expect(await parseServe(['-metrics-address', '127.0.0.1:9100'])).toMatchObject({ metricsAddress: '127.0.0.1:9100' });
    expect(await parseServe(['--metrics-address=[::1]:9100'])).toMatchObject({ metricsAddress: '[::1]:9100' });
    await expect(resolveServerOptions({ metricsAddress: 'nope' })).rejects.toMatchObject({ code: 400, flag: '--metrics-address' });
    expect((await resolveServerOptions({ metricsAddress: '0.0.0.0:9100' })).metricsAddress).toBe('0.0.0.0:9100');
    expect((await resolveServerOptions({})).metricsAddress).toBeUndefined();
  });
});

describe('startServer metrics and OpenAPI', () => {
  let dir: string;
  const servers: RunningServer[] = [];
  const silent = createLogger({ level: 'silent' });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'certsmith-metrics-'));
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await rm(dir, { recursive: true, force: true });
  });

  it('serves /metrics and the OpenAPI document on the API port by default, one registry per server', async () => {
    const a = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), logger: silent });
    servers.push(a);
    const b = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), logger: silent });
    servers.push(b);
    expect(a.metricsUrl).toBe(`${a.url}/metrics`);
    await fetch(`${a.url}/api/v1/cfssl/health`);
    const newcert = await fetch(`${a.url}/api/v1/cfssl/newcert`, { method: 'POST', body: '{"request":{"CN":"m.example","hosts":["m.example"]}}' });
    expect(newcert.status).toBe(200);
    const text = await (await fetch(a.metricsUrl)).text();
    expect(text).toMatch(/certsmith_http_requests_total\{endpoint="health",method="GET",status="200",code=""\} 1/);
    // Two signatures: the certificate's and its first OCSP response's (the CA signs OCSP for itself).
    expect(text).toMatch(/certsmith_signer_calls_total\{label="default",plugin="@certsmith\/signer-local",call="sign"\} 2/);
    expect(text).toMatch(/certsmith_worker_tasks_total\{task="issue\.newcert-in-worker",outcome="success"\} 1/);
    expect(text).toMatch(/certsmith_worker_pool_threads 1/);
    expect(await (await fetch(b.metricsUrl)).text()).not.toContain('endpoint="health"');

    const document = (await (await fetch(`${a.url}/api/v1/cfssl/openapi.json`)).json()) as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/v1/cfssl/newcert', '/api/v1/cfssl/bundle', '/api/v1/cfssl/health', '/api/v1/cfssl/openapi.json', '/metrics']),
    );
  });

  it('moves /metrics to --metrics-address (and off the API port)', async () => {
    const server = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'data'), logger: silent, metricsAddress: '127.0.0.1:0' });
    servers.push(server);
    expect(server.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(server.metricsUrl.startsWith(server.url)).toBe(false);
    await fetch(`${server.url}/api/v1/cfssl/health`);
    expect(await (await fetch(server.metricsUrl)).text()).toContain('endpoint="health"');
    const onApi = await fetch(`${server.url}/metrics`);
    expect(onApi.status).toBe(404);
    const document = (await (await fetch(`${server.url}/api/v1/cfssl/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(document.paths).not.toHaveProperty('/metrics');
    await server.close();
    await expect(fetch(server.metricsUrl)).rejects.toThrow();
  });
});
