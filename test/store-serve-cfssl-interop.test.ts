/**
 * A running `certsmith serve` and real CFSSL 1.2.0 (Debian's `cfssl`) on one certificate database,
 * SQLite (one file both use at the same time) and PostgreSQL, through certsmith's HTTP API. It
 * complements `cert-store-cfssl-interop.test.ts`, which checks the store package against the cfssl
 * CLI; here the server is the one reading and writing:
 *
 * - `cfssl ocsprefresh -db-config` signs OCSP responses for the rows certsmith wrote — the
 *   certificates its `newcert` issued and recorded, and those its `certadd` added — checked with
 *   `cfssl ocspdump` and `openssl ocsp`;
 * - rows that `cfssl sign -db-config` and a `cfssl serve -db-config` write while certsmith runs are
 *   listed by certsmith's inventory and answered by its certinfo by serial (1.2.0 stores an empty
 *   AKI; certinfo finds the row by the AKI of the certificate).
 *
 * The OCSP step runs first: once 1.2.0 has written its empty-AKI rows to PostgreSQL, `ocsprefresh`
 * fails on the foreign key for them (lifecycle spec §2.4), whoever wrote the other rows.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialToDecimal } from '@certsmith/cert-store';
import { decodePemBlock, parseCertificate, toHex } from '@certsmith/x509-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllCertsmith, startCertsmith } from './helpers/certsmith-process.js';
import type { StartedCertsmith } from './helpers/certsmith-process.js';
import { startPostgresCluster } from './helpers/postgres.js';
import type { PostgresCluster } from './helpers/postgres.js';
import { startCfsslServe } from './peers/cfssl-peer.js';

let dir: string;
let cluster: PostgresCluster;
let caAki: string;
/** Four certificates of the CA, two for certsmith's certadd on each driver. */
const added: string[] = [];

function runTool(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: dir, timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });
}

async function cfsslJson(args: string[]): Promise<Record<string, string>> {
  const result = await runTool('cfssl', args);
  if (result.code !== 0) throw new Error(`cfssl ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, string>;
}

interface Reply {
  status: number;
  text: string;
  body: { success: boolean; result: any; errors: Array<{ code: number; message: string }> };
}

async function call(url: string, path: string, body?: unknown): Promise<Reply> {
  const response = await fetch(`${url}${path}`, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  return { status: response.status, text, body: JSON.parse(text) as Reply['body'] };
}

function keyOf(pem: string): { serial: string; serialHex: string; aki: string; expiry: string } {
  const certificate = parseCertificate(decodePemBlock(pem)!.block.bytes);
  return {
    serial: serialToDecimal(certificate.serialNumberHex),
    serialHex: certificate.serialNumberHex.toUpperCase(),
    aki: toHex(certificate.authorityKeyId!),
    // certadd's expiry is RFC 3339 with Z, as CFSSL compares it (lifecycle spec §0.13).
    expiry: certificate.notAfter.toISOString().replace('.000Z', 'Z'),
  };
}

/** The decimal serial each base64 line of `cfssl ocspdump` answers for, after `openssl ocsp` verified it with the CA. */
async function dumpedResponses(dbConfigFile: string, tag: string): Promise<Map<string, string>> {
  const dump = await runTool('cfssl', ['ocspdump', '-db-config', dbConfigFile]);
  expect(dump.code, dump.stderr).toBe(0);
  const bySerial = new Map<string, string>();
  for (const [index, response] of dump.stdout.trim().split('\n').filter(Boolean).entries()) {
    const file = join(dir, `ocsp-${tag}-${index}.der`);
    await writeFile(file, Buffer.from(response, 'base64'));
    const text = await runTool('openssl', ['ocsp', '-respin', file, '-resp_text', '-VAfile', 'ca.pem']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain('Response verify OK');
    expect(text.stdout).toContain('Cert Status: good');
    bySerial.set(BigInt(`0x${/Serial Number: ([0-9A-F]+)/.exec(text.stdout)![1]!}`).toString(), response);
  }
  return bySerial;
}

const CONFIG = { signing: { default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth'] } } };

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-serve-cfssl-'));
  await writeFile(join(dir, 'ca-csr.json'), JSON.stringify({ CN: 'Serve Interop CA', key: { algo: 'ecdsa', size: 256 }, names: [{ O: 'certsmith tests' }] }));
  await writeFile(join(dir, 'config.json'), JSON.stringify(CONFIG));
  await writeFile(join(dir, 'leaf-csr.json'), JSON.stringify({ CN: 'signed.interop.test', hosts: ['signed.interop.test'], key: { algo: 'ecdsa', size: 256 } }));
  const [ca, leaf] = await Promise.all([cfsslJson(['gencert', '-initca', 'ca-csr.json']), cfsslJson(['genkey', 'leaf-csr.json'])]);
  await writeFile(join(dir, 'ca.pem'), ca.cert!);
  await writeFile(join(dir, 'ca-key.pem'), ca.key!);
  await writeFile(join(dir, 'leaf.csr'), leaf.csr!);
  // Certificates of the CA that no database knows yet: certsmith's certadd records them.
  for (const name of ['first', 'second', 'third', 'fourth']) {
    await writeFile(join(dir, `${name}-csr.json`), JSON.stringify({ CN: `${name}.certsmith.test`, hosts: [`${name}.certsmith.test`], key: { algo: 'ecdsa', size: 256 } }));
    added.push((await cfsslJson(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-config', 'config.json', `${name}-csr.json`])).cert!);
  }
  caAki = toHex(parseCertificate(decodePemBlock(ca.cert!)!.block.bytes).subjectKeyId!);
  cluster = await startPostgresCluster();
});

afterAll(async () => {
  await killAllCertsmith();
  cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

for (const driver of ['sqlite3', 'postgres'] as const) {
  describe(`${driver}: certsmith serve and CFSSL 1.2.0 on one database`, () => {
    let dbConfigFile: string;
    let server: StartedCertsmith;
    /** The certificates whose rows certsmith wrote (certadd, then newcert). */
    let written: string[];

    beforeAll(async () => {
      written = driver === 'sqlite3' ? added.slice(0, 2) : added.slice(2, 4);
      const dataSource = driver === 'sqlite3' ? join(dir, 'certs.db') : await cluster.createDatabase('serve_interop');
      dbConfigFile = join(dir, `db-${driver}.json`);
      await writeFile(dbConfigFile, JSON.stringify({ driver, data_source: dataSource }));
      // certsmith creates the schema when it starts (CFSSL never migrates).
      server = await startCertsmith(
        ['--port', '0', '--workers', '1', '--loglevel', 'warn', '--data-dir', join(dir, `data-${driver}`), '--ca', join(dir, 'ca.pem'), '--ca-key', join(dir, 'ca-key.pem'), '--config', join(dir, 'config.json'), '--db-config', dbConfigFile, '--tidy-interval', '0'],
        60_000,
      );
    });

    afterAll(async () => {
      server?.child.kill('SIGTERM');
      await server?.waitForExit(20_000);
    });

    it('cfssl ocsprefresh -db-config signs responses for the rows certsmith wrote (newcert and certadd)', async () => {
      for (const pem of written) {
        const { serial, aki, expiry } = keyOf(pem);
        const reply = await call(server.url, '/api/v1/cfssl/certadd', { serial_number: serial, authority_key_identifier: aki, ca_label: 'default', status: 'good', expiry, pem });
        expect(reply.status, reply.text).toBe(200);
      }
      for (const name of ['issued-one', 'issued-two']) {
        const reply = await call(server.url, '/api/v1/cfssl/newcert', { request: { CN: `${name}.certsmith.test`, hosts: [`${name}.certsmith.test`] } });
        expect(reply.status, reply.text).toBe(200);
        written.push(reply.body.result.certificate as string);
      }
      // Whatever certsmith itself stored for them, ocsprefresh replaces it with responses of its own.
      const before = await dumpedResponses(dbConfigFile, `${driver}-before`);
      const refresh = await runTool('cfssl', ['ocsprefresh', '-db-config', dbConfigFile, '-ca', 'ca.pem', '-responder', 'ca.pem', '-responder-key', 'ca-key.pem']);
      expect([refresh.code, refresh.stderr]).toEqual([0, '']);
      const after = await dumpedResponses(dbConfigFile, `${driver}-after`);
      expect([...after.keys()].sort()).toEqual(written.map((pem) => keyOf(pem).serial).sort());
      for (const [serial, response] of after) expect(response, `the response for ${serial} was not re-signed`).not.toBe(before.get(serial));
      // The rows certsmith wrote carry the certificate's AKI, which ocsprefresh keys its responses by
      // (on PostgreSQL a different key would have failed the foreign key).
      expect(written.every((pem) => keyOf(pem).aki === caAki)).toBe(true);
    });

    it('lists and answers rows cfssl sign -db-config and cfssl serve -db-config wrote while it runs', async () => {
      const signed = await cfsslJson(['sign', '-db-config', dbConfigFile, '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-config', 'config.json', '-label', 'cfssl-cli', 'leaf.csr']);
      const peer = await startCfsslServe({ ca: join(dir, 'ca.pem'), caKey: join(dir, 'ca-key.pem'), config: join(dir, 'config.json'), dbConfig: dbConfigFile });
      let served: string;
      try {
        const reply = await call(peer.url, '/api/v1/cfssl/newcert', { request: { CN: 'served.cfssl.test', hosts: ['served.cfssl.test'] }, label: 'cfssl-serve' });
        expect(reply.status, `${reply.text}\n${peer.output()}`).toBe(200);
        served = reply.body.result.certificate as string;
      } finally {
        await peer.stop();
      }
      const listed = await call(server.url, '/api/v1/certsmith/certificates');
      expect(listed.status, listed.text).toBe(200);
      const rows = listed.body.result.certificates as Array<Record<string, unknown>>;
      expect(rows.map((row) => [row['serial_number'], row['ca_label'], row['authority_key_identifier'], row['status']]).sort()).toEqual(
        [
          ...written.map((pem) => [keyOf(pem).serial, 'default', caAki, 'good']),
          // 1.2.0 writes an empty AKI (lifecycle spec §2.4).
          [keyOf(signed.cert!).serial, 'cfssl-cli', '', 'good'],
          [keyOf(served).serial, 'cfssl-serve', '', 'good'],
        ].sort(),
      );
      expect((await call(server.url, '/api/v1/certsmith/certificates?label=cfssl-cli')).body.result.certificates).toHaveLength(1);
      // 1.2.0 writes migration 001's columns only: no CN or SANs to filter by (docs/store.md).
      expect((await call(server.url, '/api/v1/certsmith/certificates?label=cfssl-serve')).body.result.certificates).toEqual([expect.objectContaining({ ca_label: 'cfssl-serve', common_name: null })]);
      for (const pem of [signed.cert!, served]) {
        const { serial, aki } = keyOf(pem);
        const info = await call(server.url, '/api/v1/cfssl/certinfo', { serial, authority_key_id: aki });
        expect(info.status, info.text).toBe(200);
        expect(info.body.result.pem.trim()).toBe(pem.trim());
      }
    });
  });
}
