/**
 * The certificate store and real CFSSL 1.2.0 (Debian's `cfssl`) on the same database, SQLite and
 * PostgreSQL: rows `cfssl gencert`/`cfssl sign -db-config` write are read and listed by the store
 * (1.2.0's empty AKI included); rows the store writes are revoked by `cfssl revoke`, signed by
 * `cfssl ocsprefresh` and dumped by `cfssl ocspdump`. CFSSL never migrates: the store creates the
 * schema first, as an operator would with `certsmith db migrate`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateStore, openStore } from '@certsmith/cert-store';
import type { CertificateChange, DbConfig, Store } from '@certsmith/cert-store';
import { decodePemBlock, parseCertificate } from '@certsmith/x509-core';
import { startPostgresCluster, type PostgresCluster } from './helpers/postgres.js';

let dir: string;
let cluster: PostgresCluster;

function cfssl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('cfssl', args, { cwd: dir, timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });
}

async function cfsslJson(args: string[]): Promise<Record<string, string>> {
  const result = await cfssl(args);
  if (result.code !== 0) throw new Error(`cfssl ${args.join(' ')} failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as Record<string, string>;
}

const CA_CSR = { CN: 'Store Interop CA', key: { algo: 'ecdsa', size: 256 }, names: [{ O: 'certsmith tests' }] };
const CONFIG = { signing: { default: { expiry: '8760h', usages: ['signing', 'key encipherment', 'server auth'] } } };
const leafCsr = (cn: string) => ({ CN: cn, hosts: [cn], key: { algo: 'ecdsa', size: 256 } });

function serialOf(pem: string): string {
  const cert = parseCertificate(decodePemBlock(pem)!.block.bytes);
  return BigInt(`0x${cert.serialNumberHex}`).toString();
}

let caAki: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-store-cfssl-'));
  await writeFile(join(dir, 'ca-csr.json'), JSON.stringify(CA_CSR));
  await writeFile(join(dir, 'config.json'), JSON.stringify(CONFIG));
  const ca = await cfsslJson(['gencert', '-initca', 'ca-csr.json']);
  await writeFile(join(dir, 'ca.pem'), ca.cert!);
  await writeFile(join(dir, 'ca-key.pem'), ca.key!);
  caAki = Buffer.from(parseCertificate(decodePemBlock(ca.cert!)!.block.bytes).subjectKeyId!).toString('hex');
  for (const name of ['a', 'b', 'c', 'd']) await writeFile(join(dir, `${name}-csr.json`), JSON.stringify(leafCsr(`${name}.interop.test`)));
  cluster = await startPostgresCluster();
});

afterAll(async () => {
  cluster?.stop();
  await rm(dir, { recursive: true, force: true });
});

let databases = 0;
async function freshDatabase(driver: 'sqlite3' | 'postgres'): Promise<{ config: DbConfig; file: string }> {
  databases += 1;
  const config: DbConfig =
    driver === 'sqlite3'
      ? { driver, dataSource: join(dir, `certs-${databases}.db`) }
      : { driver, dataSource: await cluster.createDatabase(`interop_${databases}`) };
  const file = join(dir, `db-${databases}.json`);
  await writeFile(file, JSON.stringify({ driver: config.driver, data_source: config.dataSource }));
  await migrateStore(config);
  return { config, file };
}

/** A certificate issued by the CA without recording it (so the store can record it). */
async function unrecordedCertificate(name: string): Promise<string> {
  const issued = await cfsslJson(['gencert', '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-config', 'config.json', `${name}-csr.json`]);
  return issued.cert!;
}

for (const driver of ['sqlite3', 'postgres'] as const) {
  describe(`${driver}: CFSSL 1.2.0 writes, the store reads`, () => {
    it('lists and finds rows written by cfssl gencert and cfssl sign -db-config', async () => {
      const { config, file } = await freshDatabase(driver);
      const generated = await cfsslJson(['gencert', '-db-config', file, '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-config', 'config.json', '-label', 'gen', 'a-csr.json']);
      const csr = await cfsslJson(['genkey', 'b-csr.json']);
      await writeFile(join(dir, 'b.csr'), csr.csr!);
      const signed = await cfsslJson(['sign', '-db-config', file, '-ca', 'ca.pem', '-ca-key', 'ca-key.pem', '-config', 'config.json', '-label', 'signed', 'b.csr']);
      const store = await openStore(config, { migrations: 'check' });
      try {
        const page = await store.listCertificates();
        expect(page.certificates.map((c) => [c.serial, c.label, c.status]).sort()).toEqual(
          [
            [serialOf(generated.cert!), 'gen', 'good'],
            [serialOf(signed.cert!), 'signed', 'good'],
          ].sort(),
        );
        // 1.2.0 writes an empty AKI (lifecycle spec §2.4); certinfo's lookup still finds the row by the real one.
        expect(page.certificates.every((c) => c.authorityKeyId === '' && c.revokedAt === null)).toBe(true);
        const found = await store.findCertificate(serialOf(signed.cert!), caAki.toUpperCase());
        expect(found!.pem.trim()).toBe(signed.cert!.trim());
        expect((await store.listCertificates({ label: 'gen' })).certificates).toHaveLength(1);
      } finally {
        await store.close();
      }
    });
  });

  describe(`${driver}: the store writes, CFSSL 1.2.0 reads and operates`, () => {
    let store: Store;
    let config: DbConfig;
    let file: string;
    const serials: string[] = [];

    beforeAll(async () => {
      ({ config, file } = await freshDatabase(driver));
      store = await openStore(config);
      for (const name of ['c', 'd']) {
        const record = await store.recordCertificate({ certificate: await unrecordedCertificate(name), label: 'certsmith' });
        expect(record.authorityKeyId).toBe(caAki);
        serials.push(record.serial);
      }
    });
    afterAll(async () => await store?.close());

    it('cfssl revoke finds a store-written row, and the change feed reports it', async () => {
      const seen: CertificateChange[] = [];
      let done: () => void = () => undefined;
      const revoked = new Promise<void>((resolve) => (done = resolve));
      const watch = store.watchChanges(
        (change) => {
          seen.push(change);
          done();
        },
        { pollIntervalMs: 100, afterId: 0 },
      );
      try {
        const result = await cfssl(['revoke', '-db-config', file, '-serial', serials[0]!, '-aki', caAki, '-reason', 'keyCompromise']);
        expect(result.stderr).toBe('');
        expect(result.code).toBe(0);
        await revoked;
      } finally {
        await watch.close();
      }
      expect(seen[0]).toMatchObject({ serial: serials[0], authorityKeyId: caAki, status: 'revoked', reason: 1, label: 'certsmith' });
      const row = await store.getCertificate(serials[0]!, caAki);
      expect(row).toMatchObject({ status: 'revoked', reason: 1 });
      expect(row!.revokedAt).toBeInstanceOf(Date);
    });

    it('cfssl ocsprefresh signs responses for store-written rows and cfssl ocspdump prints them', async () => {
      const refresh = await cfssl(['ocsprefresh', '-db-config', file, '-ca', 'ca.pem', '-responder', 'ca.pem', '-responder-key', 'ca-key.pem']);
      expect(refresh.stderr).toBe('');
      expect(refresh.code).toBe(0);
      const stored = await Promise.all(serials.map((serial) => store.getOcspResponse(serial, caAki)));
      expect(stored.every((response) => response !== null && response.body.length > 100)).toBe(true);
      const listed = await store.listOcspResponses({ expiresAfter: new Date() });
      expect(listed.responses).toHaveLength(2);
      const dump = await cfssl(['ocspdump', '-db-config', file]);
      expect(dump.code).toBe(0);
      const lines = dump.stdout.trim().split('\n').sort();
      expect(lines).toEqual(stored.map((response) => Buffer.from(response!.body).toString('base64')).sort());
      // The revoked certificate's response says so (openssl reads what CFSSL signed from the store's rows).
      const revokedDer = join(dir, `ocsp-${driver}.der`);
      await writeFile(revokedDer, stored[0]!.body);
      const text = await new Promise<string>((resolve, reject) =>
        execFile('openssl', ['ocsp', '-respin', revokedDer, '-resp_text', '-noverify'], (error, stdout) => (error ? reject(error) : resolve(stdout))),
      );
      expect(text).toContain('Cert Status: revoked');
      expect(text).toContain('Revocation Reason: keyCompromise (0x1)');
    });

    it('the store upserts over responses cfssl wrote', async () => {
      const before = await store.getOcspResponse(serials[1]!, caAki);
      const body = new Uint8Array([0x30, 0x03, 0x0a, 0x01, 0x06]);
      await store.upsertOcspResponse({ serial: serials[1]!, authorityKeyId: caAki, body, expiry: new Date(Date.now() + 3_600_000) });
      const after = await store.getOcspResponse(serials[1]!, caAki);
      expect(before).not.toBeNull();
      expect(Buffer.from(after!.body).equals(Buffer.from(body))).toBe(true);
      const dump = await cfssl(['ocspdump', '-db-config', file]);
      expect(dump.stdout).toContain(Buffer.from(body).toString('base64'));
      expect(await readFile(file, 'utf8')).toContain(config.dataSource);
    });
  });
}
