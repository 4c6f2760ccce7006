import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Store } from '@certsmith/cert-store';
import { openStore } from '@certsmith/cert-store';
import { createLocalSignerFromPem } from '@certsmith/signer-local';
import { TestPki } from '@certsmith/test-pki';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../config-file.js';
import { resolveServerOptions } from '../server-options.js';
import type { ServerOptionsInput } from '../server-options.js';
import { revocationOperations, startRevocation } from './server-revocation.js';

const pki = new TestPki();
const ca = pki.root({ CN: 'server revocation CA' }, { key: 'ecdsa-p256', keyLabel: 'srv-rev-ca' });
let dir: string;
let store: Store;

/** Start revocation with these options and config; returns the warnings logged and the operation names. */
async function start(input: ServerOptionsInput, config?: object): Promise<{ warnings: string[]; operations: string[]; mounts: string[] }> {
  const lines: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) }));
  const file = config === undefined ? undefined : join(dir, `config-${lines.length}-${Math.random().toString(36).slice(2)}.json`);
  if (file !== undefined) await writeFile(file, JSON.stringify(config));
  const revocation = await startRevocation({
    options: await resolveServerOptions({ dataDir: dir, ...input }),
    config: await loadServerConfig(file),
    signers: [{ label: 'default', signer: createLocalSignerFromPem(ca.pem, ca.key.pkcs8Pem) }],
    store,
    logger,
  });
  try {
    const operations = revocationOperations(revocation).map((operation) => operation.name);
    await new Promise((resolve) => setImmediate(resolve));
    const warnings = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).filter((line) => line.level === 40).map((line) => line.msg);
    return { warnings, operations, mounts: revocation.mounts.map((mount) => `${mount.name} ${mount.path}`) };
  } finally {
    await revocation.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'certsmith-server-revocation-'));
  store = await openStore({ driver: 'sqlite3', dataSource: join(dir, 'certs.db') }, { sqlite: { thread: false } });
});
afterAll(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

describe('startRevocation', () => {
  it('serves revoke and the CRLs with a store, ocspsign only with a configured responder, and mounts the responder at --ocsp-path', async () => {
    const plain = await start({});
    expect(plain.operations).toEqual(['revoke', 'crl', 'crl_der']);
    expect(plain.mounts).toEqual([]);
    const full = await start({ revocation: { ocspPath: '/ocsp' } }, { signing: { default: { expiry: '1h', usages: ['signing'] } }, revocation: { ocsp: { responders: { default: 'ca' } } } });
    expect(full.operations).toEqual(['ocspsign', 'revoke', 'crl', 'crl_der']);
    expect(full.mounts).toEqual(['ocsp /ocsp']);
  });

  it('warns when revoke is open on an address other machines reach, not on loopback or when protected', async () => {
    const warning = expect.stringContaining("endpoint 'revoke' is open to anyone who can reach this address");
    expect((await start({ address: '0.0.0.0' })).warnings).toEqual([warning]);
    expect((await start({ address: '127.0.0.1' })).warnings).toEqual([]);
    expect((await start({ address: '0.0.0.0', disable: ['revoke'] })).warnings).toEqual([]);
    const keys = { signing: { default: { expiry: '1h', usages: ['signing'] } }, auth_keys: { revoke: { type: 'standard', key: '00112233445566778899aabbccddeeff' } } };
    expect((await start({ address: '0.0.0.0', revocation: { revokeAuthKey: 'revoke' } }, keys)).warnings).toEqual([]);
  });

  it('refuses a revoke auth key the config file does not have (5200)', async () => {
    await expect(start({ revocation: { revokeAuthKey: 'missing' } })).rejects.toMatchObject({ code: 5200, message: expect.stringContaining('there is no auth_keys entry "missing"') });
  });
});
