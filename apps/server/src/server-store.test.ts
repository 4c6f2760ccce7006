import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialToDecimal } from '@certsmith/cert-store';
import { createLogger } from '@certsmith/http-api';
import { TestPki } from '@certsmith/test-pki';
import { toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startupExitCode } from './errors.js';
import { startServer } from './start-server.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-server-store-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const silent = createLogger({ level: 'silent' });

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('startServer and the certificate store', () => {
  it('opens SQLite in the data directory by default, exposes it, and closes it at shutdown', async () => {
    const dataDir = join(dir, 'default');
    const server = await startServer({ port: 0, workers: 1, dataDir, logger: silent });
    try {
      expect(server.store?.driver).toBe('sqlite3');
      expect(existsSync(join(dataDir, 'certs.db'))).toBe(true);
      const list = await fetch(`${server.url}/api/v1/certsmith/certificates`);
      expect(await list.json()).toEqual({ success: true, result: { certificates: [], next_cursor: null }, errors: [], messages: [] });
    } finally {
      await server.close();
    }
    await expect(server.store!.ping()).rejects.toMatchObject({ code: 503 });
  });

  it('serves no store endpoints with store.enabled false (--no-store)', async () => {
    const server = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'off'), logger: silent, store: { enabled: false } });
    try {
      expect(server.store).toBeNull();
      expect(existsSync(join(dir, 'off', 'certs.db'))).toBe(false);
      expect((await fetch(`${server.url}/api/v1/certsmith/certificates`)).status).toBe(404);
      expect((await fetch(`${server.url}/api/v1/cfssl/certadd`, { method: 'POST', body: '{}' })).status).toBe(404);
      const health = (await (await fetch(`${server.url}/api/v1/cfssl/health`)).json()) as { result: Record<string, unknown> };
      expect(health.result['store']).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it('disables the whole inventory with --disable certificates', async () => {
    const server = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'disabled'), logger: silent, disable: ['certificates'] });
    try {
      expect((await fetch(`${server.url}/api/v1/certsmith/certificates`)).status).toBe(404);
      expect((await fetch(`${server.url}/api/v1/certsmith/certificates/${'ab'.repeat(20)}/1`)).status).toBe(404);
      expect((await fetch(`${server.url}/api/v1/cfssl/certadd`, { method: 'POST', body: '{}' })).status).toBe(400);
    } finally {
      await server.close();
    }
  });

  it.each<[string, () => Promise<Parameters<typeof startServer>[0]>, number, RegExp]>([
    ['an unreadable --db-config', async () => ({ store: { dbConfigFile: join(dir, 'missing.json') } }), 5200, /^certificate store \(--db-config .*missing\.json\): could not read configuration file$/],
    [
      'a db-config naming MySQL',
      async () => {
        await writeFile(join(dir, 'mysql.json'), '{"driver":"mysql","data_source":"u:p@tcp(h)/db"}');
        return { store: { dbConfigFile: join(dir, 'mysql.json') } };
      },
      5200,
      /driver "mysql" is not supported by certsmith/,
    ],
    [
      'a PostgreSQL server that does not answer (the password stays out of the message)',
      async () => {
        await writeFile(join(dir, 'pg.json'), JSON.stringify({ driver: 'postgres', data_source: `postgres://certsmith:hunter2secret@127.0.0.1:${await closedPort()}/certdb?sslmode=disable&connect_timeout=2` }));
        return { store: { dbConfigFile: join(dir, 'pg.json') } };
      },
      503,
      /^certificate store postgres postgres:\/\/certsmith:\*\*\*@127\.0\.0\.1:\d+\/certdb\?sslmode=disable&connect_timeout=2 \(--db-config .*pg\.json\): the certificate database is unavailable/,
    ],
    ['a database with pending migrations and --db-migrations check', async () => ({ store: { migrations: 'check' } }), 11000, /certsmith db migrate/],
  ])('stops start-up (exit 2) on %s', async (_case, options, code, message) => {
    const error = await startServer({ port: 0, workers: 1, dataDir: join(dir, `fail-${code}`), logger: silent, ...(await options()) }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code, message: expect.stringMatching(message) });
    expect((error as Error).message).not.toContain('hunter2');
    expect(startupExitCode(error)).toBe(2);
  });

  it('tidies on schedule: an expired certificate goes, a revoked unexpired one stays', async () => {
    const pki = new TestPki();
    const root = pki.root({ CN: 'tidy root' }, { key: 'ecdsa-p256' });
    const expired = pki.leaf('old.example', root, { key: 'ecdsa-p256', notBefore: pki.days(-30), notAfter: pki.days(-5) });
    const revoked = pki.leaf('revoked.example', root, { key: 'ecdsa-p256', notAfter: pki.days(5) });
    let tidied!: (line: Record<string, unknown>) => void;
    const tidiedLine = new Promise<Record<string, unknown>>((resolve) => (tidied = resolve));
    const logger = createLogger({
      level: 'info',
      destination: {
        write: (text: string) => {
          const line = JSON.parse(text) as Record<string, unknown>;
          if (line['msg'] === 'certificate store tidied') tidied(line);
        },
      },
    });
    const aki = toHex(root.subjectKeyId!);
    const server = await startServer({ port: 0, workers: 1, dataDir: join(dir, 'tidy'), logger, store: { tidyIntervalMs: 1000, tidyBufferMs: 0 } });
    try {
      for (const certificate of [expired, revoked]) await server.store!.recordCertificate({ certificate: certificate.pem, label: 'default' });
      await server.store!.revokeCertificate(serialToDecimal(revoked.serialHex.toLowerCase()), aki, 1);
      expect(await tidiedLine).toMatchObject({ tidy: { certificates: 1 } });
      expect(await server.store!.getCertificate(serialToDecimal(expired.serialHex.toLowerCase()), aki)).toBeNull();
      expect(await server.store!.getCertificate(serialToDecimal(revoked.serialHex.toLowerCase()), aki)).toMatchObject({ status: 'revoked' });
      const metrics = await (await fetch(server.metricsUrl)).text();
      expect(metrics).toMatch(/certsmith_certificate_store_tidy_removed_total\{kind="certificates"\} 1/);
    } finally {
      await server.close();
    }
  });
});
